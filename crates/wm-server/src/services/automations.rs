//! Automations: the operator's definitions, the API's list/detail/logs, and the triggers
//! that enqueue runs in the same transaction as the change that causes them.

use crate::db::Unique;
use std::collections::HashMap;

use sea_orm::sea_query::{Expr, Func, SimpleExpr};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, ExprTrait, FromQueryResult,
    PaginatorTrait, QueryFilter, QueryOrder, QuerySelect,
};
use uuid::Uuid;
use wm_core::automations::run::RunResult;
use wm_core::automations::{check_definition, step_summary, trigger_label};
use wm_types::automations::{
    Automation, AutomationList, AutomationRun, AutomationStatus, AutomationSummary, AutomationTab,
    CreateAutomation, ListAutomationsQuery, LogsQuery, RunFilter, RunStep, Step, TriggerType,
    UpdateAutomation,
};
use wm_types::campaigns::RecipientContact;
use wm_types::common::PageMeta;
use wm_types::{Money, Page, Timestamp};

use crate::db::entities::{automation, automation_run, contact, organization};
use crate::db::tallies::{self, Dim};
use crate::db::tenant::{find_in_org, in_org};
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;

const NOT_FOUND: &str = "Automation";
const WEEK_MS: i64 = 7 * 86_400_000;

fn steps_of(a: &automation::Model) -> Vec<Step> {
    crate::db::stored::json("automations.steps", a.id, &a.steps)
}

fn config_of(a: &automation::Model) -> serde_json::Map<String, serde_json::Value> {
    crate::db::stored::json("automations.trigger_config", a.id, &a.trigger_config)
}

fn trigger_of(a: &automation::Model) -> TriggerType {
    a.trigger_type
}

fn view(a: automation::Model, runs7d: u64) -> Automation {
    let steps = steps_of(&a);
    let config = config_of(&a);
    let trigger = trigger_of(&a);
    let template_key = wm_core::automations::template_key(a.template_key.as_deref(), &steps);
    Automation {
        id: a.id,
        organization_id: a.organization_id,
        created_by_user_id: a.created_by_user_id,
        name: a.name,
        status: a.status,
        trigger_label: trigger_label(trigger, &config),
        steps_summary: steps.iter().map(step_summary).collect(),
        trigger_type: trigger,
        trigger_config: config,
        steps,
        paused_reason: a.paused_reason,
        failure_count: u32::try_from(a.failure_count).unwrap_or(0),
        last_run_at: a.last_run_at.map(Timestamp::from_millis),
        template_key,
        created_at: Timestamp::from_millis(a.created_at),
        updated_at: Timestamp::from_millis(a.updated_at),
        runs7d,
    }
}

#[derive(FromQueryResult)]
struct RunCount {
    automation_id: Uuid,
    n: i64,
}

async fn runs_since(
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

async fn views(
    conn: &impl ConnectionTrait,
    rows: Vec<automation::Model>,
    now: i64,
) -> ApiResult<Vec<Automation>> {
    let runs = runs_since(conn, rows.iter().map(|a| a.id).collect(), now - WEEK_MS).await?;
    Ok(rows
        .into_iter()
        .map(|a| {
            let n = runs.get(&a.id).copied().unwrap_or(0);
            view(a, n)
        })
        .collect())
}

async fn load(conn: &impl ConnectionTrait, org: Uuid, id: Uuid) -> ApiResult<automation::Model> {
    find_in_org::<automation::Entity>(org, id)
        .unique(conn)
        .await?
        .ok_or_else(|| ApiError::not_found(NOT_FOUND))
}

#[derive(FromQueryResult)]
struct Totals {
    runs: i64,
    templates: Option<i64>,
    cost: Option<i64>,
}

/// `GET /automations`: newest first, with the organisation's figures.
pub async fn list(
    state: &AppState,
    org: Uuid,
    q: &ListAutomationsQuery,
) -> ApiResult<AutomationList> {
    let conn = &state.db.conn;
    let now = state.now_ms();
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
    let rows = sel
        .order_by_desc(automation::Column::CreatedAt)
        .order_by_desc(automation::Column::Id)
        .all(conn)
        .await?;
    let data = views(conn, rows, now).await?;
    let count = |s: S| {
        in_org::<automation::Entity>(org)
            .filter(automation::Column::Status.eq(s))
            .count(conn)
    };
    let totals = |from: i64, to: i64| {
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
            .into_model::<Totals>()
            .one(conn)
    };
    let week = totals(now - WEEK_MS, now + 1).await?;
    let before = totals(now - 2 * WEEK_MS, now - WEEK_MS).await?;
    let failures = in_org::<automation_run::Entity>(org)
        .filter(automation_run::Column::Result.eq("failed"))
        .filter(automation_run::Column::StartedAt.gte(now - WEEK_MS));
    let failure_example = failures
        .clone()
        .order_by_desc(automation_run::Column::FinishedAt)
        .one(conn)
        .await?
        .and_then(|r| r.error);
    let currency = organization::Entity::find_by_id(org)
        .unique(conn)
        .await?
        .map(|o| o.currency)
        .unwrap_or_default();
    let n = |v: Option<i64>| u64::try_from(v.unwrap_or(0)).unwrap_or(0);
    let summary = AutomationSummary {
        active: count(S::Active).await?,
        paused_by_failure: count(S::PausedByFailure).await?,
        paused: count(S::Paused).await?,
        drafts: count(S::Draft).await?,
        runs7d: n(week.as_ref().map(|t| t.runs)),
        runs7d_previous: n(before.as_ref().map(|t| t.runs)),
        templates_sent7d: n(week.as_ref().and_then(|t| t.templates)),
        templates_cost7d: Money(week.as_ref().and_then(|t| t.cost).unwrap_or(0)),
        currency,
        failures7d: failures.count(conn).await?,
        failure_example,
    };
    Ok(AutomationList { data, summary })
}

/// `GET /automations/{id}`.
pub async fn get(state: &AppState, org: Uuid, id: Uuid) -> ApiResult<Automation> {
    let a = load(&state.db.conn, org, id).await?;
    views(&state.db.conn, vec![a], state.now_ms())
        .await?
        .pop()
        .ok_or_else(|| ApiError::not_found(NOT_FOUND))
}

/// `GET /automations/{id}/logs`: runs, newest first, with the `result` filter.
pub async fn logs(
    state: &AppState,
    org: Uuid,
    id: Uuid,
    q: &LogsQuery,
) -> ApiResult<Page<AutomationRun>> {
    let conn = &state.db.conn;
    load(conn, org, id).await?;
    let mut sel =
        in_org::<automation_run::Entity>(org).filter(automation_run::Column::AutomationId.eq(id));
    let result = q.result.and_then(RunFilter::result);
    if let Some(r) = result {
        sel = sel.filter(automation_run::Column::Result.eq(r));
    }
    // The automation's runs by result are tallied (`db::tallies`): a log of a million runs
    // counts as fast as one of ten.
    let total = tallies::read(conn, Dim::RunResult, &[id])
        .await?
        .into_iter()
        .filter(|t| result.is_none_or(|r| r == t.key))
        .map(|t| u64::try_from(t.n).unwrap_or(0))
        .sum();
    let (page, page_size) = (q.page.unwrap_or(1), q.page_size.unwrap_or(20));
    let rows = sel
        .order_by_desc(automation_run::Column::StartedAt)
        .order_by_desc(automation_run::Column::Id)
        .offset(crate::db::offset(page, page_size))
        .limit(page_size)
        .all(conn)
        .await?;
    let ids: Vec<Uuid> = rows.iter().filter_map(|r| r.contact_id).collect();
    let contacts = crate::db::by_id::<contact::Entity>(conn, ids, |c| c.id).await?;
    let data = rows
        .into_iter()
        .map(|r| AutomationRun {
            id: r.id,
            automation_id: r.automation_id,
            contact: r.contact_id.map(|id| {
                let c = contacts.get(&id);
                RecipientContact {
                    id,
                    full_name: c.and_then(|c| c.full_name.clone()),
                    primary_phone: c.and_then(|c| c.primary_phone.clone()),
                }
            }),
            result: r.result,
            steps: crate::db::stored::json::<Vec<RunStep>>(
                "automation_runs.steps_log",
                r.id,
                &r.steps_log,
            ),
            error: r.error,
            started_at: Timestamp::from_millis(r.started_at),
            finished_at: r.finished_at.map(Timestamp::from_millis),
        })
        .collect();
    Ok(Page {
        data,
        meta: PageMeta::new(page, page_size, total),
    })
}

/// The operator's creation (DRAFT unless said otherwise).
pub async fn create(state: &AppState, org: Uuid, body: CreateAutomation) -> ApiResult<Automation> {
    check_definition(body.trigger_type, &body.trigger_config, &body.steps)
        .map_err(ApiError::Validation)?;
    let now = state.now_ms();
    let txn = state.db.write().await?;
    if crate::db::lookups::user(&*txn, org, body.created_by_user_id)
        .await?
        .is_none()
    {
        return Err(ApiError::invalid(
            "createdByUserId must be a user of this organization",
        ));
    }
    let row = automation::Entity::insert(automation::ActiveModel {
        id: Set(Uuid::now_v7()),
        organization_id: Set(org),
        created_by_user_id: Set(body.created_by_user_id),
        name: Set(body.name.trim().to_owned()),
        status: Set(body.status.unwrap_or(AutomationStatus::Draft)),
        trigger_type: Set(body.trigger_type),
        trigger_config: Set(serde_json::Value::Object(body.trigger_config).to_string()),
        steps: Set(serde_json::to_string(&body.steps).map_err(|e| ApiError::Internal(e.into()))?),
        template_key: Set(body.template_key),
        paused_reason: Set(None),
        failure_count: Set(0),
        last_run_at: Set(None),
        created_at: Set(now),
        updated_at: Set(now),
    })
    .exec_with_returning(&*txn)
    .await?;
    txn.commit().await?;
    get(state, org, row.id).await
}

/// The operator's change; `status: ACTIVE` on one paused by failure resets its count.
pub async fn update(
    state: &AppState,
    org: Uuid,
    id: Uuid,
    body: UpdateAutomation,
) -> ApiResult<Automation> {
    let now = state.now_ms();
    let txn = state.db.write().await?;
    let a = load(&*txn, org, id).await?;
    let trigger = body.trigger_type.unwrap_or_else(|| trigger_of(&a));
    let config = body.trigger_config.clone().unwrap_or_else(|| config_of(&a));
    let steps = body.steps.clone().unwrap_or_else(|| steps_of(&a));
    check_definition(trigger, &config, &steps).map_err(ApiError::Validation)?;
    let mut am: automation::ActiveModel = a.clone().into();
    if let Some(n) = body.name {
        am.name = Set(n.trim().to_owned());
    }
    if let Some(s) = body.status {
        am.status = Set(s);
        if s == AutomationStatus::Active {
            am.failure_count = Set(0);
            am.paused_reason = Set(None);
        }
    }
    am.trigger_type = Set(trigger);
    am.trigger_config = Set(serde_json::Value::Object(config).to_string());
    am.steps = Set(serde_json::to_string(&steps).map_err(|e| ApiError::Internal(e.into()))?);
    if let Some(k) = body.template_key {
        am.template_key = Set(k);
    }
    am.updated_at = Set(now);
    automation::Entity::update(am).exec(&*txn).await?;
    txn.commit().await?;
    get(state, org, id).await
}

async fn active_with(
    conn: &impl ConnectionTrait,
    org: Uuid,
    trigger: TriggerType,
) -> Result<Vec<automation::Model>, DbErr> {
    in_org::<automation::Entity>(org)
        .filter(automation::Column::Status.eq(AutomationStatus::Active))
        .filter(automation::Column::TriggerType.eq(trigger))
        .all(conn)
        .await
}

/// Enqueues a run (once per `trigger_key` when one is given).
pub async fn enqueue(
    conn: &impl ConnectionTrait,
    a: &automation::Model,
    contact: Option<Uuid>,
    trigger_key: Option<String>,
    now: i64,
) -> Result<(), DbErr> {
    let insert = automation_run::Entity::insert(automation_run::ActiveModel {
        id: Set(Uuid::now_v7()),
        organization_id: Set(a.organization_id),
        automation_id: Set(a.id),
        contact_id: Set(contact),
        result: Set(RunResult::Waiting.as_str().to_owned()),
        next_step: Set(0),
        resume_at: Set(Some(now)),
        locked_until: Set(None),
        steps_log: Set("[]".to_owned()),
        error: Set(None),
        trigger_key: Set(trigger_key),
        templates_sent: Set(0),
        cost_micros: Set(0),
        started_at: Set(now),
        finished_at: Set(None),
    });
    insert
        .on_conflict_do_nothing_on([
            automation_run::Column::AutomationId,
            automation_run::Column::TriggerKey,
        ])
        .exec(conn)
        .await?;
    Ok(())
}

/// A contact entered a stage (not by an automation): LIFECYCLE_STAGE_ENTERED runs.
pub async fn on_stage_entered(
    conn: &impl ConnectionTrait,
    org: Uuid,
    contact: Uuid,
    stage: &str,
    now: i64,
) -> Result<(), DbErr> {
    for a in active_with(conn, org, TriggerType::LifecycleStageEntered).await? {
        let wanted = config_of(&a)
            .get("stage")
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        if wanted.trim().eq_ignore_ascii_case(stage.trim()) {
            enqueue(conn, &a, Some(contact), None, now).await?;
        }
    }
    Ok(())
}

/// A contact replied to a campaign message: CAMPAIGN_REPLIED runs (once per message).
pub async fn on_campaign_replied(
    conn: &impl ConnectionTrait,
    org: Uuid,
    contact: Uuid,
    campaign: Uuid,
    recipient: Uuid,
    now: i64,
) -> Result<(), DbErr> {
    for a in active_with(conn, org, TriggerType::CampaignReplied).await? {
        let only = config_of(&a)
            .get("campaignId")
            .and_then(|v| v.as_str().map(str::to_owned));
        if only.is_none_or(|c| c == campaign.to_string()) {
            enqueue(
                conn,
                &a,
                Some(contact),
                Some(format!("reply:{recipient}")),
                now,
            )
            .await?;
        }
    }
    Ok(())
}

/// The wallet went from `before` to `after`: WALLET_LOW_BALANCE runs for every threshold it
/// crossed downwards.
pub async fn on_balance_change(
    conn: &impl ConnectionTrait,
    org: Uuid,
    before: i64,
    after: i64,
    now: i64,
) -> Result<(), DbErr> {
    if after >= before {
        return Ok(());
    }
    for a in active_with(conn, org, TriggerType::WalletLowBalance).await? {
        let threshold = config_of(&a)
            .get("threshold")
            .and_then(|v| v.as_f64())
            .and_then(Money::from_decimal)
            .map_or(0, |m| m.0);
        if before >= threshold && after < threshold {
            enqueue(conn, &a, None, Some(format!("low:{now}:{after}")), now).await?;
        }
    }
    Ok(())
}
