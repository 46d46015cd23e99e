//! Scale benchmark: a release `wm-server` process builds organisations of `SIZES` contacts
//! (default `10000,100000`) through `POST /contacts/imports`, while a prober reads one contact
//! every 10 ms; then times the contact lists, then a campaign to everyone: the audience
//! (`{"all":true}`) and a `now` send, while a writer probe updates one contact every 10 ms
//! (its worst latency bounds how long the database writer was held), with the campaign's
//! reads (detail, preview, list, recipients pages and filters) on the draft and while it
//! sends (`scale/campaign.rs`); then one contact in ten writes in and the conversation list
//! and a timeline are timed (`scale/inbox.rs`). Prints, per size: import rows/s, the
//! prober's p50/p99, each read's p50/p99 (20 calls), the audience and send times with the
//! write probe's p99/max, and the server's peak RSS.
//!
//! ```sh
//! cargo build --release -p wm-server
//! SIZES=10000,100000,1000000 cargo bench -p wm-benches --bench scale            # SQLite
//! WM_BENCH_DATABASE_URL=postgres://… cargo bench -p wm-benches --bench scale    # PostgreSQL
//! ```
//! `WM_SERVER_BIN` points at another binary (default `target/release/wm-server`); `INBOX=0`
//! skips the inbox stage.

#[path = "scale/campaign.rs"]
mod campaign;
#[path = "../crates/wm-server/tests/it/replicas_harness.rs"]
mod harness;
#[path = "scale/inbox.rs"]
mod inbox;
#[path = "scale/measure.rs"]
mod measure;
#[path = "process.rs"]
mod process;

use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use harness::{ADMIN, Replica, call, free_port, healthy, organisation};
use measure::{percentile, probe, rss_mb, sorted, timed};
use serde_json::json;
use wm_client::imports::ImportFile;
use wm_client::types::imports::{ImportOptions, ImportStatus};

/// A CSV of `n` contacts: one in ten is tagged `vip`, one in fifty is a López, one in five
/// is a customer (`stage`), one in three is owned by `owner`.
fn people(n: usize, stage: &str, owner: &str) -> Vec<u8> {
    let mut csv = String::with_capacity(n * 170 + 96);
    csv.push_str(
        "fullName,primaryPhone,primaryEmail,company,tags,lifecycleStageId,ownerId,consent.given\n",
    );
    for i in 0..n {
        let last = if i % 50 == 0 { "López" } else { "Pérez" };
        let tags = if i % 10 == 0 { "vip;lead" } else { "lead" };
        let stage = if i % 5 == 0 { stage } else { "" };
        let owner = if i % 3 == 0 { owner } else { "" };
        let _ = writeln!(
            csv,
            "Ana {last} {i},+52155{i:08},ana{i}@example.com,Acme {},{tags},{stage},{owner},true",
            i % 100
        );
    }
    csv.into_bytes()
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> anyhow::Result<()> {
    let sizes: Vec<usize> = std::env::var("SIZES")
        .unwrap_or_else(|_| "10000,100000".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let process::Setup { bin, dir, db, kind } = process::setup("scale").await?;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(600))
        .build()?;
    let port = free_port();
    let server = Replica::start(
        &bin,
        &db,
        "http://127.0.0.1:9",
        "bench",
        port,
        dir.join("server.log"),
        &[
            ("WM_RATE_LIMIT_PER_MINUTE", "1000000000".to_owned()),
            ("WM_PROVIDER", "simulated".to_owned()),
        ],
    );
    let base = server.base();
    healthy(&http, &base).await;
    let pid = server.child.id();
    let mut report = format!(
        "wm scale benchmark — {kind}, {} cores\n\n{:>9} {:>10} {:>9} {:>9} | {:<34} {:>8} {:>8} | {:>8}\n",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        "contacts",
        "import/s",
        "get p50",
        "get p99",
        "list query",
        "p50 ms",
        "p99 ms",
        "peak MB"
    );
    for n in sizes {
        let (org, user) = organisation(&http, &base, &format!("Scale {n}")).await;
        let (_, key) = call(
            &http,
            reqwest::Method::POST,
            format!("{base}/admin/organizations/{org}/api-keys"),
            ADMIN,
            Some(json!({"name": "bench", "userId": user,
                        "scopes": ["contacts:read", "contacts:write",
                                   "campaigns:read", "campaigns:write",
                                   "conversations:read"]})),
        )
        .await;
        let key = key["key"].as_str().unwrap_or_default().to_owned();
        let client = wm_client::Client::builder()
            .base_url(&base)
            .api_key(&key)
            .max_retries(0)
            .build()?;
        let (_, probed) = call(
            &http,
            reqwest::Method::POST,
            format!("{base}/contacts"),
            &key,
            Some(json!({"fullName": "Probe"})),
        )
        .await;
        let probe_url = format!(
            "{base}/contacts/{}",
            probed["id"].as_str().unwrap_or_default()
        );
        // The prober: one read every 10 ms for as long as the import runs.
        let running = Arc::new(AtomicBool::new(true));
        let prober = probe(&http, &key, &probe_url, None, &running);
        let (_, stages) = call(
            &http,
            reqwest::Method::GET,
            format!("{base}/lifecycle-stages"),
            &key,
            None,
        )
        .await;
        let customer = stages["data"]
            .as_array()
            .and_then(|a| a.iter().find(|s| s["name"] == "Customer"))
            .and_then(|s| s["id"].as_str())
            .unwrap_or_default()
            .to_owned();
        let file = ImportFile::csv("people.csv", people(n, &customer, &user));
        let started = Instant::now();
        let job = client
            .imports()
            .upload(file, &ImportOptions::default())
            .await?;
        let uploaded = started.elapsed();
        let done = client
            .imports()
            .wait(job.id, Duration::from_millis(100))
            .await?;
        let took = started.elapsed();
        running.store(false, Ordering::Relaxed);
        let probes = sorted(prober.await?);
        anyhow::ensure!(
            done.status == ImportStatus::Completed && done.created as usize == n,
            "import ended {:?} with {} created",
            done.status,
            done.created
        );
        println!(
            "{n} contacts: upload {:.1} s, import {:.1} s ({:.0} rows/s)",
            uploaded.as_secs_f64(),
            took.as_secs_f64(),
            n as f64 / took.as_secs_f64()
        );
        let rate = n as f64 / took.as_secs_f64();
        // Page 10,000 (or the middle page of a smaller organisation).
        let deep = (n / 20 / 2).clamp(1, 10_000);
        let queries = [
            ("no filter".to_owned(), "pageSize=20".to_owned()),
            ("tag=vip".to_owned(), "tag=vip".to_owned()),
            (
                "stage=Customer".to_owned(),
                format!("lifecycleStageId={customer}"),
            ),
            ("owner=user".to_owned(), format!("ownerId={user}")),
            ("source=IMPORT".to_owned(), "source=IMPORT".to_owned()),
            (
                "channel=MESSAGING_APP_A".to_owned(),
                "channelType=MESSAGING_APP_A".to_owned(),
            ),
            ("days=7".to_owned(), "days=7".to_owned()),
            ("tab=customers".to_owned(), "tab=customers".to_owned()),
            (
                "tag=vip&tab=no_consent".to_owned(),
                "tag=vip&tab=no_consent".to_owned(),
            ),
            ("q=lópez (2 %)".to_owned(), "q=l%C3%B3pez".to_owned()),
            (format!("page={deep}"), format!("page={deep}&pageSize=20")),
        ];
        let (peak, _) = rss_mb(pid);
        for (i, (name, query)) in queries.iter().enumerate() {
            let (p50, p99) = timed(&http, &key, &format!("{base}/contacts?{query}")).await?;
            let lead = if i == 0 {
                format!(
                    "{n:>9} {:>10.0} {:>9.1} {:>9.1}",
                    rate,
                    percentile(&probes, 0.5),
                    percentile(&probes, 0.99)
                )
            } else {
                " ".repeat(40)
            };
            let peak = if i == 0 {
                format!("{peak:>8.0}")
            } else {
                String::new()
            };
            let _ = writeln!(report, "{lead} | {name:<34} {p50:>8.1} {p99:>8.1} | {peak}");
        }
        let c = campaign::campaign_to_all(&http, &base, &org, &key, &probe_url, pid, n).await?;
        let (peak, _) = rss_mb(pid);
        let _ = writeln!(
            report,
            "{:>40} | audience {:>8.1} s, writes p99 {:>6.1} ms max {:>6.1} ms | {peak:>8.0}\n{:>40} | send     {:>8.1} s, writes p99 {:>6.1} ms max {:>6.1} ms, {} sent in {:.0} s",
            "",
            c.audience_s,
            c.audience_writes.0,
            c.audience_writes.1,
            "",
            c.send_s,
            c.send_writes.0,
            c.send_writes.1,
            c.sent,
            campaign::SEND_WINDOW.as_secs_f64(),
        );
        for line in &c.reads {
            let _ = writeln!(report, "{line}");
        }
        if !std::env::var("INBOX").is_ok_and(|v| v == "0") {
            let i = inbox::inbox(&http, &base, &org, &user, &key, n).await?;
            let (peak, _) = rss_mb(pid);
            let _ = writeln!(
                report,
                "{:>40} | {} conversations written in, {:.0}/s {:>17} | {peak:>8.0}",
                "", i.conversations, i.per_s, ""
            );
            for line in &i.reads {
                let _ = writeln!(report, "{line}");
            }
        }
        // Paused before the next size, which would otherwise import, add its audience and
        // send while this campaign still sends (a 100,000 one takes 20 minutes at 80/s).
        let (status, body) = harness::call(
            &http,
            reqwest::Method::POST,
            format!("{base}/campaigns/{}/pause", c.id),
            &key,
            None,
        )
        .await;
        if status != 200 {
            eprintln!("pause: {status} {body}");
        }
    }
    println!("\n{report}");
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
