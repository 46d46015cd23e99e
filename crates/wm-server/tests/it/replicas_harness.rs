//! Running real `wm-server` processes on one PostgreSQL database, behind a stand-in load
//! balancer: shared by the replica test (`replicas_processes.rs`) and the replica benchmark
//! (`benches/replicas.rs`, which includes this file by path).

#![allow(dead_code, clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::http::HeaderMap;
use serde_json::Value;

/// The operator token of the replicas.
pub const ADMIN: &str = "replicas-admin";
/// Their `WM_SECRET_KEY`.
pub const SECRET_KEY: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

/// A fresh, empty database on the server of `url` (a PostgreSQL URL); its URL. For the
/// benchmarks, which keep it for inspection; the tests use `crate::pg`, which drops theirs.
pub async fn fresh_pg_database(url: &str) -> String {
    use sea_orm::{ConnectionTrait, Database};
    let admin = Database::connect(url).await.unwrap();
    let name = format!("wm_replicas_{}", uuid::Uuid::new_v4().simple());
    admin
        .execute_unprepared(&format!("CREATE DATABASE {name}"))
        .await
        .unwrap();
    let (head, query) = match url.split_once('?') {
        Some((h, q)) => (h.to_owned(), format!("?{q}")),
        None => (url.to_owned(), String::new()),
    };
    let (server, _) = head.rsplit_once('/').unwrap();
    format!("{server}/{name}{query}")
}

/// The database of a test or benchmark that runs server processes, and its kind: a fresh
/// database on the PostgreSQL server in the environment variable `var` when it is set, else
/// a SQLite file in `dir`.
pub async fn process_database(var: &str, dir: &Path) -> (String, &'static str) {
    match std::env::var(var) {
        Ok(url) if !url.is_empty() => (fresh_pg_database(&url).await, "PostgreSQL"),
        _ => (
            format!("sqlite://{}?mode=rwc", dir.join("wm.db").display()),
            "SQLite",
        ),
    }
}

/// A free loopback port.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Runs a `wm-server` command expected to stop by itself (a refusal at start) and returns
/// how it exited and what it wrote to stderr; one still running after a minute is killed
/// and reported.
pub async fn run_to_exit(mut command: Command) -> (std::process::ExitStatus, String) {
    let mut child = command
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start wm-server");
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("wm-server did not stop: {command:?}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    (status, stderr)
}

/// One `wm-server serve` process and where it logs.
pub struct Replica {
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// Its log file.
    pub log: PathBuf,
    /// The process.
    pub child: Child,
}

impl Replica {
    /// Starts `bin serve` on `db` with the WhatsApp provider at `graph`, its platform
    /// webhooks signed with `app_secret`, and the extra `env`.
    pub fn start(
        bin: &Path,
        db: &str,
        graph: &str,
        app_secret: &str,
        port: u16,
        log: PathBuf,
        env: &[(&str, String)],
    ) -> Replica {
        let out = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .unwrap();
        let mut cmd = Command::new(bin);
        cmd.args(["serve", "--database-url", db])
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .args(["--admin-token", ADMIN])
            .env("WM_PROVIDER", "whatsapp")
            .env("WM_SECRET_KEY", SECRET_KEY)
            .env("WM_WHATSAPP_GRAPH_URL", graph)
            .env("WM_WHATSAPP_APP_SECRET", app_secret)
            .env("WM_ALLOW_INSECURE_WEBHOOKS", "true")
            .env("WM_METRICS_LISTEN", "")
            .env("WM_SHUTDOWN_DELAY", "0s");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = cmd
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .expect("start wm-server");
        Replica { port, log, child }
    }

    /// Its API base URL.
    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}/api/v1", self.port)
    }

    /// When this replica last logged a chunk of messages sent (RFC 3339, UTC: ordered as
    /// text), if it did.
    pub fn last_chunk(&self) -> Option<String> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .rev()
            .find(|l| l.contains("chunk sent"))
            .and_then(|l| l.split_whitespace().next())
            .map(str::to_owned)
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits until `base` answers its liveness probe.
pub async fn healthy(http: &reqwest::Client, base: &str) {
    for _ in 0..300 {
        if let Ok(r) = http.get(format!("{base}/health")).send().await
            && r.status() == 200
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{base} never became healthy");
}

/// Calls a replica; returns (status, body).
pub async fn call(
    http: &reqwest::Client,
    method: reqwest::Method,
    url: String,
    token: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut req = http.request(method, url).bearer_auth(token);
    if let Some(b) = body {
        req = req.json(&b);
    }
    let res = req.send().await.expect("request");
    let status = res.status().as_u16();
    let body = res.json::<Value>().await.unwrap_or(Value::Null);
    (status, body)
}

/// Serves `router` on a loopback port; returns its base URL.
pub async fn serve(router: axum::Router) -> String {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(l, router).await.ok() });
    format!("http://{addr}")
}

/// The load balancer in front of the replicas' platform intake (`{url}/platform`): each
/// webhook goes to the next replica that answers (a dead one is skipped, as a balancer's
/// health check would).
pub async fn balancer(http: reqwest::Client, ports: Vec<u16>) -> String {
    let next = Arc::new(Mutex::new(0usize));
    let route = axum::routing::post(move |h: HeaderMap, b: Bytes| {
        let (http, ports, next) = (http.clone(), ports.clone(), next.clone());
        async move {
            for _ in 0..ports.len() {
                let port = {
                    let mut n = next.lock().unwrap();
                    *n += 1;
                    ports[*n % ports.len()]
                };
                let mut req = http
                    .post(format!(
                        "http://127.0.0.1:{port}/api/v1/platform/whatsapp/webhook"
                    ))
                    .body(b.clone());
                for (k, v) in &h {
                    if k == "x-hub-signature-256" || k == "content-type" {
                        req = req.header(k, v);
                    }
                }
                if let Ok(r) = req.send().await
                    && r.status().is_success()
                {
                    return axum::http::StatusCode::OK;
                }
            }
            axum::http::StatusCode::BAD_GATEWAY
        }
    });
    serve(axum::Router::new().route("/platform", route)).await
}

/// The fake Cloud API, posting its status webhooks to `{balancer}/platform` signed with
/// `app_secret` and retrying as the platform does when no replica answers (Meta retries for
/// days; the fake's default gives up after 4 tries), with the approved template `promo`
/// ("Hola {{1}}") on `waba`. Numbers are registered by the caller.
pub async fn platform(balancer: &str, app_secret: &str, waba: &str) -> wm_fake_graph::FakeGraph {
    platform_with(
        &format!("{balancer}/platform"),
        app_secret,
        waba,
        Default::default(),
    )
    .await
}

/// [`platform`] posting its webhooks to `url`, its statuses as `statuses` says (disabled:
/// the caller posts them itself, say as a burst).
pub async fn platform_with(
    url: &str,
    app_secret: &str,
    waba: &str,
    statuses: wm_fake_graph::StatusOptions,
) -> wm_fake_graph::FakeGraph {
    use wm_fake_graph::{
        FakeGraph, FakeGraphOptions, RetryPolicy, TemplateSpec, TemplateStatus, WebhookConfig,
    };
    let fake = FakeGraph::start(FakeGraphOptions {
        webhook: Some(WebhookConfig {
            url: url.to_owned(),
            app_secret: app_secret.to_owned(),
            statuses,
            retry: RetryPolicy {
                max_attempts: 12,
                initial_backoff_ms: 200,
                timeout_ms: 10_000,
            },
        }),
        ..Default::default()
    })
    .await
    .unwrap();
    fake.register_template(TemplateSpec {
        waba_id: waba.into(),
        name: "promo".into(),
        language: "es_MX".into(),
        category: "MARKETING".into(),
        status: TemplateStatus::Approved,
        body_text: "Hola {{1}}".into(),
    });
    fake
}

/// One replica per port (`start(index, port)`), each answering its liveness probe.
pub async fn start_replicas(
    http: &reqwest::Client,
    ports: &[u16],
    start: impl Fn(usize, u16) -> Replica,
) -> Vec<Replica> {
    let replicas: Vec<Replica> = ports
        .iter()
        .enumerate()
        .map(|(i, p)| start(i, *p))
        .collect();
    for r in &replicas {
        healthy(http, &r.base()).await;
    }
    replicas
}

/// `POST {base}/admin/organizations/{org}{path}` with the operator token; the answer, which
/// must be a success.
pub async fn admin_post(
    http: &reqwest::Client,
    base: &str,
    org: &str,
    path: &str,
    body: Value,
) -> Value {
    let (status, v) = call(
        http,
        reqwest::Method::POST,
        format!("{base}/admin/organizations/{org}{path}"),
        ADMIN,
        Some(body),
    )
    .await;
    assert!(status < 300, "{path}: {status} {v}");
    v
}

/// A new organisation with one user, through the operator API at `base`; their ids.
pub async fn organisation(http: &reqwest::Client, base: &str, name: &str) -> (String, String) {
    let (_, org) = call(
        http,
        reqwest::Method::POST,
        format!("{base}/admin/organizations"),
        ADMIN,
        Some(serde_json::json!({"name": name})),
    )
    .await;
    let org = org["id"].as_str().unwrap().to_owned();
    let (_, user) = call(
        http,
        reqwest::Method::POST,
        format!("{base}/admin/organizations/{org}/users"),
        ADMIN,
        Some(serde_json::json!({"fullName": "Ops", "email": "ops@example.com"})),
    )
    .await;
    (org, user["id"].as_str().unwrap().to_owned())
}
