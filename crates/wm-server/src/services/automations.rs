//! Automations: the operator's definitions, the API's list/detail/logs, and the triggers
//! that enqueue runs in the same transaction as the change that causes them.

use crate::db::Unique;

use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, PaginatorTrait,
    QueryFilter, QueryOrder, QuerySelect,
};
use uuid::Uuid;
use wm_core::automations::check_definition;
use wm_core::automations::run::RunResult;
use wm_types::automations::{
    Automation, AutomationList, AutomationRun, AutomationStatus, AutomationSummary,
    CreateAutomation, ListAutomationsQuery, LogsQuery, RunFilter, TriggerType, UpdateAutomation,
};
use wm_types::common::PageMeta;
use wm_types::{Money, Page};

use crate::db::automations::{self, config_of, steps_of};
use crate::db::entities::{automation, automation_run, organization};
use crate::db::tallies::{self, Dim};
use crate::db::tenant::{find_in_org, in_org};
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use crate::views::automations as automation_views;

const NOT_FOUND: &str = "Automation";
const WEEK_MS: i64 = 7 * 86_400_000;

async fn load(conn: &impl ConnectionTrait, org: Uuid, id: Uuid) -> ApiResult<automation::Model> {
    find_in_org::<automation::Entity>(org, id)
        .unique(conn)
        .await?
        .ok_or_else(|| ApiError::not_found(NOT_FOUND))
}

/// `GET /automations`: newest first, with the organisation's figures.
pub async fn list(
    state: &AppState,
    org: Uuid,
    q: &ListAutomationsQuery,
) -> ApiResult<AutomationList> {
    let conn = &state.db.conn;
    let now = state.now_ms();
    let sel = automations::filters(org, q);
    use AutomationStatus as S;
    let rows = sel
        .order_by_desc(automation::Column::CreatedAt)
        .order_by_desc(automation::Column::Id)
        .all(conn)
        .await?;
    let data = automation_views::load(conn, rows, now).await?;
    let count = |s: S| {
        in_org::<automation::Entity>(org)
            .filter(automation::Column::Status.eq(s))
            .count(conn)
    };
    let week = automations::run_totals(conn, org, now - WEEK_MS, now + 1).await?;
    let before = automations::run_totals(conn, org, now - 2 * WEEK_MS, now - WEEK_MS).await?;
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
    automation_views::load(&state.db.conn, vec![a], state.now_ms())
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
    let data = automation_views::load_runs(conn, rows).await?;
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
    let trigger = body.trigger_type.unwrap_or(a.trigger_type);
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
