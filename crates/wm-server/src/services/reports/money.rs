//! The reports about money: what campaigns sent and spent (`campaigns`) and the wallet's
//! movements and balance (`wallet`).

use sea_orm::{ColumnTrait, QueryFilter, QueryOrder};
use uuid::Uuid;
use wm_types::Money;
use wm_types::campaigns::LedgerKind;
use wm_types::reports::*;

use super::query::{count_between, ctx, day_groups};
use crate::db::entities::{campaign, ledger_entry, recipient};
use crate::db::tenant::in_org;
use crate::error::ApiResult;
use crate::state::AppState;

/// `GET /reports/campaigns`.
pub async fn campaigns(
    state: &AppState,
    org: Uuid,
    q: &ReportQuery,
) -> ApiResult<Report<CampaignTotals, CampaignDay>> {
    let conn = &state.db.conn;
    let c = ctx(state, org, q).await?;
    let mut series = c.series(|date| CampaignDay {
        date,
        ..Default::default()
    });
    let mut t = CampaignTotals {
        campaigns: count_between::<campaign::Entity, _>(
            conn,
            (
                campaign::Column::OrganizationId,
                campaign::Column::CreatedAt,
            ),
            org,
            c.start,
            c.end,
        )
        .await?,
        ..Default::default()
    };
    type Pick = fn(&mut CampaignDay) -> &mut u64;
    let steps: [(recipient::Column, Pick); 5] = [
        (recipient::Column::SentAt, |d| &mut d.sent),
        (recipient::Column::DeliveredAt, |d| &mut d.delivered),
        (recipient::Column::ReadAt, |d| &mut d.read),
        (recipient::Column::RepliedAt, |d| &mut d.replied),
        (recipient::Column::FailedAt, |d| &mut d.failed),
    ];
    for (col, pick) in steps {
        let counts = day_groups(conn, in_org::<recipient::Entity>(org), col, &c).await?;
        for (day, n) in series.iter_mut().zip(counts) {
            *pick(day) = n;
        }
    }
    let money = in_org::<ledger_entry::Entity>(org)
        .filter(ledger_entry::Column::CampaignId.is_not_null())
        .filter(c.holds(ledger_entry::Column::CreatedAt))
        .all(conn)
        .await?;
    for e in money {
        if let Some(i) = c.slot(e.created_at) {
            series[i].spend.0 -= e.amount_micros;
        }
    }
    for d in &series {
        t.sent += d.sent;
        t.delivered += d.delivered;
        t.read += d.read;
        t.replied += d.replied;
        t.failed += d.failed;
        t.spend.0 += d.spend.0;
    }
    Ok(Report {
        period: c.period(),
        totals: t,
        series,
    })
}

/// `GET /reports/wallet`.
pub async fn wallet(
    state: &AppState,
    org: Uuid,
    q: &ReportQuery,
) -> ApiResult<Report<WalletTotals, WalletDay>> {
    let conn = &state.db.conn;
    let c = ctx(state, org, q).await?;
    let mut series = c.series(|date| WalletDay {
        date,
        ..Default::default()
    });
    let opening = in_org::<ledger_entry::Entity>(org)
        .filter(ledger_entry::Column::CreatedAt.lt(c.start))
        .order_by_desc(ledger_entry::Column::Seq)
        .one(conn)
        .await?
        .map_or(0, |e| e.balance_after_micros);
    let entries = in_org::<ledger_entry::Entity>(org)
        .filter(c.holds(ledger_entry::Column::CreatedAt))
        .order_by_asc(ledger_entry::Column::Seq)
        .all(conn)
        .await?;
    let mut end_of_day: Vec<Option<i64>> = vec![None; series.len()];
    let mut t = WalletTotals::default();
    for e in entries {
        let Some(i) = c.slot(e.created_at) else {
            continue;
        };
        let d = &mut series[i];
        match e.kind {
            LedgerKind::TopUp => d.top_ups.0 += e.amount_micros,
            LedgerKind::Charge => d.charges.0 -= e.amount_micros,
            LedgerKind::Refund => d.refunds.0 += e.amount_micros,
            _ => {}
        }
        end_of_day[i] = Some(e.balance_after_micros);
    }
    let mut running = opening;
    for (d, end) in series.iter_mut().zip(end_of_day) {
        running = end.unwrap_or(running);
        d.balance = Money(running);
        t.top_ups.0 += d.top_ups.0;
        t.charges.0 += d.charges.0;
        t.refunds.0 += d.refunds.0;
    }
    t.net = Money(t.top_ups.0 - t.charges.0 + t.refunds.0);
    t.balance = crate::services::wallet::balance(conn, org).await?;
    Ok(Report {
        period: c.period(),
        totals: t,
        series,
    })
}
