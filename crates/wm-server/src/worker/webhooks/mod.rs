//! The webhook delivery engine: outbox → one delivery per subscribed active webhook →
//! signed POSTs with retries, pausing, an attempt log and retention.
//!
//! Every step is a short transaction over rows it claims: outbox events are fanned out and
//! marked processed together; a due delivery is leased (`locked_until`) before its POST and
//! its result is recorded with the attempt in one transaction, so a crash mid-attempt only
//! means the lease expires and the delivery is tried again, and a recorded success is never
//! sent again.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveValue::Set, ColumnTrait, Condition, EntityTrait, ExprTrait, QueryFilter, QueryOrder,
    QuerySelect,
};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;
use uuid::Uuid;
use wm_core::webhooks::{
    PAUSE_AFTER, RESPONSE_KEEP, RETENTION, TIMEOUT, check_url, is_forbidden_ip, next_delay,
};
use wm_types::webhooks::{DeliveryStatus, WebhookStatus};

use crate::db::entities::{outbox_event, webhook, webhook_attempt, webhook_delivery};
use crate::observe::health::{Worker, pass};
use crate::state::AppState;

/// How long a claimed delivery is reserved for one attempt (well over the 10 s timeout).
const LEASE_MS: i64 = 15_000;
/// Deliveries attempted at once.
const CONCURRENCY: usize = 32;
/// Deliveries leased per claim: no more than are attempted at once, so every leased
/// delivery is attempted at once and finishes (10 s timeout) well inside its lease; a
/// lease never lapses under a live replica, which would let another one send it again.
const CLAIM: u64 = CONCURRENCY as u64;
/// Rows taken per step.
const BATCH: u64 = 256;

mod fan_out;

/// What one pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Deliveries created from outbox events.
    pub fanned_out: usize,
    /// Attempts made.
    pub attempted: usize,
    /// Attempts answered with a 2xx.
    pub delivered: usize,
}

/// A delivery claimed for one attempt.
#[derive(Debug, Clone)]
pub struct Claimed {
    delivery: webhook_delivery::Model,
    url: String,
    secret: String,
}

/// Resolves target hosts and drops private, loopback and link-local addresses, so the
/// check holds for the address actually connected to (no DNS-rebinding gap).
struct PublicOnly;

impl Resolve for PublicOnly {
    fn resolve(&self, name: Name) -> Resolving {
        Box::pin(async move {
            let addrs: Vec<SocketAddr> = tokio::net::lookup_host((name.as_str(), 0))
                .await?
                .filter(|a| !is_forbidden_ip(a.ip()))
                .collect();
            if addrs.is_empty() {
                return Err(
                    "the host resolves only to private, loopback or link-local addresses".into(),
                );
            }
            let addrs: Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

/// The delivery engine.
#[derive(Clone)]
pub struct WebhookWorker {
    state: AppState,
    http: reqwest::Client,
}

impl WebhookWorker {
    /// A worker with its HTTP client (10 s timeout, no redirects, `WM-Webhooks/1.0`).
    pub fn new(state: AppState) -> anyhow::Result<WebhookWorker> {
        // reqwest is built without a bundled crypto backend; ring is the process default.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut builder = reqwest::Client::builder()
            .timeout(TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent("WM-Webhooks/1.0")
            .pool_max_idle_per_host(8);
        if !state.settings.allow_insecure_webhooks {
            builder = builder.dns_resolver(Arc::new(PublicOnly));
        }
        Ok(WebhookWorker {
            state,
            http: builder.build()?,
        })
    }

    /// Runs until cancelled: a pass every [`super::poll::POLL`], the retention purge hourly.
    pub async fn run(self, cancel: CancellationToken) {
        self.state
            .health
            .started(Worker::Webhooks, self.state.now_ms());
        let mut last_purge: Option<Instant> = None;
        loop {
            // A failed pass is logged by `pass`; the next one tries again.
            let _ = self.run_once().await;
            if last_purge.is_none_or(|t| t.elapsed() > Duration::from_secs(3600)) {
                match self.purge().await {
                    Ok(n) if n > 0 => tracing::info!(deleted = n, "old webhook deliveries purged"),
                    Ok(_) => {}
                    Err(e) => tracing::warn!(error = %format!("{e:#}"), "webhook purge failed"),
                }
                last_purge = Some(Instant::now());
                self.state
                    .health
                    .beat(Worker::Webhooks, self.state.now_ms());
            }
            tokio::select! {
                _ = cancel.cancelled() => return,
                _ = tokio::time::sleep(super::poll::POLL) => {}
            }
        }
    }

    /// One pass: fan out pending events, then attempt every due delivery; in a
    /// `worker_pass` span, timed and heartbeat-recorded.
    pub async fn run_once(&self) -> anyhow::Result<Outcome> {
        pass(&self.state, Worker::Webhooks, self.steps()).await
    }

    async fn steps(&self) -> anyhow::Result<Outcome> {
        let mut outcome = Outcome::default();
        loop {
            let span = tracing::info_span!("webhook_fan_out");
            let (events, deliveries) = self.fan_out().instrument(span).await?;
            outcome.fanned_out += deliveries;
            if events < BATCH as usize {
                break;
            }
        }
        while !self.state.stopping() {
            let claimed = self.claim().await?;
            if claimed.is_empty() {
                break;
            }
            let results: Vec<anyhow::Result<bool>> = futures::stream::iter(claimed)
                .map(|c| self.attempt_unless_stopping(c))
                .buffer_unordered(CONCURRENCY)
                .collect()
                .await;
            for r in results {
                outcome.attempted += 1;
                if r? {
                    outcome.delivered += 1;
                }
            }
        }
        Ok(outcome)
    }

    /// Leases the due deliveries of active webhooks (`FOR UPDATE SKIP LOCKED` on PostgreSQL,
    /// so replicas never take the same one).
    pub async fn claim(&self) -> anyhow::Result<Vec<Claimed>> {
        let now = self.state.now_ms();
        let txn = self.state.db.write().await?;
        let active = sea_orm::sea_query::Query::select()
            .column(webhook::Column::Id)
            .from(webhook::Entity)
            .and_where(webhook::Column::Status.eq(WebhookStatus::Active))
            .to_owned();
        let due = crate::db::skip_locked(
            &self.state.db,
            webhook_delivery::Entity::find()
                .filter(webhook_delivery::Column::Status.eq(DeliveryStatus::Pending))
                .filter(webhook_delivery::Column::NextAttemptAt.lte(now))
                .filter(
                    Condition::any()
                        .add(webhook_delivery::Column::LockedUntil.is_null())
                        .add(webhook_delivery::Column::LockedUntil.lte(now)),
                )
                .filter(webhook_delivery::Column::WebhookId.in_subquery(active))
                .order_by_asc(webhook_delivery::Column::NextAttemptAt)
                .limit(CLAIM),
        )
        .all(&*txn)
        .await?;
        if due.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<Uuid> = due.iter().map(|d| d.id).collect();
        webhook_delivery::Entity::update_many()
            .col_expr(
                webhook_delivery::Column::LockedUntil,
                Expr::val(now + LEASE_MS),
            )
            .filter(webhook_delivery::Column::Id.is_in(ids))
            .exec(&*txn)
            .await?;
        let mut hook_ids: Vec<Uuid> = due.iter().map(|d| d.webhook_id).collect();
        hook_ids.sort_unstable();
        hook_ids.dedup();
        let hooks: HashMap<Uuid, webhook::Model> =
            crate::db::by_id::<webhook::Entity>(&*txn, hook_ids, |w| w.id).await?;
        txn.commit().await?;
        Ok(due
            .into_iter()
            .filter_map(|d| {
                let w = hooks.get(&d.webhook_id)?;
                Some(Claimed {
                    url: w.url.clone(),
                    secret: w.secret.clone(),
                    delivery: d,
                })
            })
            .collect())
    }

    /// Makes the attempt, or, once the server is shutting down, hands the lease back so
    /// another replica delivers it at once.
    async fn attempt_unless_stopping(&self, c: Claimed) -> anyhow::Result<bool> {
        if !self.state.stopping() {
            return self.attempt(c).await;
        }
        webhook_delivery::Entity::update_many()
            .col_expr(
                webhook_delivery::Column::LockedUntil,
                Expr::val(Option::<i64>::None),
            )
            .filter(webhook_delivery::Column::Id.eq(c.delivery.id))
            .exec(&self.state.db.conn)
            .await?;
        Ok(false)
    }

    /// Makes one attempt and records it; `Ok(true)` when the receiver answered 2xx. Runs in
    /// a `webhook_attempt` span with the delivery's ids, so one delivery can be followed.
    pub async fn attempt(&self, c: Claimed) -> anyhow::Result<bool> {
        let d = &c.delivery;
        let span = tracing::info_span!(
            "webhook_attempt",
            delivery_id = %d.id,
            webhook_id = %d.webhook_id,
            event = %d.event_type,
            attempt = d.attempts + 1,
        );
        let ok = self.attempt_in_span(c).instrument(span).await;
        self.state
            .health
            .beat(Worker::Webhooks, self.state.now_ms());
        ok
    }

    async fn attempt_in_span(&self, c: Claimed) -> anyhow::Result<bool> {
        let started = Instant::now();
        let at = self.state.now_ms();
        let result = self.post(&c, at / 1000).await;
        let took = started.elapsed();
        let duration_ms = i64::try_from(took.as_millis()).unwrap_or(i64::MAX);
        let (status_code, response_body, error) = match result {
            Ok((code, body)) => (Some(i32::from(code)), Some(body), None),
            Err(e) => (None, None, Some(e)),
        };
        let ok = status_code.is_some_and(|c| (200..300).contains(&c));
        let failure = error.clone();
        let outcome = self
            .record(
                &c.delivery,
                at,
                status_code,
                duration_ms,
                response_body,
                error,
                ok,
            )
            .await?;
        crate::observe::metrics::webhook_attempt(outcome, took);
        tracing::info!(
            status_code,
            duration_ms,
            outcome,
            error = failure,
            "webhook attempt"
        );
        Ok(ok)
    }

    async fn post(&self, c: &Claimed, unix_secs: i64) -> Result<(u16, String), String> {
        check_url(&c.url, self.state.settings.allow_insecure_webhooks)?;
        let d = &c.delivery;
        let signature = wm_webhook::sign_header(&c.secret, unix_secs, d.body.as_bytes());
        let mut resp = self
            .http
            .post(&c.url)
            .header("content-type", "application/json")
            .header("x-wm-event", d.event_type.as_str())
            .header("x-wm-delivery", d.id.to_string())
            .header("x-wm-signature", signature)
            .body(d.body.clone())
            .send()
            .await
            .map_err(|e| describe(&e))?;
        let status = resp.status().as_u16();
        let mut kept: Vec<u8> = Vec::new();
        while kept.len() < RESPONSE_KEEP {
            match resp.chunk().await {
                Ok(Some(chunk)) => kept.extend_from_slice(&chunk),
                Ok(None) | Err(_) => break,
            }
        }
        kept.truncate(RESPONSE_KEEP);
        // Kept as text on both databases: PostgreSQL refuses U+0000 in text.
        let text = String::from_utf8_lossy(&kept).replace('\0', "\u{FFFD}");
        Ok((status, text))
    }

    #[allow(clippy::too_many_arguments)]
    async fn record(
        &self,
        d: &webhook_delivery::Model,
        at: i64,
        status_code: Option<i32>,
        duration_ms: i64,
        response_body: Option<String>,
        error: Option<String>,
        ok: bool,
    ) -> anyhow::Result<&'static str> {
        let schedule = &self.state.settings.webhook_retry_schedule;
        let attempts = d.attempts + 1;
        let txn = self.state.db.write().await?;
        webhook_attempt::Entity::insert(webhook_attempt::ActiveModel {
            id: Set(Uuid::now_v7()),
            delivery_id: Set(d.id),
            at: Set(at),
            status_code: Set(status_code),
            duration_ms: Set(duration_ms),
            response_body: Set(response_body),
            error: Set(error),
        })
        .exec_without_returning(&*txn)
        .await?;
        let mut am = webhook_delivery::ActiveModel {
            id: Set(d.id),
            attempts: Set(attempts),
            locked_until: Set(None),
            ..Default::default()
        };
        let hook = webhook::Column::Id.eq(d.webhook_id);
        let mut outcome = "retrying";
        if ok {
            outcome = "delivered";
            am.status = Set(DeliveryStatus::Delivered);
            am.delivered_at = Set(Some(at));
            am.next_attempt_at = Set(None);
            webhook::Entity::update_many()
                .col_expr(webhook::Column::ConsecutiveFailures, Expr::val(0))
                .filter(hook)
                .filter(webhook::Column::ConsecutiveFailures.ne(0))
                .exec(&*txn)
                .await?;
        } else if let Some(delay) =
            next_delay(schedule, u32::try_from(attempts).unwrap_or(u32::MAX))
        {
            let delay_ms = i64::try_from(delay.as_millis()).unwrap_or(i64::MAX);
            am.next_attempt_at = Set(Some(at.saturating_add(delay_ms)));
        } else {
            outcome = "failed";
            am.status = Set(DeliveryStatus::Failed);
            am.next_attempt_at = Set(None);
            // A manual retry of an already exhausted delivery does not count again.
            let first_exhaustion =
                usize::try_from(d.attempts).unwrap_or(usize::MAX) <= schedule.len();
            if first_exhaustion {
                webhook::Entity::update_many()
                    .col_expr(
                        webhook::Column::ConsecutiveFailures,
                        Expr::col(webhook::Column::ConsecutiveFailures).add(1),
                    )
                    .filter(hook.clone())
                    .exec(&*txn)
                    .await?;
                webhook::Entity::update_many()
                    .col_expr(webhook::Column::Status, Expr::val(WebhookStatus::Paused))
                    .col_expr(webhook::Column::PausedAt, Expr::val(at))
                    .filter(hook)
                    .filter(webhook::Column::Status.eq(WebhookStatus::Active))
                    .filter(webhook::Column::ConsecutiveFailures.gte(PAUSE_AFTER as i32))
                    .exec(&*txn)
                    .await?;
            }
        }
        webhook_delivery::Entity::update(am).exec(&*txn).await?;
        txn.commit().await?;
        Ok(outcome)
    }

    /// Deletes deliveries (and their attempts) and processed outbox events older than
    /// the 7-day retention.
    pub async fn purge(&self) -> anyhow::Result<u64> {
        let cutoff = self.state.now_ms() - i64::try_from(RETENTION.as_millis()).unwrap_or(i64::MAX);
        let txn = self.state.db.write().await?;
        let old = sea_orm::sea_query::Query::select()
            .column(webhook_delivery::Column::Id)
            .from(webhook_delivery::Entity)
            .and_where(webhook_delivery::Column::CreatedAt.lt(cutoff))
            .to_owned();
        webhook_attempt::Entity::delete_many()
            .filter(webhook_attempt::Column::DeliveryId.in_subquery(old))
            .exec(&*txn)
            .await?;
        let gone = webhook_delivery::Entity::delete_many()
            .filter(webhook_delivery::Column::CreatedAt.lt(cutoff))
            .exec(&*txn)
            .await?
            .rows_affected;
        outbox_event::Entity::delete_many()
            .filter(outbox_event::Column::ProcessedAt.lt(cutoff))
            .exec(&*txn)
            .await?;
        crate::services::platform::purge(&*txn, cutoff).await?;
        txn.commit().await?;
        let now = self.state.now_ms();
        crate::rate_limit::shared::sweep(&self.state.db.conn, now).await?;
        crate::idempotency::purge(&self.state.db.conn, now).await?;
        // Uploads cut short an hour ago will not become jobs.
        crate::db::imports::purge_orphan_chunks(&self.state.db.conn, now - 3_600_000).await?;
        Ok(gone)
    }
}

fn describe(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        "timed out after 10 s".to_owned()
    } else if e.is_connect() {
        let mut msg = format!("connection failed: {e}");
        let mut src = std::error::Error::source(e);
        while let Some(s) = src {
            msg = format!("{msg}: {s}");
            src = s.source();
        }
        msg
    } else {
        e.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REFUSED: &str = "the host resolves only to private, loopback or link-local addresses";

    /// The resolver behind every host name the worker connects to drops the IPv6 forms that
    /// wrap a refused IPv4 address, as creation does (numeric names resolve without DNS).
    #[tokio::test]
    async fn the_resolver_refuses_wrapped_and_private_addresses() {
        for name in [
            "::ffff:127.0.0.1",
            "::127.0.0.1",
            "64:ff9b::7f00:1",
            "64:ff9b::a9fe:a9fe",
            "2002:c0a8:101::1",
            "fec0::1",
            "127.0.0.1",
            "localhost",
        ] {
            let err = PublicOnly
                .resolve(name.parse().expect("name"))
                .await
                .err()
                .unwrap_or_else(|| panic!("{name} resolved"));
            assert_eq!(err.to_string(), REFUSED, "{name}");
        }
        for name in ["64:ff9b::808:808", "2002:808:808::1", "93.184.216.34"] {
            let addrs: Vec<SocketAddr> = PublicOnly
                .resolve(name.parse().expect("name"))
                .await
                .unwrap_or_else(|e| panic!("{name}: {e}"))
                .collect();
            assert_eq!(addrs.len(), 1, "{name}");
        }
    }
}
