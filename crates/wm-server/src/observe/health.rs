//! Readiness: `GET /health/ready` answers 200 only when this replica can do its work — the
//! database answers, its schema is current, and every worker started in this process has
//! shown a sign of life recently — and 503 with the failing checks otherwise, or at once
//! while the server shuts down, so a load balancer drains the replica before it stops.
//!
//! `GET /health` stays the liveness probe: a constant 200 that only says the process serves.

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::{Duration, Instant};

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use sea_orm_migration::MigratorTrait;
use serde_json::{Map, Value, json};
use tracing::Instrument;

use crate::db::migration::Migrator;
use crate::state::AppState;

/// How long a started worker may go without a sign of life (a finished pass, a chunk of
/// messages, a webhook attempt) before readiness fails. A pass polls every 200 ms, and one
/// chunk or attempt takes seconds at most, so this is far beyond a healthy gap.
pub const STALE_AFTER: Duration = Duration::from_secs(30);
/// How long the database has to answer the readiness query.
pub const DB_TIMEOUT: Duration = Duration::from_secs(2);

/// The background workers that report heartbeats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Worker {
    /// Campaign sending.
    Campaigns,
    /// Webhook deliveries.
    Webhooks,
    /// Automation runs.
    Automations,
    /// Contact imports.
    Imports,
}

impl Worker {
    /// Every worker, in the order readiness lists them.
    pub const ALL: [Worker; 4] = [
        Worker::Campaigns,
        Worker::Webhooks,
        Worker::Automations,
        Worker::Imports,
    ];

    /// The name in readiness bodies, log spans and metric labels.
    pub fn as_str(self) -> &'static str {
        match self {
            Worker::Campaigns => "campaigns",
            Worker::Webhooks => "webhooks",
            Worker::Automations => "automations",
            Worker::Imports => "imports",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

#[derive(Default)]
struct Beat {
    started: AtomicBool,
    last_ms: AtomicI64,
}

/// What readiness reads besides the database: worker heartbeats (in ms of the state's
/// clock) and whether the server is shutting down. Lives in [`AppState`].
#[derive(Default)]
pub struct Health {
    draining: AtomicBool,
    listening: AtomicBool,
    beats: [Beat; 4],
}

impl Health {
    /// A worker's loop started in this process: from now on readiness requires its
    /// heartbeat. Workers never started here (a host app that mounts only the router) are
    /// reported and not held against readiness.
    pub fn started(&self, w: Worker, now_ms: i64) {
        let b = &self.beats[w.index()];
        b.last_ms.store(now_ms, Ordering::Relaxed);
        b.started.store(true, Ordering::Relaxed);
    }

    /// A sign of life from a worker.
    pub fn beat(&self, w: Worker, now_ms: i64) {
        self.beats[w.index()]
            .last_ms
            .store(now_ms, Ordering::Relaxed);
    }

    /// Readiness answers 503 from now on (the server is shutting down).
    pub fn set_draining(&self) {
        self.draining.store(true, Ordering::Relaxed);
    }

    /// Whether the server is shutting down.
    pub fn is_draining(&self) -> bool {
        self.draining.load(Ordering::Relaxed)
    }

    /// Whether this replica hears the others' changes ([`crate::changes::listen`]).
    pub fn set_listening(&self, on: bool) {
        self.listening.store(on, Ordering::Relaxed);
    }

    /// Whether this replica hears the others' changes right now.
    pub fn is_listening(&self) -> bool {
        self.listening.load(Ordering::Relaxed)
    }

    /// `Ok(description)` or `Err(what is wrong)` for one worker.
    fn worker_check(&self, w: Worker, now_ms: i64) -> Result<String, String> {
        let b = &self.beats[w.index()];
        if !b.started.load(Ordering::Relaxed) {
            return Ok("not running in this process".to_owned());
        }
        let age_ms = now_ms.saturating_sub(b.last_ms.load(Ordering::Relaxed));
        let limit = i64::try_from(STALE_AFTER.as_millis()).unwrap_or(i64::MAX);
        if age_ms > limit {
            Err(format!("stale {}s", age_ms / 1000))
        } else {
            Ok("ok".to_owned())
        }
    }
}

/// Runs one worker pass in its span: times it for the metrics, logs a failure inside the
/// span, and records the heartbeat readiness reads.
pub async fn pass<T>(
    state: &AppState,
    w: Worker,
    work: impl Future<Output = anyhow::Result<T>>,
) -> anyhow::Result<T> {
    let span = tracing::info_span!("worker_pass", worker = w.as_str());
    let started = Instant::now();
    let out = work.instrument(span.clone()).await;
    if let Err(e) = &out {
        span.in_scope(|| tracing::warn!(error = %format!("{e:#}"), "worker pass failed"));
    }
    let now = state.now_ms();
    state.health.beat(w, now);
    super::metrics::worker_pass(w, started.elapsed(), out.is_ok(), now);
    out
}

/// `GET /health/ready`.
pub async fn ready(State(state): State<AppState>) -> Response {
    if state.health.is_draining() {
        let body = json!({"status": "unavailable", "checks": {"shutdown": "draining"}});
        return (StatusCode::SERVICE_UNAVAILABLE, Json(body)).into_response();
    }
    let mut healthy = true;
    let mut note = |r: Result<String, String>| -> Value {
        healthy &= r.is_ok();
        Value::String(r.unwrap_or_else(|e| e))
    };
    let database = note(database(&state).await);
    let migrations = if database == "ok" {
        note(migrations(&state).await)
    } else {
        note(Err("not checked (no database)".to_owned()))
    };
    let now = state.now_ms();
    let workers: Map<String, Value> = Worker::ALL
        .iter()
        .map(|w| {
            (
                w.as_str().to_owned(),
                note(state.health.worker_check(*w, now)),
            )
        })
        .collect();
    let (status, word) = if healthy {
        (StatusCode::OK, "ok")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "unavailable")
    };
    let body = json!({
        "status": word,
        "checks": {"database": database, "migrations": migrations, "workers": workers},
    });
    (status, Json(body)).into_response()
}

/// `SELECT 1` within [`DB_TIMEOUT`]. The cause is logged, not shown: the probe is public.
async fn database(state: &AppState) -> Result<String, String> {
    match tokio::time::timeout(DB_TIMEOUT, state.db.conn.ping()).await {
        Ok(Ok(())) => Ok("ok".to_owned()),
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "readiness: the database did not answer");
            Err("unreachable".to_owned())
        }
        Err(_) => Err(format!("timed out after {}s", DB_TIMEOUT.as_secs())),
    }
}

/// The migrations this binary knows are all applied (read-only: never creates the table).
async fn migrations(state: &AppState) -> Result<String, String> {
    let check = Migrator::get_pending_migrations_read_only(&state.db.conn);
    match tokio::time::timeout(DB_TIMEOUT, check).await {
        Ok(Ok(pending)) if pending.is_empty() => Ok("ok".to_owned()),
        Ok(Ok(pending)) => {
            let names: Vec<&str> = pending.iter().map(|m| m.name()).collect();
            Err(format!("pending: {}", names.join(", ")))
        }
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "readiness: migration status unknown");
            Err("unknown (see the log)".to_owned())
        }
        Err(_) => Err(format!("timed out after {}s", DB_TIMEOUT.as_secs())),
    }
}
