//! Reports: rows of the period are read once and counted per calendar day in the
//! organisation's time zone; every day of the period has a row.

use crate::db::Unique;
use std::collections::HashMap;

use chrono::{Duration, NaiveDate};
use sea_orm::sea_query::{Alias, Expr, ExprTrait};
use sea_orm::{
    ColumnTrait, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder,
    QuerySelect, Select,
};
use uuid::Uuid;
use wm_core::time::{date_start, local_date};
use wm_types::Money;
use wm_types::campaigns::LedgerKind;
use wm_types::enums::{ConversationStatus, StageCategory};
use wm_types::reports::*;

use crate::db::entities::{
    campaign, contact, conversation, deal, ledger_entry, lifecycle_stage, note, organization,
    recipient, timeline_entry, user,
};
use crate::db::tenant::in_org;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;

/// A report's period and how to place an instant in it.
struct Ctx {
    org: Uuid,
    tz: String,
    days: Vec<NaiveDate>,
    start: i64,
    end: i64,
}

impl Ctx {
    fn slot(&self, ms: i64) -> Option<usize> {
        if ms < self.start || ms >= self.end {
            return None;
        }
        let d = local_date(&self.tz, ms);
        self.days.iter().position(|x| *x == d)
    }

    fn period(&self) -> Period {
        Period {
            from: self.days.first().map(|d| d.to_string()).unwrap_or_default(),
            to: self.days.last().map(|d| d.to_string()).unwrap_or_default(),
            timezone: self.tz.clone(),
        }
    }

    fn series<D>(&self, make: impl Fn(String) -> D) -> Vec<D> {
        self.days.iter().map(|d| make(d.to_string())).collect()
    }
}

async fn ctx(state: &AppState, org: Uuid, q: &ReportQuery) -> ApiResult<Ctx> {
    let o = organization::Entity::find_by_id(org)
        .unique(&state.db.conn)
        .await?
        .ok_or_else(|| ApiError::not_found("Organization"))?;
    let today = local_date(&o.timezone, state.now_ms());
    let (from, to) = wm_core::reports::period(q, today).map_err(ApiError::invalid)?;
    Ok(Ctx {
        org,
        start: date_start(&o.timezone, from),
        end: date_start(&o.timezone, to + Duration::days(1)),
        days: wm_core::reports::days(from, to),
        tz: o.timezone,
    })
}

fn stage_moves(rows: &[timeline_entry::Model]) -> Vec<(i64, String)> {
    rows.iter()
        .filter_map(|r| {
            let v: serde_json::Value = serde_json::from_str(&r.data).ok()?;
            Some((r.at, v.get("to")?.as_str()?.to_owned()))
        })
        .collect()
}

async fn stage_entries(conn: &impl ConnectionTrait, c: &Ctx) -> ApiResult<Vec<(i64, String)>> {
    let rows = in_org::<timeline_entry::Entity>(c.org)
        .filter(timeline_entry::Column::EntryType.eq("stage"))
        .filter(timeline_entry::Column::At.gte(c.start))
        .filter(timeline_entry::Column::At.lt(c.end))
        .all(conn)
        .await?;
    Ok(stage_moves(&rows))
}

/// How many rows of `E` in `org` have `col` in `[from, to)`: one `COUNT`, an index range
/// when (organisation, `col`) is indexed.
async fn count_between<E, C>(
    conn: &impl ConnectionTrait,
    (org_col, col): (C, C),
    org: Uuid,
    from: i64,
    to: i64,
) -> ApiResult<u64>
where
    E: EntityTrait<Column = C>,
    E::Model: Sync,
    C: ColumnTrait,
{
    Ok(E::find()
        .filter(org_col.eq(org))
        .filter(col.gte(from))
        .filter(col.lt(to))
        .count(conn)
        .await?)
}

/// How many rows of `E` fall on each day of the period (by `col`, in the organisation's
/// time zone): one [`count_between`] per day, instead of every row's time brought back and
/// placed by hand (a million contacts made in the period took over a second that way).
async fn day_counts<E, C>(
    conn: &impl ConnectionTrait,
    cols: (C, C),
    org: Uuid,
    c: &Ctx,
) -> ApiResult<Vec<u64>>
where
    E: EntityTrait<Column = C>,
    E::Model: Sync,
    C: ColumnTrait,
{
    let mut bounds: Vec<i64> = c.days.iter().map(|d| date_start(&c.tz, *d)).collect();
    bounds.push(c.end);
    let mut counts = Vec::with_capacity(c.days.len());
    for day in bounds.windows(2) {
        counts.push(count_between::<E, C>(conn, cols, org, day[0], day[1]).await?);
    }
    Ok(counts)
}

/// Every local midnight lies a whole number of these from the period's start: zone offsets
/// and their daylight-saving shifts are multiples of 15 minutes.
const QUARTER_HOUR_MS: i64 = 15 * 60 * 1000;

/// How many of `rows` (already narrowed to the organisation, and to more when asked) have
/// `col` on each day of the period, counted by the database in one pass: rows are grouped by
/// the quarter hour since the period's start (an integer division; a year is 35,040 groups
/// at most), and each quarter hour is placed on its local day here — so a day of 23 or 25
/// hours is right, and only the groups come back, not the time of every row (a campaign to
/// a million people sent a million of them per status).
async fn day_groups<E: EntityTrait>(
    conn: &impl ConnectionTrait,
    rows: Select<E>,
    col: E::Column,
    c: &Ctx,
) -> ApiResult<Vec<u64>> {
    let quarter = Expr::col(col).sub(c.start).div(QUARTER_HOUR_MS);
    let groups: Vec<(i64, i64)> = rows
        .select_only()
        .column_as(quarter, "quarter")
        .column_as(Expr::col(col).count(), "n")
        .filter(col.gte(c.start))
        .filter(col.lt(c.end))
        // By its name: PostgreSQL would not see `(col - $1) / $2` and `(col - $5) / $6` as
        // one expression.
        .group_by(Expr::col(Alias::new("quarter")))
        .into_tuple()
        .all(conn)
        .await?;
    let mut counts = vec![0u64; c.days.len()];
    for (quarter, n) in groups {
        let at = c
            .start
            .saturating_add(quarter.saturating_mul(QUARTER_HOUR_MS));
        if let Some(day) = c.slot(at) {
            counts[day] += u64::try_from(n).unwrap_or(0);
        }
    }
    Ok(counts)
}

/// How many of `rows` each user (`col`, a user id) has: one grouped count.
async fn per_user<E: EntityTrait>(
    conn: &impl ConnectionTrait,
    rows: Select<E>,
    col: E::Column,
) -> ApiResult<HashMap<Uuid, u64>> {
    let groups: Vec<(Option<Uuid>, i64)> = rows
        .select_only()
        .column(col)
        .column_as(Expr::col(col).count(), "n")
        .filter(col.is_not_null())
        .group_by(col)
        .into_tuple()
        .all(conn)
        .await?;
    Ok(groups
        .into_iter()
        .filter_map(|(user, n)| Some((user?, u64::try_from(n).unwrap_or(0))))
        .collect())
}

/// `GET /reports/commercial`.
pub async fn commercial(
    state: &AppState,
    org: Uuid,
    q: &ReportQuery,
) -> ApiResult<Report<CommercialTotals, CommercialDay>> {
    let conn = &state.db.conn;
    let c = ctx(state, org, q).await?;
    let mut series = c.series(|date| CommercialDay {
        date,
        ..Default::default()
    });
    let mut t = CommercialTotals::default();
    let made = day_counts::<contact::Entity, _>(
        conn,
        (contact::Column::OrganizationId, contact::Column::CreatedAt),
        org,
        &c,
    )
    .await?;
    for (day, n) in series.iter_mut().zip(made) {
        day.new_contacts = n;
        t.new_contacts += n;
    }
    let customer_stages: Vec<String> = crate::db::lookups::stages(conn, org)
        .await?
        .into_iter()
        .filter(|s| s.category == StageCategory::Customer)
        .map(|s| s.name)
        .collect();
    for (ms, to) in stage_entries(conn, &c).await? {
        if customer_stages.contains(&to)
            && let Some(i) = c.slot(ms)
        {
            series[i].new_customers += 1;
            t.new_customers += 1;
        }
    }
    let deals = in_org::<deal::Entity>(org)
        .filter(deal::Column::CreatedAt.gte(c.start))
        .filter(deal::Column::CreatedAt.lt(c.end))
        .all(conn)
        .await?;
    for d in deals {
        if let Some(i) = c.slot(d.created_at) {
            series[i].deals_created += 1;
            series[i].deals_value.0 += d.value_micros;
            t.deals_created += 1;
            t.deals_value.0 += d.value_micros;
            if d.status == wm_types::enums::DealStatus::Won {
                t.deals_won += 1;
                t.deals_won_value.0 += d.value_micros;
            }
        }
    }
    Ok(Report {
        period: c.period(),
        totals: t,
        series,
    })
}

/// `GET /reports/lifecycle`.
pub async fn lifecycle(
    state: &AppState,
    org: Uuid,
    q: &ReportQuery,
) -> ApiResult<Report<LifecycleTotals, LifecycleDay>> {
    let conn = &state.db.conn;
    let c = ctx(state, org, q).await?;
    let mut series = c.series(|date| LifecycleDay {
        date,
        ..Default::default()
    });
    let moves = stage_entries(conn, &c).await?;
    let mut entered: HashMap<String, u64> = HashMap::new();
    for (ms, to) in &moves {
        if let Some(i) = c.slot(*ms) {
            series[i].stage_changes += 1;
            *entered.entry(to.clone()).or_default() += 1;
        }
    }
    let stages: Vec<lifecycle_stage::Model> = crate::db::lookups::stages(conn, org).await?;
    let owned: Vec<Option<Uuid>> = in_org::<contact::Entity>(org)
        .select_only()
        .column(contact::Column::LifecycleStageId)
        .into_tuple()
        .all(conn)
        .await?;
    let mut per: HashMap<Option<Uuid>, u64> = HashMap::new();
    for s in owned {
        *per.entry(s).or_default() += 1;
    }
    let mut by_stage: Vec<StageCount> = stages
        .iter()
        .map(|s| StageCount {
            stage_id: Some(s.id),
            stage: s.name.clone(),
            category: Some(s.category.as_str().to_owned()),
            contacts: per.get(&Some(s.id)).copied().unwrap_or(0),
            entered: entered.get(&s.name).copied().unwrap_or(0),
        })
        .collect();
    by_stage.push(StageCount {
        stage_id: None,
        stage: "No stage".into(),
        category: None,
        contacts: per.get(&None).copied().unwrap_or(0),
        entered: 0,
    });
    let totals = LifecycleTotals {
        stage_changes: series.iter().map(|d| d.stage_changes).sum(),
        by_stage,
    };
    Ok(Report {
        period: c.period(),
        totals,
        series,
    })
}

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
        .filter(ledger_entry::Column::CreatedAt.gte(c.start))
        .filter(ledger_entry::Column::CreatedAt.lt(c.end))
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
        .filter(ledger_entry::Column::CreatedAt.gte(c.start))
        .filter(ledger_entry::Column::CreatedAt.lt(c.end))
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

/// `GET /reports/team`.
pub async fn team(
    state: &AppState,
    org: Uuid,
    q: &ReportQuery,
) -> ApiResult<Report<TeamTotals, TeamDay>> {
    let conn = &state.db.conn;
    let c = ctx(state, org, q).await?;
    let mut series = c.series(|date| TeamDay {
        date,
        ..Default::default()
    });
    let users: Vec<user::Model> = crate::db::lookups::users(conn, org).await?;
    let mut members: Vec<TeamMember> = users
        .iter()
        .map(|u| TeamMember {
            user_id: u.id,
            full_name: u.full_name.clone(),
            contacts_owned: 0,
            notes_written: 0,
            conversations_assigned: 0,
            conversations_resolved: 0,
        })
        .collect();
    let owned = per_user(
        conn,
        in_org::<contact::Entity>(org),
        contact::Column::OwnerId,
    )
    .await?;
    let in_period = |col: note::Column| col.gte(c.start).and(col.lt(c.end));
    let written = per_user(
        conn,
        in_org::<note::Entity>(org).filter(in_period(note::Column::CreatedAt)),
        note::Column::AuthorId,
    )
    .await?;
    let assigned = per_user(
        conn,
        in_org::<conversation::Entity>(org)
            .filter(conversation::Column::Status.ne(ConversationStatus::Resolved)),
        conversation::Column::AssignedToUserId,
    )
    .await?;
    let resolved_in_period = conversation::Column::ResolvedAt
        .gte(c.start)
        .and(conversation::Column::ResolvedAt.lt(c.end));
    let resolved = per_user(
        conn,
        in_org::<conversation::Entity>(org).filter(resolved_in_period),
        conversation::Column::AssignedToUserId,
    )
    .await?;
    for m in &mut members {
        let of = |counts: &HashMap<Uuid, u64>| counts.get(&m.user_id).copied().unwrap_or(0);
        m.contacts_owned = of(&owned);
        m.notes_written = of(&written);
        m.conversations_assigned = of(&assigned);
        m.conversations_resolved = of(&resolved);
    }
    let notes = day_groups(
        conn,
        in_org::<note::Entity>(org),
        note::Column::CreatedAt,
        &c,
    )
    .await?;
    // Resolved by the organisation's members (an assignee), per day.
    let member_ids: Vec<Uuid> = members.iter().map(|m| m.user_id).collect();
    let resolved_days = day_groups(
        conn,
        in_org::<conversation::Entity>(org)
            .filter(conversation::Column::AssignedToUserId.is_in(member_ids)),
        conversation::Column::ResolvedAt,
        &c,
    )
    .await?;
    for ((d, notes), resolved) in series.iter_mut().zip(notes).zip(resolved_days) {
        d.notes_written = notes;
        d.conversations_resolved = resolved;
    }
    let totals = TeamTotals {
        notes_written: series.iter().map(|d| d.notes_written).sum(),
        conversations_resolved: series.iter().map(|d| d.conversations_resolved).sum(),
        members,
    };
    Ok(Report {
        period: c.period(),
        totals,
        series,
    })
}

/// `GET /reports/conversations`.
pub async fn conversations(
    state: &AppState,
    org: Uuid,
    q: &ReportQuery,
) -> ApiResult<Report<ConversationTotals, ConversationDay>> {
    let conn = &state.db.conn;
    let c = ctx(state, org, q).await?;
    let mut series = c.series(|date| ConversationDay {
        date,
        ..Default::default()
    });
    let all = || in_org::<conversation::Entity>(org);
    let opened = day_groups(conn, all(), conversation::Column::CreatedAt, &c).await?;
    let resolved = day_groups(conn, all(), conversation::Column::ResolvedAt, &c).await?;
    let mut t = ConversationTotals {
        open_now: all()
            .filter(conversation::Column::Status.eq(ConversationStatus::Open))
            .count(conn)
            .await?,
        ..Default::default()
    };
    for ((d, opened), resolved) in series.iter_mut().zip(opened).zip(resolved) {
        d.opened = opened;
        d.resolved = resolved;
        t.opened += opened;
        t.resolved += resolved;
    }
    // The mean time to resolve those resolved in the period, summed by the database (as
    // BIGINT: PostgreSQL's SUM of a BIGINT is NUMERIC).
    let took = Expr::col(conversation::Column::ResolvedAt)
        .sub(Expr::col(conversation::Column::CreatedAt))
        .sum()
        .cast_as(Alias::new("BIGINT"));
    let (total_ms, n): (Option<i64>, i64) = all()
        .select_only()
        .column_as(took, "took")
        .column_as(Expr::col(conversation::Column::Id).count(), "n")
        .filter(conversation::Column::ResolvedAt.gte(c.start))
        .filter(conversation::Column::ResolvedAt.lt(c.end))
        .into_tuple()
        .one(conn)
        .await?
        .unwrap_or((None, 0));
    if n > 0 {
        let avg = total_ms.unwrap_or(0) / n;
        t.avg_resolution_minutes = u64::try_from(avg / 60_000).unwrap_or(0);
    }
    Ok(Report {
        period: c.period(),
        totals: t,
        series,
    })
}
