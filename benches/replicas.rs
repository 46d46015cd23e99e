//! Replica benchmark: `REPLICAS` release `wm-server` processes (default 3) on one PostgreSQL
//! database, sending `CAMPAIGNS` campaigns (default 1, one sender number each, unpaced) of
//! `CONTACTS` recipients each (default 5,000) through the fake Cloud API, then delivering a
//! backlog of `EVENTS` webhook events (default 5,000) to a local receiver. Prints messages/s
//! (first to last accepted by the platform) and deliveries/s (first to last received).
//!
//! ```sh
//! cargo build --release -p wm-server
//! WM_BENCH_DATABASE_URL=postgres://… REPLICAS=3 CAMPAIGNS=3 \
//!     cargo bench -p wm-benches --bench replicas
//! ```
//! `WM_SERVER_BIN` points at another binary (default `target/release/wm-server`).

#[path = "../crates/wm-server/tests/it/replicas_harness.rs"]
mod harness;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use harness::{
    ADMIN, Replica, balancer, call, free_port, fresh_pg_database, organisation, platform, serve,
    start_replicas,
};
use serde_json::json;
use uuid::Uuid;
use wm_fake_graph::NumberSpec;
use wm_types::events::{ContactEventData, EventKind};

const APP_SECRET: &str = "bench-app-secret";
const WABA: &str = "209000000000001";

fn env_num(k: &str, default: usize) -> usize {
    std::env::var(k)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> anyhow::Result<()> {
    let url = std::env::var("WM_BENCH_DATABASE_URL")
        .map_err(|_| anyhow::anyhow!("set WM_BENCH_DATABASE_URL to a PostgreSQL server"))?;
    let replicas_n = env_num("REPLICAS", 3).max(1);
    let campaigns_n = env_num("CAMPAIGNS", 1).max(1);
    let contacts = env_num("CONTACTS", 5_000);
    let events = env_num("EVENTS", 5_000);
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let bin = std::env::var("WM_SERVER_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root.join("target/release/wm-server"));
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()?;
    let db = fresh_pg_database(&url).await;
    let dir = std::env::temp_dir().join(format!("wm-bench-replicas-{}", Uuid::new_v4()));
    std::fs::create_dir_all(&dir)?;

    // The platform, with one number per campaign, behind a balancer for its webhooks.
    let ports: Vec<u16> = (0..replicas_n).map(|_| free_port()).collect();
    let lb = balancer(http.clone(), ports.clone()).await;
    let fake = platform(&lb, APP_SECRET, WABA).await;
    let pnid = |i: usize| format!("10900000000{i:04}");
    let e164 = |i: usize| format!("+5255000{i:05}");
    for i in 0..campaigns_n {
        fake.register_number(NumberSpec {
            phone_number_id: pnid(i),
            waba_id: WABA.into(),
            display_phone_number: e164(i).trim_start_matches('+').into(),
            access_token: "EAAG-bench".into(),
        });
    }
    let graph = fake.url();
    let env = [
        ("RUST_LOG", "warn".to_owned()),
        ("WM_PROVIDER_MPS", "0".to_owned()),
        ("WM_RATE_LIMIT_PER_MINUTE", "1000000000".to_owned()),
    ];
    let replicas = start_replicas(&http, &ports, |i, p| {
        let log = dir.join(format!("replica-{i}.log"));
        Replica::start(&bin, &db, &graph, APP_SECRET, p, log, &env)
    })
    .await;
    let bases: Vec<String> = replicas.iter().map(Replica::base).collect();
    let admin = |path: &str| format!("{}/admin{path}", bases[0]);
    let post = reqwest::Method::POST;

    // An organisation with its numbers, the template and the contacts, tagged per campaign.
    let (org_id, user) = organisation(&http, &bases[0], "Bench").await;
    let at = |path: &str| admin(&format!("/organizations/{org_id}{path}"));
    let scopes = [
        "contacts:read",
        "contacts:write",
        "campaigns:read",
        "campaigns:write",
        "webhooks:read",
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
    let mut numbers = Vec::new();
    for i in 0..campaigns_n {
        let body = json!({"numberE164": e164(i), "displayName": format!("N{i}"), "platformPhoneNumberId": pnid(i), "wabaId": WABA, "accessToken": "EAAG-bench"});
        let (s, n) = call(&http, post.clone(), at("/phone-numbers"), ADMIN, Some(body)).await;
        anyhow::ensure!(s == 201, "phone number: {n}");
        numbers.push(n["id"].as_str().unwrap_or_default().to_owned());
    }
    call(&http, post.clone(), at("/templates/sync"), ADMIN, None).await;
    let (_, templates) = call(
        &http,
        reqwest::Method::GET,
        format!("{}/templates", bases[0]),
        &key,
        None,
    )
    .await;
    let template = templates["data"][0]["id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let seeded = Instant::now();
    let total = campaigns_n * contacts;
    let created = futures::stream::iter(0..total)
        .map(|i| {
            let (http, base, key) = (http.clone(), bases[i % bases.len()].clone(), key.clone());
            let body = json!({"fullName": format!("Ana {i}"), "primaryPhone": format!("+52155{i:08}"),
                              "consent": {"given": true}, "tags": [format!("c{}", i % campaigns_n)]});
            async move { call(&http, reqwest::Method::POST, format!("{base}/contacts"), &key, Some(body)).await.0 }
        })
        .buffer_unordered(32)
        .filter(|s| futures::future::ready(*s == 201))
        .count()
        .await;
    anyhow::ensure!(created == total, "{created} of {total} contacts created");
    println!(
        "seeded {total} contacts in {:.1}s",
        seeded.elapsed().as_secs_f64()
    );

    // The campaigns, sent together.
    let mut campaigns = Vec::new();
    for (i, number) in numbers.iter().enumerate() {
        let (_, c) = call(&http, post.clone(), format!("{}/campaigns", bases[0]), &key,
            Some(json!({"name": format!("C{i}"), "phoneNumberId": number, "templateId": template, "variables": {"1": "{{firstName}}"}}))).await;
        let id = c["id"].as_str().unwrap_or_default().to_owned();
        call(
            &http,
            post.clone(),
            format!("{}/campaigns/{id}/recipients", bases[0]),
            &key,
            Some(json!({"tag": format!("c{i}")})),
        )
        .await;
        campaigns.push(id);
    }
    call(
        &http,
        post.clone(),
        at("/wallet/top-ups"),
        ADMIN,
        Some(json!({"amount": 1_000_000.0})),
    )
    .await;
    for id in &campaigns {
        let (s, b) = call(
            &http,
            post.clone(),
            format!("{}/campaigns/{id}/send", bases[0]),
            &key,
            Some(json!({})),
        )
        .await;
        anyhow::ensure!(s == 200, "send: {b}");
    }
    let started = Instant::now();
    while fake.accepted().len() < total {
        anyhow::ensure!(
            started.elapsed() < Duration::from_secs(600),
            "only {} of {total} sent",
            fake.accepted().len()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let times: Vec<f64> = fake.accepted().iter().map(|m| m.elapsed_ms).collect();
    let first = times.iter().copied().fold(f64::MAX, f64::min);
    let last = times.iter().copied().fold(0.0, f64::max);
    let mps = total as f64 / ((last - first).max(1.0) / 1000.0);
    let mut sorted = times.clone();
    sorted.sort_by(f64::total_cmp);
    let pause = sorted.windows(2).map(|w| w[1] - w[0]).fold(0.0, f64::max);

    // A backlog of webhook events, delivered by whichever replicas claim them.
    let arrivals: Arc<Mutex<Vec<Instant>>> = Arc::default();
    let sink = arrivals.clone();
    let receiver = axum::Router::new().route(
        "/hook",
        axum::routing::post(move || {
            let sink = sink.clone();
            async move {
                sink.lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(Instant::now());
                "ok"
            }
        }),
    );
    let hook = format!("{}/hook", serve(receiver).await);
    let (s, w) = call(
        &http,
        post.clone(),
        format!("{}/webhooks", bases[0]),
        &key,
        Some(json!({"url": hook, "events": ["contact.updated"]})),
    )
    .await;
    anyhow::ensure!(s == 201, "webhook: {w}");
    let store = wm_server::db::Db::connect(&db).await?;
    let org_uuid: Uuid = org_id.parse()?;
    let txn = store.write().await?;
    for i in 0..events {
        let data = ContactEventData {
            organization_id: org_uuid,
            contact_id: Uuid::now_v7(),
            full_name: Some(format!("Contact {i}")),
            primary_phone: None,
            primary_email: None,
            lifecycle_stage: None,
            changed_fields: Some(vec!["fullName".into()]),
            previous_stage: None,
        };
        wm_server::db::outbox::push(
            &*txn,
            org_uuid,
            EventKind::ContactUpdated,
            &data,
            chrono::Utc::now().timestamp_millis(),
        )
        .await?;
    }
    txn.commit().await?;
    let backlog = Instant::now();
    while arrivals.lock().unwrap_or_else(|p| p.into_inner()).len() < events {
        anyhow::ensure!(
            backlog.elapsed() < Duration::from_secs(600),
            "deliveries stalled"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let got = arrivals.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let span =
        got.iter().max().copied().unwrap_or(backlog) - got.iter().min().copied().unwrap_or(backlog);
    let dps = events as f64 / span.as_secs_f64().max(0.001);

    println!(
        "replicas={replicas_n} campaigns={campaigns_n} messages={total}: {mps:.0} msg/s \
         (longest pause {pause:.0} ms); \
         {events} webhook deliveries: {dps:.0} deliveries/s"
    );
    drop(replicas);
    if std::env::var_os("KEEP_LOGS").is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    } else {
        println!("logs in {}", dir.display());
    }
    Ok(())
}
