//! Webhook intake at the platform's speed: a release `wm-server` process sends `MESSAGES`
//! template messages (default 10,000) through the fake Cloud API, then receives a signed
//! `delivered` and a signed `read` status webhook for each, one status per POST as Meta
//! sends them, from `CONNECTIONS` connections (default 64) on this machine. Prints:
//!
//! - **answered**: POSTs per second (first sent to last answered) with p50 / p99 latency;
//!   anchor: a bare axum route on this process answering the same POSTs through the same
//!   client and connections (no signature check, no database);
//! - **applied**: statuses per second from the first POST until the campaign's stats show
//!   every message READ and no kept webhook is left unapplied, and the lag after the last
//!   POST was answered; anchor: one-row INSERT transactions per second on the same database.
//!
//! ```sh
//! cargo build --release -p wm-server
//! cargo bench -p wm-benches --bench intake                                   # SQLite
//! WM_BENCH_DATABASE_URL=postgres://… cargo bench -p wm-benches --bench intake  # PostgreSQL
//! ```
//! `WM_SERVER_BIN` points at another binary (default `target/release/wm-server`);
//! `SUBSCRIBED=1` subscribes a local receiver to `message.sent`, so every status that moves a
//! message is also announced (and delivered) as an event.

#[path = "../crates/wm-server/tests/it/replicas_harness.rs"]
mod harness;
#[path = "process.rs"]
mod process;

use std::time::{Duration, Instant};

use futures::StreamExt;
use harness::{ADMIN, Replica, call, free_port, healthy, organisation, platform_with, serve};
use process::env_num;
use sea_orm::{ConnectionTrait, Statement};
use serde_json::{Value, json};
use uuid::Uuid;
use wm_fake_graph::{NumberSpec, StatusOptions};

const APP_SECRET: &str = "bench-app-secret";
const WABA: &str = "209000000000001";
const PNID: &str = "109000000000001";

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// One POST per body from `conns` connections; (POSTs/s first sent to last answered,
/// sorted latencies in ms, when the last one was answered, refusals).
async fn post_all(
    http: &reqwest::Client,
    url: &str,
    bodies: &[(Vec<u8>, String)],
    conns: usize,
) -> (f64, Vec<f64>, Instant, usize) {
    let started = Instant::now();
    let results: Vec<(f64, bool)> = futures::stream::iter(bodies.iter())
        .map(|(body, sig)| {
            let req = http
                .post(url)
                .header("content-type", "application/json")
                .header("x-hub-signature-256", sig)
                .body(body.clone());
            async move {
                let t = Instant::now();
                let ok = matches!(req.send().await, Ok(r) if r.status().is_success());
                (t.elapsed().as_secs_f64() * 1000.0, ok)
            }
        })
        .buffer_unordered(conns)
        .collect()
        .await;
    let done = Instant::now();
    let refused = results.iter().filter(|(_, ok)| !ok).count();
    let mut ms: Vec<f64> = results.into_iter().map(|(ms, _)| ms).collect();
    ms.sort_by(f64::total_cmp);
    let rate = bodies.len() as f64 / (done - started).as_secs_f64();
    (rate, ms, done, refused)
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> anyhow::Result<()> {
    let n = env_num("MESSAGES", 10_000);
    let conns = env_num("CONNECTIONS", 64);
    let process::Setup { bin, dir, db, kind } = process::setup("intake").await?;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(120))
        .pool_max_idle_per_host(conns)
        .build()?;
    let port = free_port();
    let webhook_url = format!("http://127.0.0.1:{port}/api/v1/platform/whatsapp/webhook");

    // The platform: it accepts the sends and posts no status by itself (the load below
    // posts them, as fast as the connections allow).
    let quiet = StatusOptions {
        enabled: false,
        ..Default::default()
    };
    let fake = platform_with(&webhook_url, APP_SECRET, WABA, quiet).await;
    fake.register_number(NumberSpec {
        phone_number_id: PNID.into(),
        waba_id: WABA.into(),
        display_phone_number: "525500000001".into(),
        access_token: "EAAG-bench".into(),
    });
    let server = Replica::start(
        &bin,
        &db,
        &fake.url(),
        APP_SECRET,
        port,
        dir.join("server.log"),
        &[
            ("RUST_LOG", "warn".to_owned()),
            ("WM_PROVIDER_MPS", "0".to_owned()),
            ("WM_RATE_LIMIT_PER_MINUTE", "1000000000".to_owned()),
        ],
    );
    let base = server.base();
    healthy(&http, &base).await;
    let post = reqwest::Method::POST;

    // An organisation with the number, the template and `n` contacts, sent one campaign.
    let (org, user) = organisation(&http, &base, "Intake").await;
    let at = |path: &str| format!("{base}/admin/organizations/{org}{path}");
    let scopes = [
        "contacts:read",
        "contacts:write",
        "campaigns:read",
        "campaigns:write",
        "webhooks:write",
    ];
    let (_, k) = call(
        &http,
        post.clone(),
        at("/api-keys"),
        ADMIN,
        Some(json!({"name": "bench", "userId": user, "scopes": scopes})),
    )
    .await;
    let key = k["key"].as_str().unwrap_or_default().to_owned();
    let body = json!({"numberE164": "+525500000001", "displayName": "Bench", "platformPhoneNumberId": PNID, "wabaId": WABA, "accessToken": "EAAG-bench"});
    let (s, number) = call(&http, post.clone(), at("/phone-numbers"), ADMIN, Some(body)).await;
    anyhow::ensure!(s == 201, "phone number: {number}");
    call(&http, post.clone(), at("/templates/sync"), ADMIN, None).await;
    let (_, templates) = call(
        &http,
        reqwest::Method::GET,
        format!("{base}/templates"),
        &key,
        None,
    )
    .await;
    let template = templates["data"][0]["id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let subscribed = std::env::var("SUBSCRIBED").is_ok_and(|v| v == "1");
    if subscribed {
        let sink =
            serve(axum::Router::new().route("/hook", axum::routing::post(|| async { "ok" }))).await;
        let (s, w) = call(
            &http,
            post.clone(),
            format!("{base}/webhooks"),
            &key,
            Some(json!({"url": format!("{sink}/hook"), "events": ["message.sent"]})),
        )
        .await;
        anyhow::ensure!(s == 201, "webhook: {w}");
    }
    let created = futures::stream::iter(0..n)
        .map(|i| {
            let (http, base, key) = (http.clone(), base.clone(), key.clone());
            let body = json!({"fullName": format!("Ana {i}"), "primaryPhone": format!("+52155{i:08}"),
                              "consent": {"given": true}, "tags": ["bench"]});
            async move { call(&http, reqwest::Method::POST, format!("{base}/contacts"), &key, Some(body)).await.0 }
        })
        .buffer_unordered(16)
        .filter(|s| futures::future::ready(*s == 201))
        .count()
        .await;
    anyhow::ensure!(created == n, "{created} of {n} contacts created");
    let (_, c) = call(
        &http,
        post.clone(),
        format!("{base}/campaigns"),
        &key,
        Some(
            json!({"name": "Intake", "phoneNumberId": number["id"], "templateId": template,
                    "variables": {"1": "{{firstName}}"}}),
        ),
    )
    .await;
    let campaign = c["id"].as_str().unwrap_or_default().to_owned();
    call(
        &http,
        post.clone(),
        format!("{base}/campaigns/{campaign}/recipients"),
        &key,
        Some(json!({"tag": "bench"})),
    )
    .await;
    call(
        &http,
        post.clone(),
        at("/wallet/top-ups"),
        ADMIN,
        Some(json!({"amount": 1_000_000.0})),
    )
    .await;
    let (s, b) = call(
        &http,
        post.clone(),
        format!("{base}/campaigns/{campaign}/send"),
        &key,
        Some(json!({})),
    )
    .await;
    anyhow::ensure!(s == 200, "send: {b}");
    let stats = |http: reqwest::Client, key: String| {
        let url = format!("{base}/campaigns/{campaign}");
        async move {
            let (_, c) = call(&http, reqwest::Method::GET, url, &key, None).await;
            c["stats"].clone()
        }
    };
    let sending = Instant::now();
    loop {
        let s: Value = stats(http.clone(), key.clone()).await;
        if s["sent"].as_u64() == Some(n as u64) && s["pending"].as_u64() == Some(0) {
            break;
        }
        anyhow::ensure!(
            sending.elapsed() < Duration::from_secs(900),
            "the send stalled: {s}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    println!(
        "{kind}: {n} messages sent in {:.1} s",
        sending.elapsed().as_secs_f64()
    );

    // The platform's statuses: `delivered` for every message, then `read`, one per POST.
    let accepted = fake.accepted();
    let mut bodies = Vec::with_capacity(2 * n);
    for status in ["delivered", "read"] {
        for m in &accepted {
            bodies.push(fake.status_webhook(&m.wamid, status)?);
        }
    }
    let store = sea_orm::Database::connect(&db).await?;
    let backend = store.get_database_backend();
    let unapplied = || async {
        let row = store
            .query_one_raw(Statement::from_string(
                backend,
                "SELECT COUNT(*) AS n FROM platform_events WHERE processed_at IS NULL",
            ))
            .await?;
        anyhow::Ok(row.map_or(0, |r| r.try_get::<i64>("", "n").unwrap_or(0)))
    };

    let first = Instant::now();
    let (rate, ms, answered_at, refused) = post_all(&http, &webhook_url, &bodies, conns).await;
    let applied_at = loop {
        let s: Value = stats(http.clone(), key.clone()).await;
        if s["read"].as_u64() == Some(n as u64) && unapplied().await? == 0 {
            break Instant::now();
        }
        anyhow::ensure!(
            first.elapsed() < Duration::from_secs(900),
            "statuses stalled: {s}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let statuses = bodies.len();
    let applied_rate = statuses as f64 / (applied_at - first).as_secs_f64();
    let lag = applied_at.saturating_duration_since(answered_at);

    // Anchors in the same run: bare axum answering the same POSTs; one-row INSERT
    // transactions on the same database.
    let bare = serve(axum::Router::new().route(
        "/hook",
        axum::routing::post(|_: axum::body::Bytes| async { axum::Json(json!({"received": true})) }),
    ))
    .await;
    let (bare_rate, bare_ms, _, _) = post_all(&http, &format!("{bare}/hook"), &bodies, conns).await;
    store
        .execute_raw(Statement::from_string(
            backend,
            "CREATE TABLE bench_anchor (id TEXT PRIMARY KEY, body TEXT NOT NULL)",
        ))
        .await?;
    let inserts = 2_000;
    let t = Instant::now();
    for i in 0..inserts {
        let txn = sea_orm::TransactionTrait::begin(&store).await?;
        txn.execute_raw(Statement::from_sql_and_values(
            backend,
            match backend {
                sea_orm::DatabaseBackend::Postgres => {
                    "INSERT INTO bench_anchor (id, body) VALUES ($1, $2)"
                }
                _ => "INSERT INTO bench_anchor (id, body) VALUES (?, ?)",
            },
            [Uuid::now_v7().to_string().into(), format!("row {i}").into()],
        ))
        .await?;
        txn.commit().await?;
    }
    let insert_rate = f64::from(inserts) / t.elapsed().as_secs_f64();

    println!(
        "\nwm webhook intake — {kind}, {} cores, {statuses} status POSTs ({n} messages × delivered, read) from {conns} connections{}\n",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        if subscribed {
            ", message.sent subscribed"
        } else {
            ""
        }
    );
    println!(
        "answered: {rate:.0} POSTs/s, p50 {:.1} ms, p99 {:.1} ms, {refused} refused   (anchor bare axum: {bare_rate:.0} POSTs/s, p50 {:.1} ms, p99 {:.1} ms)",
        percentile(&ms, 0.5),
        percentile(&ms, 0.99),
        percentile(&bare_ms, 0.5),
        percentile(&bare_ms, 0.99),
    );
    println!(
        "applied:  {applied_rate:.0} statuses/s from the first POST, the last {:.2} s after the last POST was answered   (anchor: {insert_rate:.0} one-row INSERT transactions/s)",
        lag.as_secs_f64()
    );
    drop(server);
    if std::env::var_os("KEEP_LOGS").is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    } else {
        println!("logs in {}", dir.display());
    }
    Ok(())
}
