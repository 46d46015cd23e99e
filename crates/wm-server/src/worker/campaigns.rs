//! The campaign worker: starts scheduled campaigns on time, charges staggered batches when
//! due (pausing with INSUFFICIENT_BALANCE when the wallet cannot pay), calls the platform
//! for every charged message (paced per sender number), applies receipts, and completes
//! campaigns with nothing left.
//!
//! Crash safety: a batch is charged and queued in one transaction before any platform call
//! (a batch too large for one is charged at once and queued by steps, see
//! [`crate::services::sending::charging`]);
//! each recipient's attempt is recorded before its call and never made again (see
//! [`super::dispatch`]), so nothing is sent or charged twice; receipts are acknowledged
//! only once applied, so none is lost. Sending is leased per campaign
//! (`FOR UPDATE SKIP LOCKED` on PostgreSQL), so replicas do not send the same campaign.

use crate::db::Unique;
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect, UpdateMany};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;
use uuid::Uuid;
use wm_core::campaigns::{Action, Facts, Transition, transition};
use wm_types::campaigns::CampaignStatus;

use crate::db::WriteTxn;
use crate::db::entities::campaign;
use crate::observe::health::{Worker, pass};
use crate::services::outbound::status as statuses;
use crate::services::sending;
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
    /// Receipts applied.
    pub receipts: usize,
    /// Campaigns completed.
    pub completed: usize,
}

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
        self.receipts += o.receipts;
        self.completed += o.completed;
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

    /// Runs until cancelled: a pass when woken by a send or every [`super::poll::POLL`].
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
                _ = tokio::time::sleep(super::poll::POLL) => {}
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
        self.send_queued(&mut out).await?;
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

    /// What the core needs to start a campaign or charge its next batch, but the balance
    /// (which [`sending::charge_and_transition`] weighs against the batch).
    fn facts(c: &campaign::Model) -> Facts {
        Facts {
            recipients: 1,
            missing_variables: Vec::new(),
            balance_covers_next_batch: false,
            stop_reason: c.stop_reason.clone(),
        }
    }

    /// Charges the due batch of `c` (locked in `txn`) as `action` says, and commits: the
    /// campaign SENDING with its batch charged (the caller's `columns`), or PAUSED for its
    /// balance. `Some(true)` when it sends, `Some(false)` when it paused, `None` when
    /// nothing changed.
    async fn charge_and_commit(
        &self,
        txn: WriteTxn,
        c: &campaign::Model,
        action: Action,
        prepared: Option<&sending::Priced>,
        columns: impl FnOnce(UpdateMany<campaign::Entity>, &Transition) -> UpdateMany<campaign::Entity>,
        now: i64,
    ) -> anyhow::Result<Option<bool>> {
        let batch = sending::Batch {
            limit: sending::batch_limit(c),
            prepared,
            step: self.state.settings.charge_step,
            paid: false,
        };
        let moved =
            sending::charge_and_transition(&*txn, c, &action, Self::facts(c), batch, columns, now)
                .await?;
        let sends = match moved {
            sending::Outcome::Moved(t) => t.to == CampaignStatus::Sending,
            sending::Outcome::Short => {
                self.pause_for_balance(&*txn, c, c.status, now).await?;
                false
            }
            sending::Outcome::Refused(e) => {
                tracing::warn!(error = %e.message(), ?action, "campaign batch refused");
                return Ok(None);
            }
            sending::Outcome::Lost => return Ok(None),
        };
        txn.commit().await?;
        Ok(Some(sends))
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
                sending::prepare(&self.state.db.conn, &c, limit, step, now).await?
            }
            None => None,
        };
        let Some((txn, c)) = self.lock_in(id, CampaignStatus::Scheduled).await? else {
            return Ok(());
        };
        let next = sending::next_batch_at(c.batch_interval_min, now);
        let columns = |upd: UpdateMany<campaign::Entity>, t: &Transition| {
            if t.to != CampaignStatus::Sending {
                return upd;
            }
            upd.col_expr(campaign::Column::StartedAt, Expr::val(now))
                .col_expr(campaign::Column::NextBatchAt, Expr::val(next))
        };
        let action = Action::StartScheduled;
        match self
            .charge_and_commit(txn, &c, action, prepared.as_ref(), columns, now)
            .await?
        {
            Some(true) => {
                out.started += 1;
                out.batches += 1;
            }
            Some(false) => out.paused += 1,
            None => {}
        }
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
        let next = sending::next_batch_at(c.batch_interval_min, now);
        let columns = |upd: UpdateMany<campaign::Entity>, t: &Transition| {
            if t.to != CampaignStatus::Sending {
                return upd;
            }
            upd.col_expr(campaign::Column::NextBatchAt, Expr::val(next))
        };
        match self
            .charge_and_commit(txn, &c, Action::NextBatch, None, columns, now)
            .await?
        {
            Some(true) => out.batches += 1,
            Some(false) => out.paused += 1,
            None => {}
        }
        Ok(())
    }

    /// Calls the platform for every charged message of every sending campaign.
    async fn send_queued(&self, out: &mut Outcome) -> anyhow::Result<()> {
        let s = super::dispatch::send_queued(&self.state).await?;
        out.sent += s.sent;
        out.rejected += s.rejected;
        out.retried += s.retried;
        out.paused += s.paused;
        out.ambiguous += s.ambiguous;
        Ok(())
    }

    /// Attempts no status settled within the reconciliation window: FAILED "outcome
    /// unknown" and refunded.
    async fn reconcile(&self, out: &mut Outcome) -> anyhow::Result<()> {
        let now = self.state.now_ms();
        let window =
            i64::try_from(self.state.settings.reconcile_after.as_millis()).unwrap_or(i64::MAX);
        let txn = self.state.db.write().await?;
        out.reconciled +=
            crate::services::outbound::recipients::reconcile(&*txn, now, window).await?;
        txn.commit().await?;
        Ok(())
    }

    /// Delivery receipts the platform has for us: applied, then acknowledged (a crash in
    /// between gets them again, and applying one twice changes nothing).
    async fn apply_receipts(&self, out: &mut Outcome) -> anyhow::Result<()> {
        for p in self.state.registry.all() {
            self.apply_receipts_of(p, out).await?;
        }
        Ok(())
    }

    /// The receipts one provider holds for us (the ones whose platforms do not call back).
    async fn apply_receipts_of(
        &self,
        p: &crate::provider::Provider,
        out: &mut Outcome,
    ) -> anyhow::Result<()> {
        let updates = p
            .sender
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
        p.sender
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
