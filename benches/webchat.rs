//! The website chat's event stream at 10,000 open tabs: one release `wm-server` process
//! holding `IDLE` (default 10,000) idle visitor streams (`GET /webchat/v1/{site}/events`,
//! one visitor token each, visitors who never wrote), and how fast an agent's reply reaches
//! its visitor while they are held. Anchor in the same run: a bare axum SSE server
//! (`bin/bare_sse.rs`: a `broadcast` receiver per stream, no database) holding as many.
//!
//! - Resident memory (`VmRSS`) of the server before the idle streams are opened and 5 s
//!   after they all are; the difference per stream.
//! - Reply to event: the time from an agent's `POST /api/v1/conversations/{id}/messages`
//!   (a text reply, queued and sent by the reply sender) to the `message` event carrying its
//!   text on the visitor's stream, over 20 active visitors (each wrote once, so each has a
//!   conversation): `REPLIES` (default 300) replies one after another (each waits for its
//!   event), then `REPLIES` more from 4 concurrent senders; p50 and p99. Anchor: `POST /send`
//!   to the event on one listening stream, the same two rounds (the broadcast also writes
//!   each event to every idle stream, which wm does not: its idle visitors get nothing).
//!
//! - The server's CPU while it holds the idle streams and nothing else happens, over 15 s
//!   (a website chat stream looks in the database every 15 s even when nobody rings it).
//!
//! `PACE_MS` (default 0) waits that long between a sender's posts, to spread a round over
//! the idle streams' looks (unpaced, 300 replies take well under the 15 s of one wave of
//! them). The streams are raw HTTP/1.1 sockets (no client pool per stream). The client needs
//! about `IDLE` + 100 file descriptors, the server as many (`ulimit -n`).
//!
//! ```sh
//! cargo build --release -p wm-server
//! cargo bench -p wm-benches --bench webchat                                   # SQLite
//! WM_BENCH_DATABASE_URL=postgres://… cargo bench -p wm-benches --bench webchat  # PostgreSQL
//! IDLE=2000 REPLIES=100 cargo bench -p wm-benches --bench webchat              # smaller
//! ```

#[path = "../crates/wm-server/tests/it/replicas_harness.rs"]
mod harness;
// The percentiles and memory reading of the scale benchmark (its probes go unused here).
#[allow(dead_code)]
#[path = "scale/measure.rs"]
mod measure;
#[path = "process.rs"]
mod process;
#[path = "webchat/streams.rs"]
mod streams;

use std::collections::BTreeMap;
use std::io::BufRead as _;
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use futures::StreamExt as _;
use harness::{Replica, admin_post, call, free_port, healthy, organisation};
use measure::{percentile, rss_mb, sorted};
use process::env_num;
use reqwest::Method;
use serde_json::{Value, json};
use streams::{Waiters, closed, listen, message_text, open_many, open_stream, raw_text};
use tokio::sync::oneshot;

/// The page the chat is embedded in.
const ORIGIN: &str = "https://shop.example";
/// Visitors who wrote and get the replies.
const ACTIVE: usize = 20;
/// Setup calls and stream openings in flight at once.
const SETUP_CONCURRENCY: usize = 64;
/// Senders of the second round.
const SENDERS: usize = 4;
/// The longest a reply may take to show on its stream.
const EVENT_TIMEOUT: Duration = Duration::from_secs(30);

/// How long the idle streams are held with nothing else happening, for the CPU figure.
const QUIET: Duration = Duration::from_secs(15);

/// A child process killed when dropped (also on an early error).
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// What a round posts to.
#[derive(Clone)]
enum Target {
    /// wm: a reply in one of the active visitors' conversations, with the API key.
    Wm {
        http: reqwest::Client,
        base: String,
        key: String,
        conversations: Arc<Vec<String>>,
    },
    /// The anchor's `POST /send`.
    Anchor { http: reqwest::Client, url: String },
}

impl Target {
    /// The unique text of post `n`.
    fn text(&self, n: usize) -> String {
        match self {
            Target::Wm { .. } => format!("r-{n}"),
            Target::Anchor { .. } => format!("a-{n}"),
        }
    }

    /// Posts `text` as post `n`.
    async fn post(&self, n: usize, text: &str) -> anyhow::Result<()> {
        match self {
            Target::Wm {
                http,
                base,
                key,
                conversations,
            } => {
                let id = &conversations[n % conversations.len()];
                let r = http
                    .post(format!("{base}/conversations/{id}/messages"))
                    .bearer_auth(key)
                    .json(&json!({"type": "TEXT", "text": {"body": text}}))
                    .send()
                    .await
                    .context("post a reply")?;
                let status = r.status();
                let body = r.text().await.unwrap_or_default();
                anyhow::ensure!(status.is_success(), "reply {n}: {status} {body}");
            }
            Target::Anchor { http, url } => {
                let r = http
                    .post(url)
                    .body(text.to_owned())
                    .send()
                    .await
                    .context("post /send")?;
                anyhow::ensure!(r.status().is_success(), "send {n}: {}", r.status());
            }
        }
        Ok(())
    }
}

/// `count` posts numbered from `first`, by `senders` concurrent senders, each waiting for
/// its event (and `pace`) before the next; each post's time to its event, in ms.
async fn round(
    target: &Target,
    waiters: &Waiters,
    first: usize,
    count: usize,
    senders: usize,
    pace: Duration,
) -> anyhow::Result<Vec<f64>> {
    let tasks: Vec<_> = (0..senders)
        .map(|k| {
            let (target, waiters) = (target.clone(), waiters.clone());
            tokio::spawn(async move {
                let mut took = Vec::with_capacity(count / senders + 1);
                for n in (first + k..first + count).step_by(senders) {
                    let text = target.text(n);
                    let (tx, rx) = oneshot::channel();
                    waiters
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .insert(text.clone(), tx);
                    let t0 = Instant::now();
                    target.post(n, &text).await?;
                    let at = tokio::time::timeout(EVENT_TIMEOUT, rx)
                        .await
                        .with_context(|| format!("no event for {text} in 30 s"))?
                        .with_context(|| format!("the stream waiting for {text} ended"))?;
                    took.push(at.duration_since(t0).as_secs_f64() * 1e3);
                    if !pace.is_zero() {
                        tokio::time::sleep(pace).await;
                    }
                }
                anyhow::Ok(took)
            })
        })
        .collect();
    let mut all = Vec::with_capacity(count);
    for t in tasks {
        all.extend(t.await.context("a sender panicked")??);
    }
    Ok(sorted(all))
}

/// Clock ticks per second of `/proc/<pid>/stat`'s times.
fn clock_ticks() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100.0)
}

/// CPU time (user + system) a process has used so far, in seconds.
fn cpu_secs(pid: u32, ticks: f64) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // After the command's closing parenthesis the state is field 3: utime (14) and stime
    // (15) are the 12th and 13th from there.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or("", |(_, rest)| rest)
        .split_whitespace()
        .collect();
    let field = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(f64::NAN)
    };
    (field(11) + field(12)) / ticks
}

/// Holds the just-opened streams: the RSS 5 s later, then the CPU over [`QUIET`].
async fn hold(pid: u32, f: &mut Figures) {
    tokio::time::sleep(Duration::from_secs(5)).await;
    f.rss_held = rss_mb(pid).1;
    let ticks = clock_ticks();
    let before = cpu_secs(pid, ticks);
    tokio::time::sleep(QUIET).await;
    f.quiet_cpu = (cpu_secs(pid, ticks) - before) / QUIET.as_secs_f64() * 100.0;
}

/// One side's figures.
#[derive(Default)]
struct Figures {
    rss_before: f64,
    rss_held: f64,
    rss_after: f64,
    peak: f64,
    quiet_cpu: f64,
    opened: usize,
    failed: BTreeMap<String, usize>,
    open_secs: f64,
    closed_by_end: usize,
    one: Vec<f64>,
    four: Vec<f64>,
}

impl Figures {
    fn per_stream_kb(&self) -> f64 {
        (self.rss_held - self.rss_before) * 1024.0 / self.opened.max(1) as f64
    }
}

/// Reports failed openings.
fn report_failures(side: &str, failed: &BTreeMap<String, usize>) {
    for (e, n) in failed {
        eprintln!("{side}: {n} streams not opened: {e}");
    }
}

/// A visitor's token and id.
async fn new_visitor(http: &reqwest::Client, root: &str, site: &str) -> anyhow::Result<String> {
    let r = http
        .post(format!("{root}/webchat/v1/{site}/visitors"))
        .header("origin", ORIGIN)
        .send()
        .await
        .context("post a visitor")?;
    let status = r.status();
    let v: Value = r.json().await.unwrap_or(Value::Null);
    anyhow::ensure!(status == 201, "new visitor: {status} {v}");
    v["visitorToken"]
        .as_str()
        .map(str::to_owned)
        .context("no visitorToken")
}

/// wm's side: the server, the chat, the visitors, the streams, the rounds.
async fn wm(
    http: &reqwest::Client,
    idle: usize,
    replies: usize,
    pace: Duration,
) -> anyhow::Result<(Figures, &'static str)> {
    let process::Setup { bin, dir, db, kind } = process::setup("webchat").await?;
    anyhow::ensure!(
        bin.exists(),
        "{} not found: cargo build --release -p wm-server",
        bin.display()
    );
    let port = free_port();
    let server = Replica::start(
        &bin,
        &db,
        "http://127.0.0.1:9",
        "bench",
        port,
        dir.join("server.log"),
        &[
            ("WM_PROVIDER", "simulated".to_owned()),
            ("WM_MAX_CONNECTIONS", (idle + 2_000).to_string()),
            ("WM_MAX_IN_FLIGHT", (idle + 10_000).to_string()),
            ("WM_RATE_LIMIT_PER_MINUTE", "100000000".to_owned()),
            (
                "WM_WEBCHAT_WRITES_PER_ADDRESS_PER_MINUTE",
                "100000000".to_owned(),
            ),
            ("WM_WEBCHAT_MESSAGES_PER_MINUTE", "100000000".to_owned()),
        ],
    );
    let base = server.base();
    let root = base.trim_end_matches("/api/v1").to_owned();
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse()?;
    healthy(http, &base).await;
    let pid = server.child.id();
    eprintln!("wm: {kind}, log {}", dir.join("server.log").display());

    let (org, user) = organisation(http, &base, "Webchat at scale").await;
    let key = admin_post(
        http,
        &base,
        &org,
        "/api-keys",
        json!({"name": "k", "userId": user, "scopes": ["conversations:read", "conversations:write"]}),
    )
    .await["key"]
        .as_str()
        .context("no API key")?
        .to_owned();
    let chat = admin_post(
        http,
        &base,
        &org,
        "/channels/webchat",
        json!({"name": "Bench", "allowedOrigins": [ORIGIN]}),
    )
    .await;
    let site = chat["websiteToken"]
        .as_str()
        .context("no websiteToken")?
        .to_owned();

    let t = Instant::now();
    let tokens: Vec<anyhow::Result<String>> = futures::stream::iter(0..idle + ACTIVE)
        .map(|_| new_visitor(http, &root, &site))
        .buffer_unordered(SETUP_CONCURRENCY)
        .collect()
        .await;
    let tokens = tokens.into_iter().collect::<anyhow::Result<Vec<_>>>()?;
    eprintln!(
        "wm: {} visitors in {:.1} s",
        tokens.len(),
        t.elapsed().as_secs_f64()
    );
    let (active, idle_tokens) = tokens.split_at(ACTIVE);

    // The active visitors write once: each a contact with a conversation.
    for (i, token) in active.iter().enumerate() {
        let r = http
            .post(format!("{root}/webchat/v1/{site}/messages"))
            .header("origin", ORIGIN)
            .bearer_auth(token)
            .json(&json!({"text": format!("hola-{i}")}))
            .send()
            .await
            .context("a visitor's first message")?;
        anyhow::ensure!(r.status() == 201, "visitor {i} wrote: {}", r.status());
    }
    // Whose conversation is whose: by the visitor's message in it.
    let (status, list) = call(
        http,
        Method::GET,
        format!("{base}/conversations?pageSize=100"),
        &key,
        None,
    )
    .await;
    anyhow::ensure!(status == 200, "conversations: {status} {list}");
    let mut of_visitor: Vec<Option<String>> = vec![None; ACTIVE];
    for c in list["data"].as_array().into_iter().flatten() {
        let id = c["id"].as_str().context("a conversation without id")?;
        let (status, messages) = call(
            http,
            Method::GET,
            format!("{base}/conversations/{id}/messages"),
            &key,
            None,
        )
        .await;
        anyhow::ensure!(status == 200, "messages of {id}: {status} {messages}");
        for m in messages["data"].as_array().into_iter().flatten() {
            if let Some(i) = m["text"]
                .as_str()
                .and_then(|t| t.strip_prefix("hola-"))
                .and_then(|i| i.parse::<usize>().ok())
                && i < ACTIVE
            {
                of_visitor[i] = Some(id.to_owned());
            }
        }
    }
    let conversations = of_visitor
        .into_iter()
        .enumerate()
        .map(|(i, c)| c.with_context(|| format!("no conversation of visitor {i}")))
        .collect::<anyhow::Result<Vec<_>>>()?;

    let mut f = Figures {
        rss_before: rss_mb(pid).1,
        ..Figures::default()
    };
    let t = Instant::now();
    let paths = idle_tokens
        .iter()
        .map(|tok| format!("/webchat/v1/{site}/events?token={tok}"))
        .collect();
    let (held, failed) = open_many(addr, paths, Some(ORIGIN)).await;
    f.open_secs = t.elapsed().as_secs_f64();
    f.opened = held.len();
    f.failed = failed;
    eprintln!(
        "wm: {} idle streams open in {:.1} s",
        held.len(),
        f.open_secs
    );
    report_failures("wm", &f.failed);
    hold(pid, &mut f).await;

    // The active visitors' streams, read for the replies. Listening in the order of the
    // conversations: reply n goes to conversation n % ACTIVE, read on its visitor's stream.
    let waiters: Waiters = Arc::default();
    let mut readers = Vec::with_capacity(ACTIVE);
    for tok in active {
        let (s, rest) = open_stream(
            addr,
            &format!("/webchat/v1/{site}/events?token={tok}"),
            Some(ORIGIN),
        )
        .await
        .context("an active visitor's stream")?;
        readers.push(listen(s, rest, waiters.clone(), message_text));
    }
    let target = Target::Wm {
        http: http.clone(),
        base: base.clone(),
        key,
        conversations: Arc::new(conversations),
    };
    f.one = round(&target, &waiters, 0, replies, 1, pace).await?;
    f.four = round(&target, &waiters, replies, replies, SENDERS, pace).await?;
    f.closed_by_end = closed(&held);
    let (peak, now) = rss_mb(pid);
    f.peak = peak;
    f.rss_after = now;
    for r in readers {
        r.abort();
    }
    drop(held);
    drop(server);
    Ok((f, kind))
}

/// The anchor's side: the bare SSE server, the idle streams, one listening stream, the
/// rounds.
async fn anchor(
    http: &reqwest::Client,
    idle: usize,
    replies: usize,
    pace: Duration,
) -> anyhow::Result<Figures> {
    let port = free_port();
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse()?;
    let mut child = Command::new(env!("CARGO_BIN_EXE_bare-sse"))
        .arg(addr.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .context("start bare-sse")?;
    let out = child.stdout.take().context("bare-sse's stdout")?;
    let server = Killed(child);
    let mut line = String::new();
    std::io::BufReader::new(out)
        .read_line(&mut line)
        .context("read bare-sse's first line")?;
    anyhow::ensure!(line.trim() == "listening", "bare-sse said {line:?}");
    let pid = server.0.id();

    let mut f = Figures {
        rss_before: rss_mb(pid).1,
        ..Figures::default()
    };
    let t = Instant::now();
    let (held, failed) = open_many(addr, vec!["/events".to_owned(); idle], None).await;
    f.open_secs = t.elapsed().as_secs_f64();
    f.opened = held.len();
    f.failed = failed;
    eprintln!(
        "anchor: {} idle streams open in {:.1} s",
        held.len(),
        f.open_secs
    );
    report_failures("anchor", &f.failed);
    hold(pid, &mut f).await;

    let waiters: Waiters = Arc::default();
    let (s, rest) = open_stream(addr, "/events", None)
        .await
        .context("the listening stream")?;
    let reader = listen(s, rest, waiters.clone(), raw_text);
    let target = Target::Anchor {
        http: http.clone(),
        url: format!("http://{addr}/send"),
    };
    f.one = round(&target, &waiters, 0, replies, 1, pace).await?;
    f.four = round(&target, &waiters, replies, replies, SENDERS, pace).await?;
    f.closed_by_end = closed(&held);
    let (peak, now) = rss_mb(pid);
    f.peak = peak;
    f.rss_after = now;
    reader.abort();
    drop(held);
    drop(server);
    Ok(f)
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> anyhow::Result<()> {
    let idle = env_num("IDLE", 10_000);
    let replies = env_num("REPLIES", 300);
    let pace = Duration::from_millis(env_num("PACE_MS", 0) as u64);
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()?;
    let started = Instant::now();

    let (w, kind) = wm(&http, idle, replies, pace).await?;
    let a = anchor(&http, idle, replies, pace).await?;

    let p = |v: &[f64], q: f64| percentile(v, q);
    let rows: Vec<(String, f64, f64)> = vec![
        (
            "RSS before the idle streams (MB)".into(),
            w.rss_before,
            a.rss_before,
        ),
        (
            format!("RSS with {idle} idle streams, +5 s (MB)"),
            w.rss_held,
            a.rss_held,
        ),
        (
            "RSS per idle stream (KB)".into(),
            w.per_stream_kb(),
            a.per_stream_kb(),
        ),
        ("RSS after the rounds (MB)".into(), w.rss_after, a.rss_after),
        ("peak RSS, VmHWM (MB)".into(), w.peak, a.peak),
        (
            format!(
                "CPU holding them, {} s quiet (% of a core)",
                QUIET.as_secs()
            ),
            w.quiet_cpu,
            a.quiet_cpu,
        ),
        (
            "idle streams opened".into(),
            w.opened as f64,
            a.opened as f64,
        ),
        ("seconds to open them".into(), w.open_secs, a.open_secs),
        (
            "idle streams closed by the end".into(),
            w.closed_by_end as f64,
            a.closed_by_end as f64,
        ),
        (
            format!("reply -> event, 1 sender, p50 (ms, n={})", w.one.len()),
            p(&w.one, 0.5),
            p(&a.one, 0.5),
        ),
        (
            "reply -> event, 1 sender, p99 (ms)".into(),
            p(&w.one, 0.99),
            p(&a.one, 0.99),
        ),
        (
            format!(
                "reply -> event, {SENDERS} senders, p50 (ms, n={})",
                w.four.len()
            ),
            p(&w.four, 0.5),
            p(&a.four, 0.5),
        ),
        (
            format!("reply -> event, {SENDERS} senders, p99 (ms)"),
            p(&w.four, 0.99),
            p(&a.four, 0.99),
        ),
    ];
    println!();
    println!(
        "webchat event streams: {kind}, {idle} idle streams, {replies} replies per round, {ACTIVE} active visitors, pace {} ms",
        pace.as_millis()
    );
    println!("{:<46} | {:>10} | {:>10}", "figure", "wm", "anchor");
    println!("{}", "-".repeat(72));
    for (name, w, a) in rows {
        println!("{name:<46} | {w:>10.1} | {a:>10.1}");
    }
    println!(
        "(anchor: bare axum Sse of a broadcast receiver; each event also goes to its idle streams)"
    );
    println!("run took {:.0} s", started.elapsed().as_secs_f64());
    let target_mb = 200.0;
    if w.rss_held >= target_mb {
        println!(
            "wm holds {idle} idle streams in {:.0} MB: over the {target_mb:.0} MB target",
            w.rss_held
        );
    }
    Ok(())
}
