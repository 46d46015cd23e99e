//! Automation queries and the stored fields of an automation row.

use std::collections::HashMap;

use sea_orm::sea_query::{Expr, Func, SimpleExpr};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DbErr, EntityTrait, FromQueryResult, QueryFilter, QuerySelect,
};
use sea_orm::{ExprTrait, Select};
use uuid::Uuid;
use wm_types::automations::{AutomationStatus, AutomationTab, ListAutomationsQuery, Step};

use crate::db::tenant::in_org;

use crate::db::entities::{automation, automation_run};

/// An automation's stored steps (logged, counted and empty when corrupt).
pub fn steps_of(a: &automation::Model) -> Vec<Step> {
    crate::db::stored::json("automations.steps", a.id, &a.steps)
}

/// An automation's stored trigger configuration (logged, counted and empty when corrupt).
pub fn config_of(a: &automation::Model) -> serde_json::Map<String, serde_json::Value> {
    crate::db::stored::json("automations.trigger_config", a.id, &a.trigger_config)
}

#[derive(FromQueryResult)]
struct RunCount {
    automation_id: Uuid,
    n: i64,
}

/// Runs started since `since`, by automation, in one grouped query.
pub async fn runs_since(
    conn: &impl ConnectionTrait,
    ids: Vec<Uuid>,
    since: i64,
) -> Result<HashMap<Uuid, u64>, DbErr> {
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    Ok(automation_run::Entity::find()
        .select_only()
        .column(automation_run::Column::AutomationId)
        .column_as(
            SimpleExpr::from(Func::count(Expr::col(automation_run::Column::Id))),
            "n",
        )
        .filter(automation_run::Column::AutomationId.is_in(ids))
        .filter(automation_run::Column::StartedAt.gte(since))
        .group_by(automation_run::Column::AutomationId)
        .into_model::<RunCount>()
        .all(conn)
        .await?
        .into_iter()
        .map(|r| (r.automation_id, u64::try_from(r.n).unwrap_or(0)))
        .collect())
}

/// `GET /automations`'s filters and tab: the rows it lists, unsorted.
pub fn filters(org: Uuid, q: &ListAutomationsQuery) -> Select<automation::Entity> {
    let mut sel = in_org::<automation::Entity>(org);
    use AutomationStatus as S;
    match q.tab.unwrap_or_default() {
        AutomationTab::Active => sel = sel.filter(automation::Column::Status.eq(S::Active)),
        AutomationTab::Paused => {
            sel = sel.filter(automation::Column::Status.is_in([S::Paused, S::PausedByFailure]))
        }
        AutomationTab::Drafts => sel = sel.filter(automation::Column::Status.eq(S::Draft)),
        AutomationTab::All => {}
    }
    if q.include_archived != Some(true) {
        sel = sel.filter(automation::Column::Status.ne(S::Archived));
    }
    if let Some(t) = q.trigger {
        sel = sel.filter(automation::Column::TriggerType.eq(t));
    }
    if let Some(text) = q.q.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
        sel = sel.filter(
            Expr::expr(Func::lower(Expr::col(automation::Column::Name)))
                .like(crate::db::like_contains(text)),
        );
    }
    sel
}

/// An organisation's runs started in `[from, to)`: how many, templates they sent and what
/// those cost.
#[derive(Debug, FromQueryResult)]
pub struct RunTotals {
    /// Runs started.
    pub runs: i64,
    /// Templates they sent.
    pub templates: Option<i64>,
    /// What those cost (micro-units).
    pub cost: Option<i64>,
}

/// The organisation's run totals over `[from, to)`, in one aggregate query.
pub async fn run_totals(
    conn: &impl ConnectionTrait,
    org: Uuid,
    from: i64,
    to: i64,
) -> Result<Option<RunTotals>, DbErr> {
    automation_run::Entity::find()
        .select_only()
        .column_as(
            SimpleExpr::from(Func::count(Expr::col(automation_run::Column::Id))),
            "runs",
        )
        .column_as(
            SimpleExpr::from(Func::cast_as(
                Func::sum(Expr::col(automation_run::Column::TemplatesSent)),
                "BIGINT",
            )),
            "templates",
        )
        .column_as(
            SimpleExpr::from(Func::cast_as(
                Func::sum(Expr::col(automation_run::Column::CostMicros)),
                "BIGINT",
            )),
            "cost",
        )
        .filter(automation_run::Column::OrganizationId.eq(org))
        .filter(automation_run::Column::StartedAt.gte(from))
        .filter(automation_run::Column::StartedAt.lt(to))
        .into_model::<RunTotals>()
        .one(conn)
        .await
}
