//! What an `Idempotency-Key` costs: `POST /contacts` on a release `wm-server` process,
//! `REQUESTS` (default 4,000) from `CONNECTIONS` (default 16) connections without a key, then
//! as many with a fresh key each (the key's row is written before the handler runs and its
//! answer after), then the same again with keys already answered (replays). Anchor: a bare
//! axum route answering the same POSTs through the same client.
//!
//! ```sh
//! cargo build --release -p wm-server
//! cargo bench -p wm-benches --bench keys                                   # SQLite
//! WM_BENCH_DATABASE_URL=postgres://… cargo bench -p wm-benches --bench keys  # PostgreSQL
//! ```

#[path = "../crates/wm-server/tests/it/replicas_harness.rs"]
mod harness;
#[path = "process.rs"]
mod process;

use std::time::{Duration, Instant};

use futures::StreamExt;
use harness::{ADMIN, Replica, call, free_port, healthy, organisation, serve};
use process::env_num;
use serde_json::json;

/// POSTs `n` contacts from `conns` connections; (requests/s, p50 ms, p99 ms).
async fn run(
    http: &reqwest::Client,
    url: &str,
    token: &str,
    n: usize,
    conns: usize,
    key: impl Fn(usize) -> Option<String>,
    offset: usize,
) -> (f64, f64, f64) {
    let started = Instant::now();
    let mut ms: Vec<f64> = futures::stream::iter(0..n)
        .map(|i| {
            let mut req = http.post(url).bearer_auth(token).json(&json!({
                "fullName": format!("Ana {}", i + offset),
                "primaryPhone": format!("+52155{:08}", i + offset),
            }));
            if let Some(k) = key(i) {
                req = req.header("idempotency-key", k);
            }
            async move {
                let t = Instant::now();
                let r = req.send().await;
                assert!(r.is_ok_and(|r| r.status().is_success()));
                t.elapsed().as_secs_f64() * 1000.0
            }
        })
        .buffer_unordered(conns)
        .collect()
        .await;
    let rate = n as f64 / started.elapsed().as_secs_f64();
    ms.sort_by(f64::total_cmp);
    let at = |p: f64| ms[((ms.len() as f64 - 1.0) * p).round() as usize];
    (rate, at(0.5), at(0.99))
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> anyhow::Result<()> {
    let n = env_num("REQUESTS", 4_000);
    let conns = env_num("CONNECTIONS", 16);
    let process::Setup { bin, dir, db, kind } = process::setup("keys").await?;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()?;
    let server = Replica::start(
        &bin,
        &db,
        "http://127.0.0.1:9",
        "bench",
        free_port(),
        dir.join("server.log"),
        &[
            ("RUST_LOG", "warn".to_owned()),
            ("WM_PROVIDER", "simulated".to_owned()),
            ("WM_RATE_LIMIT_PER_MINUTE", "1000000000".to_owned()),
        ],
    );
    let base = server.base();
    healthy(&http, &base).await;
    let (org, user) = organisation(&http, &base, "Keys").await;
    let (_, k) = call(
        &http,
        reqwest::Method::POST,
        format!("{base}/admin/organizations/{org}/api-keys"),
        ADMIN,
        Some(json!({"name": "bench", "userId": user, "scopes": ["contacts:write"]})),
    )
    .await;
    let token = k["key"].as_str().unwrap_or_default().to_owned();
    let url = format!("{base}/contacts");
    // Warm up the connections and the server.
    run(&http, &url, &token, 200, conns, |_| None, 900_000).await;

    let plain = run(&http, &url, &token, n, conns, |_| None, 0).await;
    let keyed = run(&http, &url, &token, n, conns, |i| Some(format!("k-{i}")), n).await;
    let replayed = run(&http, &url, &token, n, conns, |i| Some(format!("k-{i}")), n).await;
    let bare = serve(axum::Router::new().route(
        "/contacts",
        axum::routing::post(|_: axum::body::Bytes| async {
            (
                axum::http::StatusCode::CREATED,
                axum::Json(json!({"id": "x"})),
            )
        }),
    ))
    .await;
    let anchor = run(
        &http,
        &format!("{bare}/contacts"),
        &token,
        n,
        conns,
        |_| None,
        0,
    )
    .await;

    println!(
        "\nwm Idempotency-Key cost — {kind}, {} cores, POST /contacts × {n} from {conns} connections\n",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    for (what, (rate, p50, p99)) in [
        ("without a key", plain),
        ("with a new key each", keyed),
        ("replays of answered keys", replayed),
        ("anchor: bare axum", anchor),
    ] {
        println!("{what:<26} {rate:>8.0} req/s   p50 {p50:>6.2} ms   p99 {p99:>6.2} ms");
    }
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
