//! The console's pages at scale: a release `wm-server` process, an organisation of
//! `CONTACTS` (default 1,000,000) contacts imported through `POST /contacts/imports`, a
//! draft campaign to one contact in ten (its page shows the cost preview of them all), a
//! hundred customers who wrote in, a webhook; then a browser session (signed in with the
//! key, cookie and all) times each page: `CALLS` (default 20) GETs, p50 and p99 of the
//! whole answer. Anchors in the same run: a bare axum route answering a small HTML page,
//! and the API calls behind three pages (contacts, a search, the commercial report) with
//! the key.
//!
//! ```sh
//! cargo build --release -p wm-server
//! cargo bench -p wm-benches --bench console                                   # SQLite
//! WM_BENCH_DATABASE_URL=postgres://… cargo bench -p wm-benches --bench console  # PostgreSQL
//! ```

#[path = "../crates/wm-server/tests/it/replicas_harness.rs"]
mod harness;
// The percentiles and memory reading of the scale benchmark (its probes go unused here).
#[allow(dead_code)]
#[path = "scale/measure.rs"]
mod measure;
#[path = "process.rs"]
mod process;

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use harness::{Replica, admin_post, call, free_port, healthy, organisation, serve};
use measure::{percentile, rss_mb, sorted};
use process::env_num;
use reqwest::Method;
use serde_json::json;
use wm_client::imports::ImportFile;
use wm_client::types::imports::{ImportOptions, ImportStatus};

/// A CSV of `n` contacts: one in ten tagged `vip`, one in fifty a López, one in five a
/// customer.
fn people(n: usize, stage: &str) -> Vec<u8> {
    let mut csv = String::with_capacity(n * 120 + 64);
    csv.push_str("fullName,primaryPhone,primaryEmail,tags,lifecycleStageId,consent.given\n");
    for i in 0..n {
        let last = if i % 50 == 0 { "López" } else { "Pérez" };
        let tags = if i % 10 == 0 { "vip;lead" } else { "lead" };
        let stage = if i % 5 == 0 { stage } else { "" };
        let _ = writeln!(
            csv,
            "Ana {last} {i},+52155{i:08},ana{i}@example.com,{tags},{stage},true"
        );
    }
    csv.into_bytes()
}

/// `CALLS` GETs of `url` with `cookie` (or the key as a bearer); p50 and p99 in ms.
async fn timed(
    http: &reqwest::Client,
    url: &str,
    cookie: Option<&str>,
    key: Option<&str>,
    calls: usize,
) -> anyhow::Result<(f64, f64)> {
    let mut took = Vec::with_capacity(calls);
    for _ in 0..calls {
        let mut req = http.get(url);
        if let Some(c) = cookie {
            req = req.header("cookie", c);
        }
        if let Some(k) = key {
            req = req.bearer_auth(k);
        }
        let t = Instant::now();
        let r = req.send().await?;
        anyhow::ensure!(r.status() == 200, "{url}: {}", r.status());
        r.bytes().await?;
        took.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let took = sorted(took);
    Ok((percentile(&took, 0.5), percentile(&took, 0.99)))
}

/// The value of a `Set-Cookie` named `name`.
fn set_cookie(r: &reqwest::Response, name: &str) -> Option<String> {
    r.headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|c| c.starts_with(&format!("{name}=")))
        .and_then(|c| c.split(';').next())
        .map(str::to_owned)
}

/// Signs in to the console at `origin` with `key`; the session's `Cookie` header.
async fn sign_in(http: &reqwest::Client, origin: &str, key: &str) -> anyhow::Result<String> {
    let form = http.get(format!("{origin}/console/sign-in")).send().await?;
    let pre = set_cookie(&form, "wm_console_sign_in").unwrap_or_default();
    let body = form.text().await?;
    let marker = "name=\"_csrf\" value=\"";
    let at = body.find(marker).map(|i| i + marker.len()).unwrap_or(0);
    let token = body[at..].split('"').next().unwrap_or_default().to_owned();
    let signed = http
        .post(format!("{origin}/console/sign-in"))
        .header("cookie", &pre)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("_csrf={token}&apiKey={key}"))
        .send()
        .await?;
    anyhow::ensure!(signed.status() == 303, "sign-in: {}", signed.status());
    set_cookie(&signed, "wm_console").ok_or_else(|| anyhow::anyhow!("no session cookie"))
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> anyhow::Result<()> {
    let n = env_num("CONTACTS", 1_000_000);
    let calls = env_num("CALLS", 20);
    let process::Setup { bin, dir, db, kind } = process::setup("console").await?;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(600))
        .redirect(reqwest::redirect::Policy::none())
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
            ("WM_ALLOW_INSECURE_WEBHOOKS", "true".to_owned()),
        ],
    );
    let base = server.base();
    let origin = base.trim_end_matches("/api/v1").to_owned();
    healthy(&http, &base).await;
    let pid = server.child.id();

    let (org, user) = organisation(&http, &base, "Console at scale").await;
    let key = admin_post(
        &http,
        &base,
        &org,
        "/api-keys",
        json!({"name": "bench", "userId": user, "scopes": [
            "contacts:read", "contacts:write", "conversations:read", "conversations:write",
            "automations:read", "campaigns:read", "campaigns:write", "reports:read",
            "webhooks:read", "webhooks:write"]}),
    )
    .await["key"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let number = admin_post(
        &http,
        &base,
        &org,
        "/phone-numbers",
        json!({"numberE164": "+525550000001", "displayName": "Bench"}),
    )
    .await;
    let template = admin_post(&http, &base, &org, "/templates", json!({"name": "spring_sale",
        "category": "MARKETING", "language": "es_MX", "bodyText": "Sale today", "status": "APPROVED"})).await;
    admin_post(
        &http,
        &base,
        &org,
        "/wallet/top-ups",
        json!({"amount": 100000}),
    )
    .await;

    let (_, stages) = call(
        &http,
        Method::GET,
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
    let client = wm_client::Client::builder()
        .base_url(&base)
        .api_key(&key)
        .max_retries(0)
        .build()?;
    let started = Instant::now();
    let job = client
        .imports()
        .upload(
            ImportFile::csv("people.csv", people(n, &customer)),
            &ImportOptions::default(),
        )
        .await?;
    let done = client
        .imports()
        .wait(job.id, Duration::from_millis(200))
        .await?;
    anyhow::ensure!(
        done.status == ImportStatus::Completed && done.created as usize == n,
        "import ended {:?} with {} created",
        done.status,
        done.created
    );
    println!(
        "{n} contacts imported in {:.0} s",
        started.elapsed().as_secs_f64()
    );

    let (_, campaign) = call(
        &http,
        Method::POST,
        format!("{base}/campaigns"),
        &key,
        Some(json!({
        "name": "Bench draft", "phoneNumberId": number["id"], "templateId": template["id"]})),
    )
    .await;
    let campaign = campaign["id"].as_str().unwrap_or_default().to_owned();
    anyhow::ensure!(!campaign.is_empty(), "no campaign");
    let (_, added) = call(
        &http,
        Method::POST,
        format!("{base}/campaigns/{campaign}/recipients"),
        &key,
        Some(json!({"tag": "vip"})),
    )
    .await;
    println!(
        "draft campaign with {} recipients",
        added["totalRecipients"]
    );
    let mut conversation = String::new();
    for i in 0..100 {
        let v = admin_post(
            &http,
            &base,
            &org,
            "/inbound",
            json!({"channelType": "MESSAGING_APP_A",
            "externalId": format!("52155{:08}", i * 7), "text": format!("Hola {i}")}),
        )
        .await;
        conversation = v["conversationId"].as_str().unwrap_or_default().to_owned();
    }
    let (status, hook) = call(
        &http,
        Method::POST,
        format!("{base}/webhooks"),
        &key,
        Some(json!({
        "url": "http://127.0.0.1:9/wm", "events": ["campaign.finished"]})),
    )
    .await;
    anyhow::ensure!(status == 201, "webhook: {status} {hook}");
    let hook = hook["id"].as_str().unwrap_or_default().to_owned();
    let (_, some) = call(
        &http,
        Method::GET,
        format!("{base}/contacts?q=l%C3%B3pez&pageSize=1"),
        &key,
        None,
    )
    .await;
    let contact = some["data"][0]["id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let deep = (n / 25 / 2).clamp(1, 10_000);

    let cookie = sign_in(&http, &origin, &key).await?;
    let pages: Vec<(&str, String)> = vec![
        ("home", "/console".into()),
        ("contacts", "/console/contacts".into()),
        (
            "contacts: search lópez",
            "/console/contacts?q=l%C3%B3pez".into(),
        ),
        (
            "contacts: tab customers",
            "/console/contacts?tab=customers".into(),
        ),
        ("contacts: tag vip", "/console/contacts?tag=vip".into()),
        (
            "contacts: deep page",
            format!("/console/contacts?page={deep}"),
        ),
        ("contact", format!("/console/contacts/{contact}")),
        ("contact: edit", format!("/console/contacts/{contact}/edit")),
        ("contact: new", "/console/contacts/new".into()),
        ("imports", "/console/imports".into()),
        ("import", format!("/console/imports/{}", job.id)),
        ("campaigns", "/console/campaigns".into()),
        ("campaign: new", "/console/campaigns/new".into()),
        (
            "campaign: draft + preview",
            format!("/console/campaigns/{campaign}"),
        ),
        ("inbox", "/console/inbox".into()),
        ("conversation", format!("/console/inbox/{conversation}")),
        ("webhooks", "/console/webhooks".into()),
        ("webhook", format!("/console/webhooks/{hook}")),
        ("templates", "/console/templates".into()),
        ("numbers", "/console/numbers".into()),
        ("automations", "/console/automations".into()),
        ("reports: campaigns", "/console/reports".into()),
        (
            "reports: commercial",
            "/console/reports?report=commercial".into(),
        ),
        (
            "reports: lifecycle",
            "/console/reports?report=lifecycle".into(),
        ),
        ("reports: team", "/console/reports?report=team".into()),
        (
            "reports: conversations",
            "/console/reports?report=conversations".into(),
        ),
    ];
    let mut report = format!(
        "\nwm console pages — {kind}, {n} contacts, {} cores, {calls} calls each (p50 / p99 ms)\n\n",
        std::thread::available_parallelism().map_or(0, |c| c.get())
    );
    for (name, path) in &pages {
        let (p50, p99) = timed(
            &http,
            &format!("{origin}{path}"),
            Some(&cookie),
            None,
            calls,
        )
        .await?;
        let _ = writeln!(report, "{name:<28} {p50:>8.1} {p99:>8.1}");
    }
    // The API calls behind three pages, as an integrator makes them with the key.
    for (name, path) in [
        ("anchor: API contacts", "/contacts?pageSize=25"),
        (
            "anchor: API search lópez",
            "/contacts?q=l%C3%B3pez&pageSize=25",
        ),
        ("anchor: API commercial", "/reports/commercial"),
    ] {
        let (p50, p99) = timed(&http, &format!("{base}{path}"), None, Some(&key), calls).await?;
        let _ = writeln!(report, "{name:<28} {p50:>8.1} {p99:>8.1}");
    }
    let bare = serve(axum::Router::new().route(
        "/page",
        axum::routing::get(|| async { axum::response::Html("<!doctype html><h1>bare</h1>") }),
    ))
    .await;
    let (p50, p99) = timed(&http, &format!("{bare}/page"), None, None, calls).await?;
    let _ = writeln!(
        report,
        "{:<28} {p50:>8.2} {p99:>8.2}",
        "anchor: bare axum page"
    );
    let (peak, _) = rss_mb(pid);
    let _ = writeln!(report, "\nserver peak RSS {peak:.0} MB");
    println!("{report}");
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
