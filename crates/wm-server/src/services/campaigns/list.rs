//! `GET /campaigns`: the page, the tab counts and the summary, read through
//! [`crate::db::campaigns::list`] (filters, tabs, page) and the tallies.

use sea_orm::{ColumnTrait, PaginatorTrait, QueryFilter, QuerySelect, QueryTrait};
use uuid::Uuid;
use wm_types::campaigns::{CampaignList, CampaignSummary, CampaignTab, ListCampaignsQuery};
use wm_types::common::PageMeta;
use wm_types::{Money, Timestamp};

use crate::db::campaigns::list;
use crate::db::entities::campaign;
use crate::db::tenant::in_org;
use crate::error::ApiResult;
use crate::state::AppState;

use crate::views::campaigns as campaign_views;

const DAY_MS: i64 = 86_400_000;

/// `GET /campaigns`: newest first, with tab counts under the other filters and a summary of
/// the campaigns created in the last `days` (30 by default).
pub async fn list(state: &AppState, org: Uuid, q: &ListCampaignsQuery) -> ApiResult<CampaignList> {
    let conn = &state.db.conn;
    let now = state.now_ms();
    let base = list::filters(org, q, now);
    let tabs = list::tab_counts(conn, base.clone()).await?;
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
    let rows = list::page(conn, base, tab, page, page_size).await?;
    let data = campaign_views::load(conn, &rows, false).await?;
    let summary = summary(state, org, q.days.unwrap_or(30), now).await?;
    Ok(CampaignList {
        data,
        meta: PageMeta::new(page, page_size, total),
        tabs,
        summary,
    })
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
