//! Webhook delivery benchmark: throughput of the delivery engine to a local 2xx receiver,
//! and latency from an event's commit to its first delivery attempt with the real worker
//! loop. SQLite file database, everything on 127.0.0.1.
//!
//! `cargo bench -p wm-benches --bench delivery` (env `EVENTS`, default 5000; `RATE`,
//! events/s for the latency run, default 200).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::routing::post;
use chrono::Utc;
use uuid::Uuid;
use wm_server::db::{Db, outbox};
use wm_server::state::{AppState, Settings};
use wm_server::worker::webhooks::WebhookWorker;
use wm_types::events::{ContactEventData, EventKind};
use wm_types::webhooks::CreateWebhook;

type Arrivals = Arc<Mutex<Vec<(i64, i64)>>>;

async fn receive(State(arrivals): State<Arrivals>, body: Bytes) -> &'static str {
    let now = Utc::now().timestamp_millis();
    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(&body)
        && let Some(created) = v["createdAt"].as_str()
        && let Ok(t) = chrono::DateTime::parse_from_rfc3339(created)
    {
        arrivals
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((t.timestamp_millis(), now));
    }
    "ok"
}

async fn receiver() -> (String, Arrivals) {
    let arrivals: Arrivals = Arc::default();
    let app = axum::Router::new()
        .route("/hook", post(receive))
        .with_state(arrivals.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/hook", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, app).await.ok() });
    (url, arrivals)
}

async fn setup(url: &str) -> anyhow::Result<(AppState, Uuid, tempdir::Dir)> {
    let dir = tempdir::Dir::new()?;
    let db = Db::connect(&format!("sqlite://{}/bench.db?mode=rwc", dir.path())).await?;
    db.migrate().await?;
    let mut settings = Settings::new("bench");
    settings.allow_insecure_webhooks = true;
    let state = AppState::new(db, Arc::new(wm_core::time::SystemClock), settings);
    let txn = state.db.write().await?;
    let org = wm_server::services::organizations::create(
        &*txn,
        wm_types::admin::CreateOrganization {
            name: "bench".into(),
            currency: None,
            timezone: None,
            included_utility_messages: None,
        },
        state.now_ms(),
    )
    .await
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    txn.commit().await?;
    wm_server::services::webhooks::create(
        &state,
        org.id,
        CreateWebhook {
            url: url.to_owned(),
            events: vec![EventKind::ContactCreated],
            description: None,
        },
    )
    .await
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok((state, org.id, dir))
}

async fn event(state: &AppState, org: Uuid, i: usize) -> anyhow::Result<()> {
    let data = ContactEventData {
        organization_id: org,
        contact_id: Uuid::now_v7(),
        full_name: Some(format!("Contact {i}")),
        primary_phone: Some(format!("+52155{i:08}")),
        primary_email: None,
        lifecycle_stage: Some("Lead".into()),
        changed_fields: None,
        previous_stage: None,
    };
    let txn = state.db.write().await?;
    outbox::push(&*txn, org, EventKind::ContactCreated, &data, state.now_ms()).await?;
    txn.commit().await?;
    Ok(())
}

fn percentile(sorted: &[i64], p: f64) -> i64 {
    if sorted.is_empty() {
        return 0;
    }
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx]
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let events: usize = std::env::var("EVENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5000);
    let rate: u64 = std::env::var("RATE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);

    // 1. Throughput: a backlog of events, delivered by run_once passes.
    let (url, arrivals) = receiver().await;
    let (state, org, _dir) = setup(&url).await?;
    for i in 0..events {
        event(&state, org, i).await?;
    }
    let worker = WebhookWorker::new(state.clone())?;
    let started = Instant::now();
    let mut delivered = 0;
    while delivered < events {
        let out = worker.run_once().await?;
        if out.attempted == 0 {
            break;
        }
        delivered += out.delivered;
    }
    let secs = started.elapsed().as_secs_f64();
    println!(
        "throughput: {delivered} deliveries in {secs:.2} s = {:.0} deliveries/s (fan-out included; receiver got {})",
        delivered as f64 / secs,
        arrivals.lock().map(|a| a.len()).unwrap_or(0)
    );

    // 2. Latency: events committed at a steady rate while the real worker loop runs.
    let (url, arrivals) = receiver().await;
    let (state, org, _dir2) = setup(&url).await?;
    let cancel = tokio_util::sync::CancellationToken::new();
    let handles = wm_server::worker::spawn_all(&state, cancel.clone())?;
    let total = (rate * 10) as usize;
    let gap = Duration::from_micros(1_000_000 / rate.max(1));
    let mut tick = tokio::time::interval(gap);
    for i in 0..total {
        tick.tick().await;
        event(&state, org, i).await?;
    }
    let deadline = Instant::now() + Duration::from_secs(15);
    while arrivals.lock().map(|a| a.len()).unwrap_or(0) < total && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    cancel.cancel();
    for h in handles {
        let _ = h.await;
    }
    let mut lat: Vec<i64> = arrivals
        .lock()
        .map(|a| a.iter().map(|(created, got)| got - created).collect())
        .unwrap_or_default();
    lat.sort_unstable();
    println!(
        "commit → first attempt over {} events at {rate}/s: p50 {} ms, p99 {} ms, max {} ms ({} arrived)",
        total,
        percentile(&lat, 0.50),
        percentile(&lat, 0.99),
        lat.last().copied().unwrap_or(0),
        lat.len()
    );
    Ok(())
}

/// A temporary directory removed on drop (kept dependency-free).
mod tempdir {
    /// The directory.
    pub struct Dir(std::path::PathBuf);

    impl Dir {
        /// Creates a fresh directory under the system temp dir.
        pub fn new() -> std::io::Result<Dir> {
            let p =
                std::env::temp_dir().join(format!("wm-bench-{}", uuid::Uuid::now_v7().simple()));
            std::fs::create_dir_all(&p)?;
            Ok(Dir(p))
        }
        /// Its path.
        pub fn path(&self) -> String {
            self.0.display().to_string()
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}
