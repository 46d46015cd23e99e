//! `GET /campaigns`: tabs, filters, the page and the summary.

use sea_orm::sea_query::{Expr, Func, Query, SimpleExpr};
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DbErr, EntityTrait, ExprTrait, FromQueryResult,
    PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, QueryTrait,
};
use uuid::Uuid;
use wm_types::campaigns::{
    CampaignList, CampaignStatus, CampaignSummary, CampaignTab, CampaignTabs, ListCampaignsQuery,
};
use wm_types::common::PageMeta;
use wm_types::enums::RecipientStatus;
use wm_types::{Money, Timestamp};

use crate::db::count_if;
use crate::db::entities::{campaign, template};
use crate::db::tallies::{self, Dim};
use crate::db::tenant::in_org;
use crate::error::ApiResult;
use crate::state::AppState;

use super::DAY_MS;
use super::view::views;

pub(super) fn tab_condition(tab: CampaignTab) -> Condition {
    use CampaignStatus as S;
    let statuses =
        |v: &[S]| Condition::all().add(campaign::Column::Status.is_in(v.iter().copied()));
    match tab {
        CampaignTab::Sending => statuses(&[S::Sending, S::Paused]),
        CampaignTab::Scheduled => statuses(&[S::Scheduled]),
        CampaignTab::Drafts => statuses(&[S::Draft]),
        CampaignTab::Finished => statuses(&[S::Completed]),
        CampaignTab::Errors => Condition::any()
            .add(campaign::Column::StopReason.is_not_null())
            .add(tallies::positive(
                "campaigns",
                "id",
                Dim::RecipientStatus,
                RecipientStatus::Failed.as_str(),
            )),
        CampaignTab::All => Condition::all(),
    }
}

pub(super) fn filters(org: Uuid, q: &ListCampaignsQuery, now: i64) -> Condition {
    let mut c = Condition::all().add(campaign::Column::OrganizationId.eq(org));
    if let Some(cat) = q.category {
        c = c.add(
            campaign::Column::TemplateId.in_subquery(
                Query::select()
                    .column(template::Column::Id)
                    .from(template::Entity)
                    .and_where(template::Column::OrganizationId.eq(org))
                    .and_where(template::Column::Category.eq(cat))
                    .to_owned(),
            ),
        );
    }
    if let Some(p) = q.phone_number_id {
        c = c.add(campaign::Column::PhoneNumberId.eq(p));
    }
    if let Some(text) = q.q.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
        c = c.add(
            Expr::expr(Func::lower(Expr::col(campaign::Column::Name)))
                .like(crate::db::like_contains(text)),
        );
    }
    if let Some(days) = q.days {
        c = c.add(campaign::Column::CreatedAt.gte(now - i64::from(days) * DAY_MS));
    }
    c
}

/// `GET /campaigns`: newest first, with tab counts under the other filters and a summary of
/// the campaigns created in the last `days` (30 by default).
pub async fn list(state: &AppState, org: Uuid, q: &ListCampaignsQuery) -> ApiResult<CampaignList> {
    let conn = &state.db.conn;
    let now = state.now_ms();
    let base = filters(org, q, now);
    let tabs = tab_counts(conn, base.clone()).await?;
    let tab = q.tab.unwrap_or_default();
    let total = match tab {
        CampaignTab::All => tabs.all,
        CampaignTab::Sending => tabs.sending,
        CampaignTab::Scheduled => tabs.scheduled,
        CampaignTab::Drafts => tabs.drafts,
        CampaignTab::Errors => tabs.errors,
        CampaignTab::Finished => tabs.finished,
    };
    let (page, page_size) = (q.page.unwrap_or(1), q.page_size.unwrap_or(20));
    let rows = campaign::Entity::find()
        .filter(base)
        .filter(tab_condition(tab))
        .order_by_desc(campaign::Column::CreatedAt)
        .order_by_desc(campaign::Column::Id)
        .offset(crate::db::offset(page, page_size))
        .limit(page_size)
        .all(conn)
        .await?;
    let data = views(conn, &rows, None).await?;
    let summary = summary(state, org, q.days.unwrap_or(30), now).await?;
    Ok(CampaignList {
        data,
        meta: PageMeta::new(page, page_size, total),
        tabs,
        summary,
    })
}

#[derive(Debug, FromQueryResult)]
struct TabCounts {
    all: i64,
    sending: i64,
    scheduled: i64,
    drafts: i64,
    errors: i64,
    finished: i64,
}

/// The six tab counts under the other filters `base`, in one query (a conditional sum per
/// tab) rather than one COUNT each.
async fn tab_counts(conn: &impl ConnectionTrait, base: Condition) -> Result<CampaignTabs, DbErr> {
    let tab = |t: CampaignTab| count_if(tab_condition(t));
    let n = |v: i64| u64::try_from(v).unwrap_or(0);
    Ok(campaign::Entity::find()
        .select_only()
        .filter(base)
        .column_as(
            SimpleExpr::from(Func::count(Expr::col(campaign::Column::Id))),
            "all",
        )
        .column_as(tab(CampaignTab::Sending), "sending")
        .column_as(tab(CampaignTab::Scheduled), "scheduled")
        .column_as(tab(CampaignTab::Drafts), "drafts")
        .column_as(tab(CampaignTab::Errors), "errors")
        .column_as(tab(CampaignTab::Finished), "finished")
        .into_model::<TabCounts>()
        .one(conn)
        .await?
        .map(|t| CampaignTabs {
            all: n(t.all),
            sending: n(t.sending),
            scheduled: n(t.scheduled),
            drafts: n(t.drafts),
            errors: n(t.errors),
            finished: n(t.finished),
        })
        .unwrap_or_default())
}

pub(super) async fn summary(
    state: &AppState,
    org: Uuid,
    days: u32,
    now: i64,
) -> ApiResult<CampaignSummary> {
    let conn = &state.db.conn;
    let since = now - i64::from(days) * DAY_MS;
    let since_q = || {
        in_org::<campaign::Entity>(org)
            .select_only()
            .column(campaign::Column::Id)
            .filter(campaign::Column::CreatedAt.gte(since))
    };
    let campaigns = since_q().count(conn).await?;
    let counted = crate::db::campaigns::count_over(conn, since_q().into_query()).await?;
    let (funnel, spend) = (counted.stats, counted.cost_micros);
    let pct = |n: u64| {
        if funnel.sent == 0 {
            0.0
        } else {
            (n as f64 * 1000.0 / funnel.sent as f64).round() / 10.0
        }
    };
    Ok(CampaignSummary {
        days,
        since: Timestamp::from_millis(since).0.date_naive().to_string(),
        campaigns,
        sent: funnel.sent,
        delivered_pct: pct(funnel.delivered),
        read_pct: pct(funnel.read),
        replies: funnel.replied,
        replies_pct: pct(funnel.replied),
        spend: Money(spend),
        spend_per_message: Money(if funnel.sent == 0 {
            0
        } else {
            spend / i64::try_from(funnel.sent).unwrap_or(1)
        }),
    })
}
