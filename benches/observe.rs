//! What request logging and metrics cost on `GET /contacts/{id}`, measured in process through
//! the whole router (auth, rate limit, request log, metrics layer, handler, SQLite in memory),
//! without the network's noise.
//!
//! A process can install a global subscriber and recorder only once, so run it twice and
//! compare the two `get_contact` times:
//!
//! ```sh
//! WM_BENCH_OBSERVE=off cargo bench -p wm-benches --bench observe
//! WM_BENCH_OBSERVE=on  cargo bench -p wm-benches --bench observe
//! ```
//!
//! (`logs` or `metrics` install one of the two.) `on` installs what the binary installs: the text subscriber at `info` (lines formatted
//! and written, to a sink here) and the Prometheus recorder with its listener. `off`
//! installs neither, so the `tracing` and `metrics` calls find nobody listening.
//!
//! On a shared machine wall time drifts by tens of percent between runs, so each run also
//! prints the process's CPU time per request over `CPU_REQUESTS` (default 20,000) requests
//! (Linux: utime + stime from `/proc/self/stat`), which scheduling noise barely moves.

use std::hint::black_box;
use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use criterion::{Criterion, criterion_group, criterion_main};
use tower::ServiceExt;
use wm_server::db::Db;
use wm_server::observe::{LogFormat, subscriber};
use wm_server::state::{AppState, Settings};

/// The router, a key and a contact id, with logging and metrics as `WM_BENCH_OBSERVE` says.
fn setup(rt: &tokio::runtime::Runtime) -> (axum::Router, String, String) {
    let mode = std::env::var("WM_BENCH_OBSERVE").unwrap_or_default();
    let logs = mode == "on" || mode == "logs";
    let metrics = mode == "on" || mode == "metrics";
    rt.block_on(async {
        let db = Db::connect("sqlite::memory:").await.expect("database");
        db.migrate().await.expect("migrate");
        let mut settings = Settings::new("bench-admin");
        settings.rate_limit_per_minute = u32::MAX;
        let state = AppState::new(db, Arc::new(wm_core::time::SystemClock), settings);
        if logs {
            let filter = tracing_subscriber::EnvFilter::new("info");
            tracing::subscriber::set_global_default(subscriber(
                LogFormat::Text,
                filter,
                std::io::sink,
            ))
            .expect("subscriber");
        }
        if metrics {
            let addr = "127.0.0.1:0".parse().ok();
            let exporter = wm_server::observe::exporter::serve(addr, &state)
                .await
                .expect("metrics");
            std::mem::forget(exporter);
        }
        let demo = wm_server::demo::seed(&state).await.expect("demo");
        let router = axum::Router::new().nest("/api/v1", wm_server::router(state));
        let list = router
            .clone()
            .oneshot(get("/api/v1/contacts?pageSize=1", &demo.api_key))
            .await
            .expect("list");
        assert_eq!(list.status(), StatusCode::OK);
        let body = axum::body::to_bytes(list.into_body(), usize::MAX)
            .await
            .expect("body");
        let v: serde_json::Value = serde_json::from_slice(&body).expect("json");
        let id = v["data"][0]["id"].as_str().expect("a contact").to_owned();
        println!("logs {logs}, metrics {metrics}");
        (router, demo.api_key, id)
    })
}

fn get(path: &str, key: &str) -> Request<Body> {
    Request::get(path)
        .header("authorization", format!("Bearer {key}"))
        .body(Body::empty())
        .expect("request")
}

fn get_contact(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let (router, key, id) = setup(&rt);
    let path = format!("/api/v1/contacts/{id}");
    cpu_per_request(&rt, &router, &path, &key);
    c.bench_function("get_contact", |b| {
        b.iter(|| {
            let res = rt
                .block_on(router.clone().oneshot(get(&path, &key)))
                .expect("answer");
            assert_eq!(res.status(), StatusCode::OK);
            black_box(res)
        });
    });
}

/// utime + stime of this process, in clock ticks (usually 10 ms), when `/proc` has them.
fn cpu_ticks() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command (which may hold spaces) start after its closing parenthesis;
    // utime and stime are the 14th and 15th fields of the line.
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(utime + stime)
}

/// Prints the CPU time per request over a fixed number of requests.
fn cpu_per_request(rt: &tokio::runtime::Runtime, router: &axum::Router, path: &str, key: &str) {
    let n: u64 = std::env::var("CPU_REQUESTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let Some(before) = cpu_ticks() else {
        return;
    };
    rt.block_on(async {
        for _ in 0..n {
            let res = router
                .clone()
                .oneshot(get(path, key))
                .await
                .expect("answer");
            assert_eq!(res.status(), StatusCode::OK);
        }
    });
    let Some(after) = cpu_ticks() else {
        return;
    };
    // Linux reports ticks of 1/100 s (USER_HZ) to user space.
    let us = (after - before) as f64 * 10_000.0 / n as f64;
    println!("cpu_us_per_request {us:.1} over {n} requests");
}

criterion_group!(benches, get_contact);
criterion_main!(benches);
