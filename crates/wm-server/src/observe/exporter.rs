//! Serving the metrics: the binary installs a Prometheus recorder and answers
//! `GET /metrics` on its own listener (`WM_METRICS_LISTEN`, kept off the public API port),
//! and a collector refreshes the gauges that come from database queries.

use std::net::SocketAddr;
use std::time::Duration;

use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use sea_orm::{
    ColumnTrait, DbBackend, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect,
    QueryTrait,
};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use wm_types::campaigns::CampaignStatus;
use wm_types::webhooks::DeliveryStatus;

use super::metrics::{BUCKETS, set_gauge};
use crate::db::entities::{campaign, outbox_event, webhook_delivery};
use crate::state::AppState;

/// How often the collector queries the database.
pub const COLLECT_EVERY: Duration = Duration::from_secs(15);
/// How often histograms are folded so their memory stays bounded between scrapes.
const UPKEEP_EVERY: Duration = Duration::from_secs(5);

/// `WM_METRICS_LISTEN`: an address, or none when the flag is empty (metrics off).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetricsListen(pub Option<SocketAddr>);

/// Parses `WM_METRICS_LISTEN` (`127.0.0.1:9464`; empty turns metrics off).
pub fn parse_listen(s: &str) -> Result<MetricsListen, String> {
    let s = s.trim();
    if s.is_empty() {
        return Ok(MetricsListen(None));
    }
    s.parse().map(|a| MetricsListen(Some(a))).map_err(|_| {
        format!("{s:?} is not an address like 127.0.0.1:9464 (empty turns metrics off)")
    })
}

/// A Prometheus recorder with this server's buckets, not installed: the binary installs it
/// globally, a test sets it as its local recorder and renders it.
pub fn recorder() -> metrics_exporter_prometheus::PrometheusRecorder {
    let builder = PrometheusBuilder::new();
    // Infallible: the bucket list is a non-empty constant.
    let builder = builder
        .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), BUCKETS)
        .unwrap_or_else(|_| PrometheusBuilder::new());
    builder.build_recorder()
}

/// The running metrics listener; stops when dropped.
pub struct Exporter {
    task: JoinHandle<()>,
    /// Where it listens.
    pub addr: SocketAddr,
}

impl Drop for Exporter {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Installs the global recorder and serves `GET /metrics` on `addr`; `None` (an empty
/// `WM_METRICS_LISTEN`) turns metrics off, and every `metrics` call stays a no-op.
pub async fn serve(addr: Option<SocketAddr>, state: &AppState) -> anyhow::Result<Option<Exporter>> {
    let Some(addr) = addr else {
        return Ok(None);
    };
    let recorder = recorder();
    let handle = recorder.handle();
    metrics::set_global_recorder(recorder)
        .map_err(|e| anyhow::anyhow!("installing the metrics recorder: {e}"))?;
    super::metrics::describe();
    super::metrics::cache_global_handles();
    let listener = crate::listener::bind(
        addr,
        "--metrics-listen / WM_METRICS_LISTEN (empty turns metrics off)",
    )
    .await?;
    let addr = listener.local_addr()?;
    let state = state.clone();
    let scrape = handle.clone();
    let app = axum::Router::new().route(
        "/metrics",
        get(move || {
            let (state, handle) = (state.clone(), scrape.clone());
            async move { render(&state, &handle) }
        }),
    );
    let task = tokio::spawn(async move {
        let upkeep = async {
            loop {
                tokio::time::sleep(UPKEEP_EVERY).await;
                handle.run_upkeep();
            }
        };
        tokio::select! {
            served = axum::serve(listener, app) => {
                if let Err(e) = served {
                    tracing::error!(error = %e, "metrics listener stopped");
                }
            }
            _ = upkeep => {}
        }
    });
    tracing::info!(%addr, "metrics at GET /metrics");
    Ok(Some(Exporter { task, addr }))
}

/// The text exposition, with the pool gauges read at scrape time.
pub fn render(state: &AppState, handle: &PrometheusHandle) -> axum::response::Response {
    pool_gauges(state);
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        handle.render(),
    )
        .into_response()
}

/// Runs [`collect_once`] every [`COLLECT_EVERY`] until cancelled.
pub async fn collector(state: AppState, cancel: CancellationToken) {
    loop {
        if let Err(e) = collect_once(&state).await {
            tracing::warn!(error = %format!("{e:#}"), "metrics collector failed");
        }
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = tokio::time::sleep(COLLECT_EVERY) => {}
        }
    }
}

/// Refreshes the gauges that come from the database (a few indexed counts) and the pool.
pub async fn collect_once(state: &AppState) -> anyhow::Result<()> {
    pool_gauges(state);
    let conn = &state.db.conn;
    for status in [
        CampaignStatus::Scheduled,
        CampaignStatus::Sending,
        CampaignStatus::Paused,
    ] {
        let of_status = campaign::Entity::find()
            .select_only()
            .column(campaign::Column::Id)
            .filter(campaign::Column::Status.eq(status))
            .into_query();
        let n = crate::db::campaigns::count_over(conn, of_status)
            .await?
            .stats
            .pending;
        set_gauge(
            "wm_recipients_pending",
            Some(("campaign_status", status.as_str())),
            n as f64,
        );
    }
    for (status, label) in [
        (DeliveryStatus::Pending, "pending"),
        (DeliveryStatus::Failed, "failed"),
    ] {
        let n = webhook_delivery::Entity::find()
            .filter(webhook_delivery::Column::Status.eq(status))
            .count(conn)
            .await?;
        set_gauge("wm_webhook_queue_depth", Some(("status", label)), n as f64);
    }
    let oldest: Option<i64> = outbox_event::Entity::find()
        .select_only()
        .column(outbox_event::Column::CreatedAt)
        .filter(outbox_event::Column::ProcessedAt.is_null())
        .order_by_asc(outbox_event::Column::CreatedAt)
        .into_tuple()
        .one(conn)
        .await?;
    let lag_ms = oldest.map_or(0, |at| state.now_ms().saturating_sub(at).max(0));
    set_gauge("wm_outbox_lag_seconds", None, lag_ms as f64 / 1000.0);
    Ok(())
}

/// Connections of the sqlx pool under sea-orm: open minus idle are in use.
fn pool_gauges(state: &AppState) {
    let conn = &state.db.conn;
    let (size, idle, max) = match state.db.backend() {
        DbBackend::Sqlite => {
            let p = conn.get_sqlite_connection_pool();
            (p.size(), p.num_idle(), p.options().get_max_connections())
        }
        DbBackend::Postgres => {
            let p = conn.get_postgres_connection_pool();
            (p.size(), p.num_idle(), p.options().get_max_connections())
        }
        _ => return,
    };
    let idle = u32::try_from(idle).unwrap_or(u32::MAX).min(size);
    set_gauge(
        "wm_db_pool_connections",
        Some(("state", "in_use")),
        f64::from(size - idle),
    );
    set_gauge(
        "wm_db_pool_connections",
        Some(("state", "idle")),
        f64::from(idle),
    );
    set_gauge("wm_db_pool_max_connections", None, f64::from(max));
}
