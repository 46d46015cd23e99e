//! The campaign worker: starts scheduled campaigns on time, charges staggered batches when
//! due (pausing with INSUFFICIENT_BALANCE when the wallet cannot pay), calls the platform
//! for every charged message (paced per sender number), applies receipts, and completes
//! campaigns with nothing left.
//!
//! Crash safety: a batch is charged and queued in one transaction before any platform call
//! (a batch too large for one is charged at once and queued by steps, see
//! [`crate::services::charges`]);
//! each recipient's attempt is recorded before its call and never made again (see
//! [`super::dispatch`]), so nothing is sent or charged twice; receipts are acknowledged
//! only once applied, so none is lost. Sending is leased per campaign
//! (`FOR UPDATE SKIP LOCKED` on PostgreSQL), so replicas do not send the same campaign.

use crate::db::Unique;
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;
use uuid::Uuid;
use wm_core::campaigns::{Action, Facts, transition};
use wm_types::campaigns::CampaignStatus;

use crate::db::WriteTxn;
use crate::db::entities::campaign;
use crate::observe::health::{Worker, pass};
use crate::services::{charges, sending, statuses, wallet};
use crate::state::AppState;

/// What one pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Scheduled campaigns started.
    pub started: usize,
    /// Batches charged.
    pub batches: usize,
    /// Campaigns paused for their balance.
    pub paused: usize,
    /// Messages the platform accepted.
    pub sent: usize,
    /// Messages it rejected (refunded).
    pub rejected: usize,
    /// Messages it asked to retry later (queued again, charged once).
    pub retried: usize,
    /// Messages whose outcome is unknown (left for a status or the reconciliation).
    pub ambiguous: usize,
    /// Attempts failed as "outcome unknown" after the reconciliation window.
    pub reconciled: usize,
    /// Platform webhooks applied (those the intake did not apply at once).
    pub platform_events: usize,
    /// Receipts applied.
    pub receipts: usize,
    /// Campaigns completed.
    pub completed: usize,
    /// Steps of a large charged batch queued.
    pub queued_steps: usize,
}

/// How long one pass spends queueing large charged batches before it calls the platform.
const QUEUE_BUDGET: std::time::Duration = std::time::Duration::from_secs(1);

impl Outcome {
    /// Adds another pass's (or campaign's) counts to these.
    pub fn add(&mut self, o: &Outcome) {
        self.started += o.started;
        self.batches += o.batches;
        self.paused += o.paused;
        self.sent += o.sent;
        self.rejected += o.rejected;
        self.retried += o.retried;
        self.ambiguous += o.ambiguous;
        self.reconciled += o.reconciled;
        self.platform_events += o.platform_events;
        self.receipts += o.receipts;
        self.completed += o.completed;
        self.queued_steps += o.queued_steps;
    }
}

/// The campaign worker.
#[derive(Clone)]
pub struct CampaignWorker {
    state: AppState,
}

impl CampaignWorker {
    /// A worker over the server's state (its provider and pacing).
    pub fn new(state: AppState) -> Self {
        CampaignWorker { state }
    }

    /// Runs until cancelled: a pass when woken by a send or every [`super::POLL`].
    pub async fn run(self, cancel: CancellationToken) {
        self.state
            .health
            .started(Worker::Campaigns, self.state.now_ms());
        loop {
            // A failed pass is logged by `pass`; the next one tries again.
            let _ = self.run_once().await;
            tokio::select! {
                _ = cancel.cancelled() => return,
                _ = self.state.campaign_wake.notified() => {}
                _ = tokio::time::sleep(super::POLL) => {}
            }
        }
    }

    /// One pass over every step, in a `worker_pass` span, timed and heartbeat-recorded.
    pub async fn run_once(&self) -> anyhow::Result<Outcome> {
        pass(&self.state, Worker::Campaigns, self.steps()).await
    }

    async fn steps(&self) -> anyhow::Result<Outcome> {
        let mut out = Outcome::default();
        self.start_scheduled(&mut out).await?;
        self.charge_due_batches(&mut out).await?;
        self.queue_charged(&mut out).await?;
        self.send_queued(&mut out).await?;
        out.platform_events += crate::services::platform::apply_pending(&self.state, None).await?;
        self.apply_receipts(&mut out).await?;
        self.reconcile(&mut out).await?;
        self.complete(&mut out).await?;
        Ok(out)
    }

    async fn due(
        &self,
        status: CampaignStatus,
        column: campaign::Column,
    ) -> anyhow::Result<Vec<Uuid>> {
        let now = self.state.now_ms();
        Ok(campaign::Entity::find()
            .select_only()
            .column(campaign::Column::Id)
            .filter(campaign::Column::Status.eq(status))
            .filter(column.lte(now))
            .order_by_asc(column)
            .limit(100)
            .into_tuple()
            .all(&self.state.db.conn)
            .await?)
    }

    /// A write transaction holding campaign `id`, if it is still in `status`: between `due`
    /// listing it and now, a user or another worker may have moved it on.
    async fn lock_in(
        &self,
        id: Uuid,
        status: CampaignStatus,
    ) -> anyhow::Result<Option<(WriteTxn, campaign::Model)>> {
        let txn = self.state.db.write().await?;
        // Still due under the lock: another worker (or replica) that charged this batch
        // moved `next_batch_at` on before releasing it, so it is charged once per interval.
        let c = crate::db::skip_locked(
            &self.state.db,
            campaign::Entity::find_by_id(id)
                .filter(campaign::Column::Status.eq(status))
                .filter(campaign::Column::NextBatchAt.lte(self.state.now_ms())),
        )
        .one(&*txn)
        .await?;
        Ok(c.map(|c| (txn, c)))
    }

    async fn facts(
        &self,
        conn: &impl sea_orm::ConnectionTrait,
        c: &campaign::Model,
        prepared: Option<&charges::Priced>,
        now: i64,
    ) -> anyhow::Result<Facts> {
        let limit = sending::batch_limit(c);
        let step = self.state.settings.charge_step;
        let cost = charges::next_cost(conn, c, limit, prepared, step, now).await?;
        let balance = wallet::balance(conn, c.organization_id).await?;
        Ok(Facts {
            recipients: 1,
            missing_variables: Vec::new(),
            balance_covers_next_batch: balance.0 >= cost.0,
            stop_reason: c.stop_reason.clone(),
        })
    }

    /// Pauses a campaign whose balance does not cover its next batch, as the core's
    /// transition for `status` says.
    async fn pause_for_balance(
        &self,
        conn: &impl sea_orm::ConnectionTrait,
        c: &campaign::Model,
        status: CampaignStatus,
        now: i64,
    ) -> anyhow::Result<()> {
        let short = Facts {
            balance_covers_next_batch: false,
            ..Facts::default()
        };
        let action = match status {
            CampaignStatus::Scheduled => Action::StartScheduled,
            _ => Action::BalanceShort,
        };
        let t = transition(status, &action, &short).map_err(|e| anyhow::anyhow!(e.message()))?;
        sending::apply(conn, c.id, &[status], &t, now).await?;
        Ok(())
    }

    /// SCHEDULED campaigns whose time has come: SENDING with their first batch charged, or
    /// PAUSED for their balance.
    async fn start_scheduled(&self, out: &mut Outcome) -> anyhow::Result<()> {
        for id in self
            .due(CampaignStatus::Scheduled, campaign::Column::NextBatchAt)
            .await?
        {
            let span = tracing::info_span!("campaign_start", campaign_id = %id);
            self.start_one(id, out).instrument(span).await?;
        }
        Ok(())
    }

    async fn start_one(&self, id: Uuid, out: &mut Outcome) -> anyhow::Result<()> {
        let now = self.state.now_ms();
        let step = self.state.settings.charge_step;
        // A large audience is priced before taking the writer.
        let prepared = match campaign::Entity::find_by_id(id)
            .unique(&self.state.db.conn)
            .await?
        {
            Some(c) => {
                let limit = sending::batch_limit(&c);
                charges::prepare(&self.state.db.conn, &c, limit, step, now).await?
            }
            None => None,
        };
        let Some((txn, c)) = self.lock_in(id, CampaignStatus::Scheduled).await? else {
            return Ok(());
        };
        let f = self.facts(&*txn, &c, prepared.as_ref(), now).await?;
        let t = match transition(CampaignStatus::Scheduled, &Action::StartScheduled, &f) {
            Ok(t) => t,
            Err(e) => {
                tracing::warn!(error = %e.message(), "scheduled start refused");
                return Ok(());
            }
        };
        let limit = sending::batch_limit(&c);
        if t.to == CampaignStatus::Paused
            || charges::charge(&*txn, &c, limit, prepared.as_ref(), step, now).await?
                == sending::Charge::Insufficient
        {
            self.pause_for_balance(&*txn, &c, CampaignStatus::Scheduled, now)
                .await?;
            txn.commit().await?;
            out.paused += 1;
            return Ok(());
        }
        let next = sending::next_batch_at(c.batch_interval_min, now);
        sending::transition_update(c.id, &[CampaignStatus::Scheduled], &t, now)
            .col_expr(campaign::Column::StartedAt, Expr::val(now))
            .col_expr(campaign::Column::NextBatchAt, Expr::val(next))
            .exec(&*txn)
            .await?;
        txn.commit().await?;
        out.started += 1;
        out.batches += 1;
        Ok(())
    }

    /// Staggered batches whose time has come: charged and queued, or the campaign paused
    /// with INSUFFICIENT_BALANCE.
    async fn charge_due_batches(&self, out: &mut Outcome) -> anyhow::Result<()> {
        for id in self
            .due(CampaignStatus::Sending, campaign::Column::NextBatchAt)
            .await?
        {
            let span = tracing::info_span!("campaign_batch", campaign_id = %id);
            self.charge_one(id, out).instrument(span).await?;
        }
        Ok(())
    }

    async fn charge_one(&self, id: Uuid, out: &mut Outcome) -> anyhow::Result<()> {
        let now = self.state.now_ms();
        let Some((txn, c)) = self.lock_in(id, CampaignStatus::Sending).await? else {
            return Ok(());
        };
        let limit = sending::batch_limit(&c);
        if sending::next_batch(&*txn, &c, Some(1)).await?.is_empty() {
            // Every batch is charged: nothing more is due.
            campaign::Entity::update_many()
                .col_expr(
                    campaign::Column::NextBatchAt,
                    Expr::val(Option::<i64>::None),
                )
                .filter(campaign::Column::Id.eq(c.id))
                .exec(&*txn)
                .await?;
            txn.commit().await?;
            return Ok(());
        }
        match sending::charge_next_batch(&*txn, &c, limit, now).await? {
            sending::Charge::Insufficient => {
                self.pause_for_balance(&*txn, &c, CampaignStatus::Sending, now)
                    .await?;
                out.paused += 1;
            }
            sending::Charge::Queued { .. } => {
                let next = sending::next_batch_at(c.batch_interval_min, now);
                campaign::Entity::update_many()
                    .col_expr(campaign::Column::NextBatchAt, Expr::val(next))
                    .col_expr(campaign::Column::UpdatedAt, Expr::val(now))
                    .filter(campaign::Column::Id.eq(c.id))
                    .exec(&*txn)
                    .await?;
                out.batches += 1;
            }
        }
        txn.commit().await?;
        Ok(())
    }

    /// Large batches charged at once are queued a step at a time, each step its own short
    /// transaction, for up to a second a pass so the platform calls are not held up.
    async fn queue_charged(&self, out: &mut Outcome) -> anyhow::Result<()> {
        let started = std::time::Instant::now();
        let step = self.state.settings.charge_step;
        while let Some(n) = charges::queue_step(&self.state.db, step, self.state.now_ms()).await? {
            out.queued_steps += 1;
            if n < step || started.elapsed() > QUEUE_BUDGET {
                break;
            }
        }
        Ok(())
    }

    /// Calls the platform for every charged message of every sending campaign.
    async fn send_queued(&self, out: &mut Outcome) -> anyhow::Result<()> {
        super::dispatch::send_queued(&self.state, out).await
    }

    /// Attempts no status settled within the reconciliation window: FAILED "outcome
    /// unknown" and refunded.
    async fn reconcile(&self, out: &mut Outcome) -> anyhow::Result<()> {
        let now = self.state.now_ms();
        let window =
            i64::try_from(self.state.settings.reconcile_after.as_millis()).unwrap_or(i64::MAX);
        let txn = self.state.db.write().await?;
        out.reconciled += crate::services::attempts::reconcile(&*txn, now, window).await?;
        txn.commit().await?;
        Ok(())
    }

    /// Delivery receipts the platform has for us: applied, then acknowledged (a crash in
    /// between gets them again, and applying one twice changes nothing).
    async fn apply_receipts(&self, out: &mut Outcome) -> anyhow::Result<()> {
        let updates = self
            .state
            .provider
            .receipts()
            .await
            .map_err(|e| anyhow::anyhow!(e.to_string()))?;
        if updates.is_empty() {
            return Ok(());
        }
        let now = self.state.now_ms();
        let txn = self.state.db.write().await?;
        for u in &updates {
            if statuses::apply(&*txn, None, u, now).await? == statuses::Applied::Moved {
                out.receipts += 1;
            }
        }
        txn.commit().await?;
        self.state
            .provider
            .acknowledge(&updates)
            .await
            .map_err(|e| anyhow::anyhow!(e.to_string()))?;
        Ok(())
    }

    /// Sending campaigns with nothing pending: COMPLETED with `campaign.finished`.
    async fn complete(&self, out: &mut Outcome) -> anyhow::Result<()> {
        let sending: Vec<campaign::Model> = campaign::Entity::find()
            .filter(campaign::Column::Status.eq(CampaignStatus::Sending))
            .limit(500)
            .all(&self.state.db.conn)
            .await?;
        for c in sending {
            if sending::has_pending(&self.state.db.conn, c.id).await? {
                continue;
            }
            let t = transition(
                CampaignStatus::Sending,
                &Action::AllProcessed,
                &Facts::default(),
            )
            .map_err(|e| anyhow::anyhow!(e.message()))?;
            let now = self.state.now_ms();
            let txn = self.state.db.write().await?;
            if sending::complete_if_done(&*txn, &c, &t, now).await? {
                tracing::info!(campaign_id = %c.id, "campaign completed");
                out.completed += 1;
            }
            txn.commit().await?;
        }
        Ok(())
    }
}
