//! What the scale benchmark's stages share: percentiles, the server's memory, timed reads,
//! and the probes that run while a stage works.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

pub fn sorted(mut v: Vec<f64>) -> Vec<f64> {
    v.sort_by(f64::total_cmp);
    v
}

/// p99 and max of a probe's latencies.
pub fn p99_max(v: Vec<f64>) -> (f64, f64) {
    let v = sorted(v);
    (percentile(&v, 0.99), v.last().copied().unwrap_or(0.0))
}

/// Peak and current resident memory of a process, in MB.
pub fn rss_mb(pid: u32) -> (f64, f64) {
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

/// Calls of each timed read.
pub const CALLS: usize = 20;

/// p50 and p99 in ms of `CALLS` GETs of `url`, each answered 200.
pub async fn timed(http: &reqwest::Client, key: &str, url: &str) -> anyhow::Result<(f64, f64)> {
    let mut took = Vec::with_capacity(CALLS);
    for _ in 0..CALLS {
        let t = Instant::now();
        let r = http.get(url).bearer_auth(key).send().await?;
        anyhow::ensure!(r.status() == 200, "{url}: {}", r.status());
        r.bytes().await?;
        took.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let took = sorted(took);
    Ok((percentile(&took, 0.5), percentile(&took, 0.99)))
}

/// Times each `(name, path)` read under `base`; one report line each.
pub async fn timed_lines(
    http: &reqwest::Client,
    key: &str,
    base: &str,
    reads: &[(String, String)],
) -> anyhow::Result<Vec<String>> {
    let mut out = Vec::with_capacity(reads.len());
    for (name, path) in reads {
        let (p50, p99) = timed(http, key, &format!("{base}{path}")).await?;
        out.push(format!("{:>40} | {name:<34} {p50:>8.1} {p99:>8.1} |", ""));
    }
    Ok(out)
}

/// Probes `url` every 10 ms while `running` (a GET, or a PATCH of `body`); the latencies in ms.
pub fn probe(
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
