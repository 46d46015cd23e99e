//! The campaign list's conditions and reads: the filters of `GET /campaigns`, each tab's
//! condition, the tab counts in one query and a page, newest first.

use sea_orm::sea_query::{Expr, Func, Query, SimpleExpr};
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DbErr, EntityTrait, ExprTrait, FromQueryResult,
    QueryFilter, QueryOrder, QuerySelect,
};
use uuid::Uuid;
use wm_types::campaigns::{CampaignStatus, CampaignTab, CampaignTabs, ListCampaignsQuery};
use wm_types::enums::RecipientStatus;

use crate::db::count_if;
use crate::db::entities::{campaign, template};
use crate::db::tallies::{self, Dim};

const DAY_MS: i64 = 86_400_000;

/// The condition of a tab (errors: a stop reason or a failed recipient, from the tallies).
pub fn tab_condition(tab: CampaignTab) -> Condition {
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

/// The filters of the query but the tab: the organisation, category, number, `q`, `days`.
pub fn filters(org: Uuid, q: &ListCampaignsQuery, now: i64) -> Condition {
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

/// A page of campaigns under `base` in `tab`, newest first.
pub async fn page(
    conn: &impl ConnectionTrait,
    base: Condition,
    tab: CampaignTab,
    page: u64,
    page_size: u64,
) -> Result<Vec<campaign::Model>, DbErr> {
    campaign::Entity::find()
        .filter(base)
        .filter(tab_condition(tab))
        .order_by_desc(campaign::Column::CreatedAt)
        .order_by_desc(campaign::Column::Id)
        .offset(crate::db::offset(page, page_size))
        .limit(page_size)
        .all(conn)
        .await
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
pub async fn tab_counts(
    conn: &impl ConnectionTrait,
    base: Condition,
) -> Result<CampaignTabs, DbErr> {
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
