//! The automation worker: enqueues NO_RESPONSE_DAYS runs, then executes due runs step by
//! step (conditions, actions, waits), logging every step. A SEND_TEMPLATE charges the wallet
//! and goes through the messaging platform like a campaign message; the charge is recorded
//! in the run before the platform is called, so a crashed run resumed later neither charges
//! nor (thanks to the idempotency key) sends twice. Five consecutive failed runs pause the
//! automation (PAUSED_BY_FAILURE).

use crate::db::Unique;
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveValue::Set, ColumnTrait, Condition, EntityTrait, ExprTrait, QueryFilter, QueryOrder,
    QuerySelect,
};
use tracing::Instrument;
use uuid::Uuid;
use wm_core::automations::run::{self, RunResult, StepOutcome, StepPlan, Streak, Then};
use wm_core::automations::{ContactFacts, FAILURES_TO_PAUSE};
use wm_types::Timestamp;
use wm_types::automations::{AutomationStatus, RunStep, Step, TriggerType};
use wm_types::enums::RecipientStatus;
use wm_types::events::{AutomationRunData, EventKind};

use crate::db::entities::{automation, automation_run, contact, identity, recipient};
use crate::observe::health::{Worker, pass};
use crate::observe::metrics;
use crate::services::automations::enqueue;
use crate::services::contacts;
use crate::state::AppState;

mod send;

const LEASE_MS: i64 = 15_000;
const DAY_MS: i64 = 86_400_000;

/// What one pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Runs executed (to an end or a wait).
    pub runs: usize,
    /// Runs that failed.
    pub failed: usize,
}

/// The automation worker.
#[derive(Clone)]
pub struct AutomationWorker {
    state: AppState,
}

/// Templates sent and their cost so far in a run.
#[derive(Debug, Clone, Copy)]
struct Tally {
    templates: i32,
    cost: i64,
}

impl AutomationWorker {
    /// A worker over the server's state.
    pub fn new(state: AppState) -> Self {
        AutomationWorker { state }
    }

    /// Runs until cancelled.
    pub async fn run(self, cancel: tokio_util::sync::CancellationToken) {
        self.state
            .health
            .started(Worker::Automations, self.state.now_ms());
        loop {
            // A failed pass is logged by `pass`; the next one tries again.
            let _ = self.run_once().await;
            tokio::select! {
                _ = cancel.cancelled() => return,
                _ = tokio::time::sleep(super::poll::POLL) => {}
            }
        }
    }

    /// One pass: NO_RESPONSE_DAYS scan, then every due run; in a `worker_pass` span, timed
    /// and heartbeat-recorded.
    pub async fn run_once(&self) -> anyhow::Result<Outcome> {
        pass(&self.state, Worker::Automations, self.steps()).await
    }

    async fn steps(&self) -> anyhow::Result<Outcome> {
        self.scan_no_response().await?;
        let mut out = Outcome::default();
        loop {
            let due = self.claim().await?;
            if due.is_empty() {
                return Ok(out);
            }
            for run in due {
                let span = tracing::info_span!(
                    "automation_run",
                    run_id = %run.id,
                    automation_id = %run.automation_id,
                );
                let failed = self.execute(run).instrument(span).await?;
                self.state
                    .health
                    .beat(Worker::Automations, self.state.now_ms());
                out.runs += 1;
                out.failed += usize::from(failed);
            }
        }
    }

    async fn scan_no_response(&self) -> anyhow::Result<()> {
        let conn = &self.state.db.conn;
        let now = self.state.now_ms();
        let autos = automation::Entity::find()
            .filter(automation::Column::Status.eq(AutomationStatus::Active))
            .filter(automation::Column::TriggerType.eq(TriggerType::NoResponseDays))
            .all(conn)
            .await?;
        for a in autos {
            let cfg: serde_json::Map<String, serde_json::Value> =
                crate::db::stored::json("automations.trigger_config", a.id, &a.trigger_config);
            let days = cfg.get("days").and_then(|d| d.as_i64()).unwrap_or(0);
            if days <= 0 {
                continue;
            }
            let stale = recipient::Entity::find()
                .filter(recipient::Column::OrganizationId.eq(a.organization_id))
                .filter(recipient::Column::Status.is_in([
                    RecipientStatus::Sent,
                    RecipientStatus::Delivered,
                    RecipientStatus::Read,
                ]))
                .filter(recipient::Column::SentAt.lte(now - days * DAY_MS))
                .filter(recipient::Column::SentAt.gte(a.created_at - days * DAY_MS))
                .limit(1000)
                .all(conn)
                .await?;
            if stale.is_empty() {
                continue;
            }
            let txn = self.state.db.write().await?;
            for r in stale {
                enqueue(
                    &*txn,
                    &a,
                    Some(r.contact_id),
                    Some(format!("noreply:{}", r.id)),
                    now,
                )
                .await?;
            }
            txn.commit().await?;
        }
        Ok(())
    }

    async fn claim(&self) -> anyhow::Result<Vec<automation_run::Model>> {
        let now = self.state.now_ms();
        let txn = self.state.db.write().await?;
        let q = automation_run::Entity::find()
            .filter(automation_run::Column::Result.eq(RunResult::Waiting.as_str()))
            .filter(automation_run::Column::ResumeAt.lte(now))
            .filter(
                Condition::any()
                    .add(automation_run::Column::LockedUntil.is_null())
                    .add(automation_run::Column::LockedUntil.lte(now)),
            )
            .order_by_asc(automation_run::Column::ResumeAt)
            .limit(100);
        let due = crate::db::skip_locked(&self.state.db, q).all(&*txn).await?;
        if !due.is_empty() {
            automation_run::Entity::update_many()
                .col_expr(
                    automation_run::Column::LockedUntil,
                    Expr::val(now + LEASE_MS),
                )
                .filter(
                    automation_run::Column::Id.is_in(due.iter().map(|r| r.id).collect::<Vec<_>>()),
                )
                .exec(&*txn)
                .await?;
        }
        txn.commit().await?;
        Ok(due)
    }

    /// Executes a run from its next step, as wm-core's [`run`] rules say; returns whether it
    /// failed.
    async fn execute(&self, run: automation_run::Model) -> anyhow::Result<bool> {
        let conn = &self.state.db.conn;
        let mut log: Vec<RunStep> =
            crate::db::stored::json("automation_runs.steps_log", run.id, &run.steps_log);
        let mut tally = Tally {
            templates: run.templates_sent,
            cost: run.cost_micros,
        };
        let a = automation::Entity::find_by_id(run.automation_id)
            .unique(conn)
            .await?;
        let a = match a {
            Some(a) if a.status == AutomationStatus::Active => a,
            other => {
                let why = run::not_runnable(other.as_ref().map(|a| a.status.as_str()));
                let end = (RunResult::Skipped, Some(why));
                return self.finish(&run, other.as_ref(), log, end, tally).await;
            }
        };
        let steps: Vec<Step> = crate::db::stored::json("automations.steps", a.id, &a.steps);
        let start = usize::try_from(run.next_step).unwrap_or(0);
        for (i, step) in steps.iter().enumerate().skip(start) {
            let outcome = self.carry_out(&run, &a, i, step, &mut log).await?;
            if let StepOutcome::Sent { price_micros, .. } = &outcome {
                tally.templates += 1;
                tally.cost += price_micros;
            }
            let now = self.state.now_ms();
            let (word, detail, then) = run::after(outcome);
            log.push(RunStep {
                index: i as u32,
                step_type: step.step_type,
                kind: step.config.kind,
                outcome: word.to_owned(),
                detail,
                at: Timestamp::from_millis(now),
            });
            match then {
                Then::Continue => {}
                Then::ResumeAfter(ms) => {
                    self.save_wait(&run, i + 1, now.saturating_add(ms), &log, tally)
                        .await?;
                    metrics::automation_run(RunResult::Waiting.as_str());
                    tracing::info!(
                        result = "waiting",
                        "automation run paused until its wait ends"
                    );
                    return Ok(false);
                }
                Then::End(result, error) => {
                    return self
                        .finish(&run, Some(&a), log, (result, error), tally)
                        .await;
                }
            }
        }
        let end = (RunResult::Completed, None);
        self.finish(&run, Some(&a), log, end, tally).await
    }

    /// Carries out what a step asks for; only I/O errors of the worker itself are `Err`.
    async fn carry_out(
        &self,
        run: &automation_run::Model,
        a: &automation::Model,
        i: usize,
        step: &Step,
        log: &mut Vec<RunStep>,
    ) -> anyhow::Result<StepOutcome> {
        Ok(match run::plan(step) {
            StepPlan::Wait { minutes } => StepOutcome::Waited { minutes },
            StepPlan::Condition => {
                let facts = self.facts(run.contact_id).await?;
                StepOutcome::Checked(run::holds(step, facts.as_ref()))
            }
            action => self
                .act(run, a, i, action, log)
                .instrument(
                    tracing::info_span!("automation_step", step = i, kind = ?step.config.kind),
                )
                .await
                .unwrap_or_else(StepOutcome::Failed),
        })
    }

    async fn facts(&self, contact: Option<Uuid>) -> anyhow::Result<Option<ContactFacts>> {
        let Some(id) = contact else {
            return Ok(None);
        };
        let conn = &self.state.db.conn;
        let Some(c) = contact::Entity::find_by_id(id).unique(conn).await? else {
            return Ok(None);
        };
        let channel_types = identity::Entity::find()
            .filter(identity::Column::ContactId.eq(id))
            .all(conn)
            .await?
            .into_iter()
            .map(|i| i.channel_type)
            .collect();
        Ok(Some(ContactFacts {
            channel_types,
            tags: crate::db::stored::json("contacts.tags", c.id, &c.tags),
        }))
    }

    async fn act(
        &self,
        run: &automation_run::Model,
        a: &automation::Model,
        index: usize,
        action: StepPlan,
        log: &mut Vec<RunStep>,
    ) -> Result<StepOutcome, String> {
        let conn = &self.state.db.conn;
        let contact = match run.contact_id {
            Some(id) => contact::Entity::find_by_id(id)
                .unique(conn)
                .await
                .map_err(|e| e.to_string())?,
            None => None,
        };
        let Some(c) = contact else {
            return Err("this step needs a contact and the run has none".into());
        };
        let now = self.state.now_ms();
        let by = format!("Automation \"{}\"", a.name);
        match action {
            StepPlan::AddTag(tag) => {
                let mut f = crate::db::contacts::fields_of(&c);
                f.tags = wm_core::tags::merge_tags(&f.tags, std::slice::from_ref(&tag));
                self.change(&c, &f, &by, now).await?;
                Ok(StepOutcome::Done(Some(tag)))
            }
            StepPlan::SetStage(name) => {
                let stage = crate::db::lookups::stages(conn, c.organization_id)
                    .await
                    .map_err(|e| e.to_string())?
                    .into_iter()
                    .find(|s| s.name.eq_ignore_ascii_case(&name))
                    .ok_or_else(|| format!("no lifecycle stage named {name}"))?;
                let mut f = crate::db::contacts::fields_of(&c);
                f.lifecycle_stage_id = Some(stage.id);
                self.change(&c, &f, &by, now).await?;
                Ok(StepOutcome::Done(Some(stage.name)))
            }
            StepPlan::SendTemplate(name) => self.send_template(run, a, index, &c, &name, log).await,
            StepPlan::Wait { .. } | StepPlan::Condition | StepPlan::Unsupported => {
                Err("unknown action".into())
            }
        }
    }

    async fn change(
        &self,
        c: &contact::Model,
        f: &wm_core::contacts::ContactFields,
        by: &str,
        now: i64,
    ) -> Result<(), String> {
        let err = |e: String| e;
        let txn = self.state.db.write().await.map_err(|e| e.to_string())?;
        contacts::apply_automation_change(&*txn, &self.state, c, f, by, now)
            .await
            .map_err(|e| err(e.to_string()))?;
        txn.commit().await.map_err(|e| e.to_string())
    }

    async fn save_wait(
        &self,
        run: &automation_run::Model,
        next: usize,
        resume: i64,
        log: &[RunStep],
        tally: Tally,
    ) -> anyhow::Result<()> {
        automation_run::Entity::update_many()
            .col_expr(automation_run::Column::NextStep, Expr::val(next as i32))
            .col_expr(automation_run::Column::ResumeAt, Expr::val(resume))
            .col_expr(
                automation_run::Column::LockedUntil,
                Expr::val(Option::<i64>::None),
            )
            .col_expr(
                automation_run::Column::StepsLog,
                Expr::val(serde_json::to_string(log)?),
            )
            .col_expr(
                automation_run::Column::TemplatesSent,
                Expr::val(tally.templates),
            )
            .col_expr(automation_run::Column::CostMicros, Expr::val(tally.cost))
            .filter(automation_run::Column::Id.eq(run.id))
            .exec(&self.state.db.conn)
            .await?;
        Ok(())
    }

    /// Ends a run and applies the end to the automation: its streak of failures and, at
    /// the core's threshold, PAUSED_BY_FAILURE.
    async fn finish(
        &self,
        run: &automation_run::Model,
        a: Option<&automation::Model>,
        log: Vec<RunStep>,
        (result, error): (RunResult, Option<String>),
        tally: Tally,
    ) -> anyhow::Result<bool> {
        let now = self.state.now_ms();
        let txn = self.state.db.write().await?;
        let mut am: automation_run::ActiveModel = run.clone().into();
        am.result = Set(result.as_str().to_owned());
        am.finished_at = Set(Some(now));
        am.resume_at = Set(None);
        am.locked_until = Set(None);
        am.steps_log = Set(serde_json::to_string(&log)?);
        am.error = Set(error.clone());
        am.templates_sent = Set(tally.templates);
        am.cost_micros = Set(tally.cost);
        automation_run::Entity::update(am).exec(&*txn).await?;
        metrics::automation_run(result.as_str());
        tracing::info!(
            result = result.as_str(),
            error = error.as_deref(),
            "automation run finished"
        );
        let data = AutomationRunData {
            organization_id: run.organization_id,
            automation_id: run.automation_id,
            automation_name: a.map(|a| a.name.clone()).unwrap_or_default(),
            run_id: run.id,
            contact_id: run.contact_id,
            result: result.as_str().to_owned(),
            error: error.clone(),
        };
        crate::db::outbox::push(
            &*txn,
            run.organization_id,
            EventKind::AutomationRun,
            &data,
            now,
        )
        .await?;
        if let Some(a) = a {
            let failures = automation::Column::FailureCount;
            let q = automation::Entity::update_many()
                .col_expr(automation::Column::LastRunAt, Expr::val(now))
                .filter(automation::Column::Id.eq(a.id));
            let q = match result.streak() {
                Streak::Increment => q.col_expr(failures, Expr::col(failures).add(1)),
                Streak::Reset => q.col_expr(failures, Expr::val(0)),
                Streak::Keep => q,
            };
            q.exec(&*txn).await?;
            if result.streak() == Streak::Increment {
                let reason = run::paused_reason(error.as_deref().unwrap_or_default());
                automation::Entity::update_many()
                    .col_expr(
                        automation::Column::Status,
                        Expr::val(AutomationStatus::PausedByFailure),
                    )
                    .col_expr(automation::Column::PausedReason, Expr::val(reason))
                    .col_expr(automation::Column::UpdatedAt, Expr::val(now))
                    .filter(automation::Column::Id.eq(a.id))
                    .filter(automation::Column::Status.eq(AutomationStatus::Active))
                    .filter(failures.gte(FAILURES_TO_PAUSE))
                    .exec(&*txn)
                    .await?;
            }
        }
        txn.commit().await?;
        Ok(result == RunResult::Failed)
    }
}
