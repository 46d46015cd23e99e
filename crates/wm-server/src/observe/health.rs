//! Readiness: `GET /health/ready` answers 200 only when this replica can do its work — the
//! database answers, its schema is current, and every worker started in this process has
//! shown a sign of life recently — and 503 with the failing checks otherwise, or at once
//! while the server shuts down, so a load balancer drains the replica before it stops.
//!
//! `GET /health` stays the liveness probe: a constant 200 that only says the process serves.
//!
//! The heartbeats and flags it reads are [`crate::state::health`] (re-exported here), part
//! of the state, so that the state does not depend on this module.

use std::future::Future;
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
pub use crate::state::health::{Health, STALE_AFTER, Worker};

/// How long the database has to answer the readiness query.
pub const DB_TIMEOUT: Duration = Duration::from_secs(2);

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
