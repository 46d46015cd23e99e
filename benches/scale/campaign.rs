//! The scale benchmark's campaign stage: a campaign to every contact of the organisation,
//! its audience added in one call, then a `now` send, each under a writer probe; the
//! campaign reads (detail, preview, list, recipients) timed on the draft and while it sends.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::json;

use super::harness::{ADMIN, call};
use super::measure::{p99_max, probe, rss_mb, timed_lines};

/// How long the platform is left sending after the send is accepted.
pub const SEND_WINDOW: Duration = Duration::from_secs(20);

/// The campaign stage's timings.
pub struct CampaignTimes {
    /// The campaign.
    pub id: String,
    pub audience_s: f64,
    pub audience_writes: (f64, f64),
    pub send_s: f64,
    pub send_writes: (f64, f64),
    pub sent: u64,
    /// Report lines of the timed reads.
    pub reads: Vec<String>,
}

/// The campaign reads timed, `when` naming the moment; `n` recipients.
fn reads(id: &str, n: usize, when: &str) -> Vec<(String, String)> {
    let deep = (n / 20 / 2).clamp(1, 10_000);
    let at = |what: &str| format!("{what} ({when})");
    let mut r = vec![
        (at("campaign detail"), format!("/campaigns/{id}")),
        (at("campaign list"), "/campaigns".to_owned()),
        (
            at("recipients page 1"),
            format!("/campaigns/{id}/recipients"),
        ),
        (
            at(&format!("recipients page {deep}")),
            format!("/campaigns/{id}/recipients?page={deep}"),
        ),
    ];
    if when == "draft" {
        r.push((at("preview-cost"), format!("/campaigns/{id}/preview-cost")));
    } else {
        for f in ["delivered", "failed", "pending"] {
            r.push((
                at(&format!("recipients filter={f}")),
                format!("/campaigns/{id}/recipients?filter={f}"),
            ));
        }
    }
    r
}

/// Runs the stage on the organisation `org` of `n` contacts, probing writes at `probe_url`.
pub async fn campaign_to_all(
    http: &reqwest::Client,
    base: &str,
    org: &str,
    key: &str,
    probe_url: &str,
    pid: u32,
    n: usize,
) -> anyhow::Result<CampaignTimes> {
    let admin = |path: &str| format!("{base}/admin/organizations/{org}{path}");
    let (_, number) = call(
        http,
        Method::POST,
        admin("/phone-numbers"),
        ADMIN,
        // A number of its own per organisation: a number's pace is shared by every
        // campaign on it, so the sizes' campaigns would otherwise send by turns.
        Some(
            json!({"numberE164": format!("+5255{:08}", n % 100_000_000), "displayName": "Ventas"}),
        ),
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
    let mut lines = timed_lines(http, key, base, &reads(&id, n, "draft")).await?;

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
    lines.extend(timed_lines(http, key, base, &reads(&id, n, "sending")).await?);
    let (_, c) = call(
        http,
        Method::GET,
        format!("{base}/campaigns/{id}"),
        key,
        None,
    )
    .await;
    Ok(CampaignTimes {
        id,
        audience_s,
        audience_writes,
        send_s,
        send_writes,
        sent: c["stats"]["sent"].as_u64().unwrap_or(0),
        reads: lines,
    })
}
