//! The campaign worker: starts scheduled campaigns on time, charges staggered batches when
//! due (pausing with INSUFFICIENT_BALANCE when the wallet cannot pay), calls the platform
//! for every charged message (paced per sender number), applies receipts, and completes
//! campaigns with nothing left.
//!
//! Crash safety: a batch is charged and queued in one transaction before any platform call;
//! each message carries its recipient id as idempotency key, so a message re-sent after a
//! crash is not sent twice, and nothing is charged twice. Sending is leased per campaign
//! (`FOR UPDATE SKIP LOCKED` on PostgreSQL), so replicas do not send the same campaign.

use std::collections::BTreeMap;

use futures::StreamExt;
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, Condition, EntityTrait, QueryFilter, QueryOrder, QuerySelect};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;
use uuid::Uuid;
use wm_core::campaigns::{Action, Facts, transition};
use wm_core::provider::{OutboundMessage, SendError};
use wm_core::templates::{self, VarSource};
use wm_types::campaigns::{CampaignStatus, STOP_INSUFFICIENT_BALANCE};
use wm_types::enums::RecipientStatus;

use crate::db::WriteTxn;
use crate::db::entities::{campaign, contact, phone_number, recipient, template};
use crate::observe::health::{Worker, pass};
use crate::observe::metrics::{self, Source};
use crate::services::{sending, wallet};
use crate::state::AppState;

/// How long a worker holds a campaign while sending a chunk.
const LEASE_MS: i64 = 60_000;
/// Messages sent per chunk before the campaign's status is looked at again.
const CHUNK: u64 = 200;
/// Platform calls in flight at once for one campaign.
const SEND_CONCURRENCY: usize = 16;

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
    /// Receipts applied.
    pub receipts: usize,
    /// Campaigns completed.
    pub completed: usize,
}

/// One chunk of a campaign's charged messages and what rendering them needs.
struct Chunk<'a> {
    c: &'a campaign::Model,
    sender: &'a phone_number::Model,
    tpl: &'a template::Model,
    vars: &'a BTreeMap<String, VarSource>,
    batch: &'a [recipient::Model],
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
        self.send_queued(&mut out).await?;
        self.apply_receipts(&mut out).await?;
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
            .filter(campaign::Column::Status.eq(status.as_str()))
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
        let c = crate::db::skip_locked(
            &self.state.db,
            campaign::Entity::find_by_id(id).filter(campaign::Column::Status.eq(status.as_str())),
        )
        .one(&*txn)
        .await?;
        Ok(c.map(|c| (txn, c)))
    }

    async fn facts(
        &self,
        conn: &impl sea_orm::ConnectionTrait,
        c: &campaign::Model,
        now: i64,
    ) -> anyhow::Result<Facts> {
        let limit = sending::batch_limit(c);
        let (_, cost) = sending::price_next_batch(conn, c, limit, now).await?;
        let balance = wallet::balance(conn, c.organization_id).await?;
        Ok(Facts {
            recipients: 1,
            missing_variables: Vec::new(),
            balance_covers_next_batch: balance.0 >= cost.total.0,
            stop_reason: c.stop_reason.clone(),
        })
    }

    async fn pause_for_balance(
        &self,
        conn: &impl sea_orm::ConnectionTrait,
        c: &campaign::Model,
        now: i64,
    ) -> anyhow::Result<()> {
        campaign::Entity::update_many()
            .col_expr(
                campaign::Column::Status,
                Expr::val(CampaignStatus::Paused.as_str()),
            )
            .col_expr(
                campaign::Column::StopReason,
                Expr::val(STOP_INSUFFICIENT_BALANCE),
            )
            .col_expr(campaign::Column::PausedAt, Expr::val(now))
            .col_expr(campaign::Column::UpdatedAt, Expr::val(now))
            .filter(campaign::Column::Id.eq(c.id))
            .exec(conn)
            .await?;
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
        let Some((txn, c)) = self.lock_in(id, CampaignStatus::Scheduled).await? else {
            return Ok(());
        };
        let f = self.facts(&*txn, &c, now).await?;
        let t = match transition(CampaignStatus::Scheduled, &Action::StartScheduled, &f) {
            Ok(t) => t,
            Err(e) => {
                tracing::warn!(error = %e.message(), "scheduled start refused");
                return Ok(());
            }
        };
        let limit = sending::batch_limit(&c);
        if t.to == CampaignStatus::Paused
            || sending::charge_next_batch(&*txn, &c, limit, now).await?
                == sending::Charge::Insufficient
        {
            self.pause_for_balance(&*txn, &c, now).await?;
            txn.commit().await?;
            out.paused += 1;
            return Ok(());
        }
        let next = sending::next_batch_at(c.batch_interval_min, now);
        campaign::Entity::update_many()
            .col_expr(
                campaign::Column::Status,
                Expr::val(CampaignStatus::Sending.as_str()),
            )
            .col_expr(campaign::Column::StartedAt, Expr::val(now))
            .col_expr(campaign::Column::NextBatchAt, Expr::val(next))
            .col_expr(campaign::Column::UpdatedAt, Expr::val(now))
            .filter(campaign::Column::Id.eq(c.id))
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
                let f = self.facts(&*txn, &c, now).await?;
                transition(CampaignStatus::Sending, &Action::BalanceShort, &f)
                    .map_err(|e| anyhow::anyhow!(e.message()))?;
                self.pause_for_balance(&*txn, &c, now).await?;
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

    /// Leases a sending campaign with charged messages waiting.
    async fn lease(&self) -> anyhow::Result<Option<campaign::Model>> {
        let now = self.state.now_ms();
        let txn = self.state.db.write().await?;
        let waiting = sea_orm::sea_query::Query::select()
            .column(recipient::Column::CampaignId)
            .from(recipient::Entity)
            .and_where(recipient::Column::Status.eq(RecipientStatus::Pending.as_str()))
            .and_where(recipient::Column::QueuedAt.is_not_null())
            .to_owned();
        let c = crate::db::skip_locked(
            &self.state.db,
            campaign::Entity::find()
                .filter(campaign::Column::Status.eq(CampaignStatus::Sending.as_str()))
                .filter(
                    Condition::any()
                        .add(campaign::Column::LockedUntil.is_null())
                        .add(campaign::Column::LockedUntil.lte(now)),
                )
                .filter(campaign::Column::Id.in_subquery(waiting))
                .order_by_asc(campaign::Column::UpdatedAt)
                .limit(1),
        )
        .one(&*txn)
        .await?;
        if let Some(c) = &c {
            campaign::Entity::update_many()
                .col_expr(campaign::Column::LockedUntil, Expr::val(now + LEASE_MS))
                .filter(campaign::Column::Id.eq(c.id))
                .exec(&*txn)
                .await?;
        }
        txn.commit().await?;
        Ok(c)
    }

    async fn release(&self, id: Uuid) -> anyhow::Result<()> {
        campaign::Entity::update_many()
            .col_expr(
                campaign::Column::LockedUntil,
                Expr::val(Option::<i64>::None),
            )
            .filter(campaign::Column::Id.eq(id))
            .exec(&self.state.db.conn)
            .await?;
        Ok(())
    }

    /// Calls the platform for every charged message of every sending campaign.
    async fn send_queued(&self, out: &mut Outcome) -> anyhow::Result<()> {
        while let Some(c) = self.lease().await? {
            let span = tracing::info_span!("campaign_send", campaign_id = %c.id);
            let result = self.send_campaign(&c, out).instrument(span).await;
            self.release(c.id).await?;
            result?;
        }
        Ok(())
    }

    async fn send_campaign(&self, c: &campaign::Model, out: &mut Outcome) -> anyhow::Result<()> {
        let conn = &self.state.db.conn;
        let Some(sender) = phone_number::Entity::find_by_id(c.phone_number_id)
            .one(conn)
            .await?
        else {
            return Ok(());
        };
        let Some(tpl) = template::Entity::find_by_id(c.template_id)
            .one(conn)
            .await?
        else {
            return Ok(());
        };
        let positions = templates::positions(&tpl.body_text);
        let vars_json: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(&c.variables).unwrap_or_default();
        let vars = templates::parse_variables(&vars_json, &positions).unwrap_or_default();
        loop {
            // A pause stops the remaining messages; sent ones stay sent.
            let status = campaign::Entity::find_by_id(c.id)
                .one(conn)
                .await?
                .map(|c| c.status);
            if status.as_deref() != Some(CampaignStatus::Sending.as_str()) {
                return Ok(());
            }
            let batch = sending::queued(conn, c.id, CHUNK).await?;
            if batch.is_empty() {
                return Ok(());
            }
            let span = tracing::info_span!("campaign_chunk", messages = batch.len());
            let chunk = Chunk {
                c,
                sender: &sender,
                tpl: &tpl,
                vars: &vars,
                batch: &batch,
            };
            let recorded = self.send_chunk(chunk, out).instrument(span).await?;
            self.state
                .health
                .beat(Worker::Campaigns, self.state.now_ms());
            if !recorded {
                return Ok(());
            }
            tokio::task::yield_now().await;
        }
    }

    /// Sends one chunk of charged messages and records the answers; `false` when the
    /// platform took none of them (they stay queued for a later pass).
    async fn send_chunk(&self, chunk: Chunk<'_>, out: &mut Outcome) -> anyhow::Result<bool> {
        let Chunk {
            c,
            sender,
            tpl,
            vars,
            batch,
        } = chunk;
        let conn = &self.state.db.conn;
        let ids: Vec<Uuid> = batch.iter().map(|r| r.contact_id).collect();
        let contacts: std::collections::HashMap<Uuid, contact::Model> = contact::Entity::find()
            .filter(contact::Column::Id.is_in(ids))
            .all(conn)
            .await?
            .into_iter()
            .map(|k| (k.id, k))
            .collect();
        let messages: Vec<(usize, OutboundMessage)> = batch
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let k = contacts.get(&r.contact_id);
                let values = templates::ContactValues {
                    full_name: k.and_then(|k| k.full_name.as_deref()),
                    primary_phone: Some(r.phone.as_str()),
                    primary_email: k.and_then(|k| k.primary_email.as_deref()),
                    company: k.and_then(|k| k.company.as_deref()),
                    country: k.and_then(|k| k.country.as_deref()),
                };
                let message = OutboundMessage {
                    idempotency_key: r.id.to_string(),
                    from: sender.number_e164.clone(),
                    to: r.phone.clone(),
                    template: tpl.name.clone(),
                    language: tpl.language.clone(),
                    body: templates::render(&tpl.body_text, vars, &values),
                };
                (i, message)
            })
            .collect();
        // Several calls in flight; the per-sender pacer still sets the rate.
        let (state, from) = (self.state.clone(), sender.id);
        let answers: Vec<(usize, Result<String, SendError>)> = futures::stream::iter(messages)
            .map(|(i, m)| {
                let state = state.clone();
                async move {
                    state.pacer.wait(from).await;
                    (i, state.provider.send(&m).await)
                }
            })
            .buffer_unordered(SEND_CONCURRENCY)
            .collect()
            .await;
        let mut results = Vec::with_capacity(answers.len());
        let (mut unavailable, mut refunded) = (0, 0);
        for (i, answer) in answers {
            let r = &batch[i];
            match answer {
                Ok(id) => results.push((r, Ok(id))),
                Err(SendError::Rejected(reason)) => {
                    refunded += usize::from(r.cost_micros > 0);
                    results.push((r, Err(reason)));
                }
                // Stays queued (charged once) and is tried on a later pass.
                Err(SendError::Unavailable(reason)) => {
                    unavailable += 1;
                    tracing::warn!(recipient_id = %r.id, %reason, "platform unavailable");
                }
            }
        }
        let provider = self.state.provider.name();
        let sent = results.iter().filter(|(_, r)| r.is_ok()).count();
        let rejected = results.len() - sent;
        metrics::messages_sent(provider, Source::Campaign, sent);
        metrics::messages_failed(provider, Source::Campaign, "rejected", rejected);
        metrics::messages_failed(provider, Source::Campaign, "unavailable", unavailable);
        metrics::messages_refunded(provider, Source::Campaign, refunded);
        tracing::info!(sent, rejected, unavailable, "campaign chunk sent");
        if results.is_empty() {
            return Ok(false);
        }
        let now = self.state.now_ms();
        let txn = self.state.db.write().await?;
        for (r, result) in results {
            match &result {
                Ok(_) => out.sent += 1,
                Err(_) => out.rejected += 1,
            }
            sending::record_send(&*txn, r, result, &c.name, now).await?;
        }
        campaign::Entity::update_many()
            .col_expr(campaign::Column::LockedUntil, Expr::val(now + LEASE_MS))
            .filter(campaign::Column::Id.eq(c.id))
            .exec(&*txn)
            .await?;
        txn.commit().await?;
        Ok(true)
    }

    /// Delivery receipts the platform has for us.
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
            if sending::apply_status(&*txn, None, u, now).await? {
                out.receipts += 1;
            }
        }
        txn.commit().await?;
        Ok(())
    }

    /// Sending campaigns with nothing pending: COMPLETED with `campaign.finished`.
    async fn complete(&self, out: &mut Outcome) -> anyhow::Result<()> {
        let sending: Vec<campaign::Model> = campaign::Entity::find()
            .filter(campaign::Column::Status.eq(CampaignStatus::Sending.as_str()))
            .limit(500)
            .all(&self.state.db.conn)
            .await?;
        for c in sending {
            if sending::pending_count(&self.state.db.conn, c.id).await? > 0 {
                continue;
            }
            transition(
                CampaignStatus::Sending,
                &Action::AllProcessed,
                &Facts::default(),
            )
            .map_err(|e| anyhow::anyhow!(e.message()))?;
            let now = self.state.now_ms();
            let txn = self.state.db.write().await?;
            if sending::complete_if_done(&*txn, &c, now).await? {
                tracing::info!(campaign_id = %c.id, "campaign completed");
                out.completed += 1;
            }
            txn.commit().await?;
        }
        Ok(())
    }
}
