//! Scale benchmark: a release `wm-server` process builds organisations of `SIZES` contacts
//! (default `10000,100000`) through `POST /contacts/imports`, while a prober reads one contact
//! every 10 ms; then times the contact lists, then a campaign to everyone: the audience
//! (`{"all":true}`) and a `now` send, while a writer probe updates one contact every 10 ms
//! (its worst latency bounds how long the database writer was held). Prints, per size:
//! import rows/s, the prober's p50/p99, each list query's p50/p99 (20 calls), the audience
//! and send times with the write probe's p99/max, and the server's peak RSS.
//!
//! ```sh
//! cargo build --release -p wm-server
//! SIZES=10000,100000,1000000 cargo bench -p wm-benches --bench scale            # SQLite
//! WM_BENCH_DATABASE_URL=postgres://… cargo bench -p wm-benches --bench scale    # PostgreSQL
//! ```
//! `WM_SERVER_BIN` points at another binary (default `target/release/wm-server`).

#[path = "../crates/wm-server/tests/it/replicas_harness.rs"]
mod harness;

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use harness::{ADMIN, Replica, call, free_port, fresh_pg_database, healthy, organisation};
use serde_json::json;
use uuid::Uuid;
use wm_client::imports::ImportFile;
use wm_client::types::imports::{ImportOptions, ImportStatus};

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn sorted(mut v: Vec<f64>) -> Vec<f64> {
    v.sort_by(f64::total_cmp);
    v
}

/// Peak and current resident memory of a process, in MB.
fn rss_mb(pid: u32) -> (f64, f64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<f64>().ok())
            .map_or(f64::NAN, |kb| kb / 1024.0)
    };
    (field("VmHWM:"), field("VmRSS:"))
}

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
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let bin = std::env::var("WM_SERVER_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root.join("target/release/wm-server"));
    let dir = std::env::temp_dir().join(format!("wm-bench-scale-{}", Uuid::new_v4()));
    std::fs::create_dir_all(&dir)?;
    let (db, kind) = match std::env::var("WM_BENCH_DATABASE_URL") {
        Ok(url) if !url.is_empty() => (fresh_pg_database(&url).await, "PostgreSQL"),
        _ => (
            format!("sqlite://{}?mode=rwc", dir.join("wm.db").display()),
            "SQLite",
        ),
    };
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
                                   "campaigns:read", "campaigns:write"]})),
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
            let mut took = Vec::new();
            for _ in 0..20 {
                let t = Instant::now();
                let r = http
                    .get(format!("{base}/contacts?{query}"))
                    .bearer_auth(&key)
                    .send()
                    .await?;
                anyhow::ensure!(r.status() == 200, "{query}: {}", r.status());
                r.bytes().await?;
                took.push(t.elapsed().as_secs_f64() * 1e3);
            }
            let took = sorted(took);
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
            let _ = writeln!(
                report,
                "{lead} | {name:<34} {:>8.1} {:>8.1} | {peak}",
                percentile(&took, 0.5),
                percentile(&took, 0.99)
            );
        }
        let c = campaign_to_all(&http, &base, &org, &key, &probe_url, pid).await?;
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
            SEND_WINDOW.as_secs_f64(),
        );
    }
    println!("\n{report}");
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// Probes `url` every 10 ms while `running` (a GET, or a PATCH of `body`); the latencies in ms.
fn probe(
    http: &reqwest::Client,
    key: &str,
    url: &str,
    body: Option<serde_json::Value>,
    running: &Arc<AtomicBool>,
) -> tokio::task::JoinHandle<Vec<f64>> {
    let (http, key, url, running) = (
        http.clone(),
        key.to_owned(),
        url.to_owned(),
        running.clone(),
    );
    tokio::spawn(async move {
        let mut took = Vec::new();
        while running.load(Ordering::Relaxed) {
            let t = Instant::now();
            let req = match &body {
                Some(b) => http.patch(&url).json(b),
                None => http.get(&url),
            };
            let ok = req.bearer_auth(&key).send().await;
            if ok.is_ok_and(|r| r.status() == 200) {
                took.push(t.elapsed().as_secs_f64() * 1e3);
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        took
    })
}

/// How long the platform is left sending after the send is accepted.
const SEND_WINDOW: Duration = Duration::from_secs(20);

/// The campaign stage's timings.
struct CampaignTimes {
    audience_s: f64,
    audience_writes: (f64, f64),
    send_s: f64,
    send_writes: (f64, f64),
    sent: u64,
}

/// p99 and max of a probe's latencies.
fn p99_max(v: Vec<f64>) -> (f64, f64) {
    let v = sorted(v);
    (percentile(&v, 0.99), v.last().copied().unwrap_or(0.0))
}

/// A campaign to every contact of the organisation: its audience added in one call, then a
/// `now` send, each under a writer probe; then `SEND_WINDOW` of sending.
async fn campaign_to_all(
    http: &reqwest::Client,
    base: &str,
    org: &str,
    key: &str,
    probe_url: &str,
    pid: u32,
) -> anyhow::Result<CampaignTimes> {
    use reqwest::Method;
    let admin = |path: &str| format!("{base}/admin/organizations/{org}{path}");
    let (_, number) = call(
        http,
        Method::POST,
        admin("/phone-numbers"),
        ADMIN,
        Some(json!({"numberE164": "+525500000001", "displayName": "Ventas"})),
    )
    .await;
    let (_, template) = call(
        http,
        Method::POST,
        admin("/templates"),
        ADMIN,
        Some(
            json!({"name": "promo", "category": "MARKETING", "language": "es_MX",
                    "bodyText": "Promo de temporada"}),
        ),
    )
    .await;
    call(
        http,
        Method::POST,
        admin("/wallet/top-ups"),
        ADMIN,
        Some(json!({"amount": 100_000_000})),
    )
    .await;
    let (status, c) = call(
        http,
        Method::POST,
        format!("{base}/campaigns"),
        key,
        Some(json!({"name": "Everyone", "phoneNumberId": number["id"],
                    "templateId": template["id"]})),
    )
    .await;
    anyhow::ensure!(status == 201, "campaign: {status} {c}");
    let id = c["id"].as_str().unwrap_or_default().to_owned();
    let write = Some(json!({"company": "Probe"}));

    let running = Arc::new(AtomicBool::new(true));
    let writes = probe(http, key, probe_url, write.clone(), &running);
    let t = Instant::now();
    let (status, added) = call(
        http,
        Method::POST,
        format!("{base}/campaigns/{id}/recipients"),
        key,
        Some(json!({"all": true})),
    )
    .await;
    let audience_s = t.elapsed().as_secs_f64();
    running.store(false, Ordering::Relaxed);
    let audience_writes = p99_max(writes.await?);
    anyhow::ensure!(status == 200, "audience: {status} {added}");
    println!(
        "audience: {added} in {audience_s:.1} s, peak {:.0} MB",
        rss_mb(pid).0
    );

    let running = Arc::new(AtomicBool::new(true));
    let writes = probe(http, key, probe_url, write, &running);
    let t = Instant::now();
    let (status, sent) = call(
        http,
        Method::POST,
        format!("{base}/campaigns/{id}/send"),
        key,
        Some(json!({})),
    )
    .await;
    let send_s = t.elapsed().as_secs_f64();
    anyhow::ensure!(status == 200, "send: {status} {sent}");
    println!("send: {send_s:.1} s, peak {:.0} MB", rss_mb(pid).0);
    tokio::time::sleep(SEND_WINDOW).await;
    running.store(false, Ordering::Relaxed);
    let send_writes = p99_max(writes.await?);
    let (_, c) = call(
        http,
        Method::GET,
        format!("{base}/campaigns/{id}"),
        key,
        None,
    )
    .await;
    Ok(CampaignTimes {
        audience_s,
        audience_writes,
        send_s,
        send_writes,
        sent: c["stats"]["sent"].as_u64().unwrap_or(0)
            + c["stats"]["delivered"].as_u64().unwrap_or(0),
    })
}
