//! Throughput of the send endpoint on loopback.
//!
//! `perf_smoke` runs always with a low bar; `throughput` is the measurement
//! (run: `cargo test -p wm-fake-graph --release --test perf -- --ignored --nocapture`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use wm_fake_graph::{FakeGraph, StatusOptions};

/// Sends `total` template messages with `concurrency` requests in flight;
/// returns sends per second.
async fn blast(fake: &FakeGraph, total: usize, concurrency: usize) -> f64 {
    let client = client();
    let url = Arc::new(messages_url(fake, PNID));
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..concurrency {
        let (client, url, next) = (client.clone(), url.clone(), next.clone());
        tasks.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= total {
                    break;
                }
                let body = template_body(&format!("1650{i:07}"), "order_update", &["Ann", "A-1"]);
                let resp = client
                    .post(url.as_str())
                    .bearer_auth(TOKEN)
                    .json(&body)
                    .send()
                    .await
                    .unwrap();
                assert_eq!(resp.status().as_u16(), 200);
                let _ = resp.bytes().await.unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    total as f64 / started.elapsed().as_secs_f64()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn perf_smoke() {
    let fake = fake().await;
    let rate = blast(&fake, 2_000, 32).await;
    eprintln!("perf_smoke: {rate:.0} sends/s");
    assert_eq!(fake.accepted_count(), 2_000);
    assert!(rate > 200.0, "{rate}");
    fake.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "measurement; run in release with --ignored --nocapture"]
async fn throughput() {
    let fake = fake().await;
    blast(&fake, 2_000, 64).await; // warm-up
    let rate = blast(&fake, 30_000, 64).await;
    eprintln!("throughput (no webhooks): {rate:.0} sends/s");
    assert!(rate >= 3_000.0, "{rate}");
    fake.shutdown().await;

    let (fake, rx) = fake_with_receiver(StatusOptions::default()).await;
    let rate = blast(&fake, 20_000, 64).await;
    eprintln!("throughput (with sent+delivered webhooks to a local receiver): {rate:.0} sends/s");
    assert!(fake.wait_webhooks_idle(Duration::from_secs(60)).await);
    let stats = fake.stats();
    eprintln!(
        "webhooks acked {} of {}, receiver saw {}",
        stats.webhook_acked,
        stats.webhooks,
        rx.received().len()
    );
    fake.shutdown().await;

    let batched = StatusOptions {
        max_batch: 50,
        ..StatusOptions::default()
    };
    let (fake, rx) = fake_with_receiver(batched).await;
    let rate = blast(&fake, 20_000, 64).await;
    eprintln!("throughput (webhooks batched up to 50 statuses): {rate:.0} sends/s");
    assert!(fake.wait_webhooks_idle(Duration::from_secs(60)).await);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(fake.wait_webhooks_idle(Duration::from_secs(60)).await);
    eprintln!(
        "statuses received {} in {} webhooks",
        rx.statuses().len(),
        rx.received().len()
    );
    assert!(rate >= 3_000.0, "{rate}");
    fake.shutdown().await;
}
