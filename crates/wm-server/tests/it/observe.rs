//! Operating the server: request ids, the request log (fields, no secrets), metrics that
//! move with real work, and readiness.

use std::io::Write;
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use chrono::Duration;
use serde_json::{Value, json};
use tower::ServiceExt;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;
use wm_server::observe::health::Worker;
use wm_server::observe::{LogFormat, exporter};

use crate::kit::{campaign_to, contacts, setup, top_up};
use crate::support::{ADMIN, Resp, TestApp};
use crate::webhooks::{Receiver, subscribe};

/// Log output captured in memory.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Captured {
    type Writer = Captured;
    fn make_writer(&'a self) -> Captured {
        self.clone()
    }
}

impl Captured {
    /// The binary's subscriber (`format`, level info) writing here, as this thread's
    /// default until the guard drops.
    fn start(format: LogFormat) -> (Captured, tracing::subscriber::DefaultGuard) {
        let out = Captured::default();
        let sub = wm_server::observe::subscriber(format, EnvFilter::new("info"), out.clone());
        let guard = tracing::subscriber::set_default(sub);
        Captured::refresh();
        (out, guard)
    }

    /// Recomputes every callsite's cached interest. Tests on other threads register
    /// callsites and per-thread subscribers concurrently, and a callsite whose registration
    /// raced with ours can be left cached as "never": call this right before the requests
    /// whose lines a test checks.
    fn refresh() {
        tracing::callsite::rebuild_interest_cache();
    }

    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }

    /// The lines that mention `needle`.
    fn lines_with(&self, needle: &str) -> Vec<String> {
        self.text()
            .lines()
            .filter(|l| l.contains(needle))
            .map(str::to_owned)
            .collect()
    }
}

fn request_id(r: &Resp) -> String {
    r.headers
        .get("x-request-id")
        .unwrap_or_else(|| panic!("no X-Request-Id on a {} answer", r.status))
        .to_str()
        .unwrap()
        .to_owned()
}

async fn with_id(app: &TestApp, method: Method, path: &str, id: Option<&str>) -> Resp {
    let mut req = Request::builder()
        .method(method)
        .uri(format!("/api/v1{path}"));
    if let Some(id) = id {
        req = req.header("x-request-id", id);
    }
    app.send(req.body(Body::empty()).unwrap()).await
}

#[tokio::test]
async fn request_ids_are_echoed_when_sane_and_generated_otherwise() {
    let app = TestApp::new().await;
    let echoed = with_id(&app, Method::GET, "/health", Some("lb-7f3a.9_X")).await;
    assert_eq!(request_id(&echoed), "lb-7f3a.9_X");
    let long = "a".repeat(65);
    for bad in ["has space", "quote\"d", long.as_str()] {
        let r = with_id(&app, Method::GET, "/health", Some(bad)).await;
        let id = request_id(&r);
        assert_ne!(id, bad);
        assert!(uuid::Uuid::parse_str(&id).is_ok(), "{id}");
    }
    let a = request_id(&with_id(&app, Method::GET, "/health", None).await);
    let b = request_id(&with_id(&app, Method::GET, "/health", None).await);
    assert!(uuid::Uuid::parse_str(&a).is_ok());
    assert_ne!(a, b, "a new id per request");
    // Errors carry it too: 401, 404 (unknown route), 405, 400.
    let r = with_id(&app, Method::GET, "/contacts", Some("e-401")).await;
    assert_eq!((r.status.as_u16(), request_id(&r)), (401, "e-401".into()));
    let r = with_id(&app, Method::GET, "/no/such/route", Some("e-404")).await;
    assert_eq!((r.status.as_u16(), request_id(&r)), (404, "e-404".into()));
    let r = with_id(&app, Method::DELETE, "/health", Some("e-405")).await;
    assert_eq!((r.status.as_u16(), request_id(&r)), (405, "e-405".into()));
    let org = app.org().await;
    let r = org.post("/contacts", json!({"primaryPhone": "nope"})).await;
    assert_eq!(r.status, 400);
    request_id(&r);
}

#[tokio::test]
async fn a_panicking_handler_answers_500_with_its_request_id_and_logs_why() {
    let (logs, _guard) = Captured::start(LogFormat::Text);
    let app = wm_server::observe::wrap(axum::Router::new().route(
        "/boom",
        axum::routing::get(|| async {
            if true {
                panic!("kaboom");
            }
            "unreachable"
        }),
    ));
    let res = app
        .oneshot(
            Request::get("/boom")
                .header("x-request-id", "boom-1")
                .body(Body::empty())
                .unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(res.headers()["x-request-id"], "boom-1");
    let lines = logs.lines_with("request_id=boom-1");
    assert!(
        lines.iter().any(|l| l.contains("handler panicked: kaboom")),
        "{lines:#?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("status=500") && l.contains("error_code=INTERNAL")),
        "{lines:#?}"
    );
}

#[tokio::test]
async fn each_request_has_one_log_line_with_its_fields_and_no_secret() {
    let (logs, _guard) = Captured::start(LogFormat::Text);
    let app = TestApp::new().await;
    let org = app.org().await;
    let secret_name = "Zelda Bodyonly";
    let c = org
        .contact(json!({"fullName": secret_name, "primaryPhone": "+14155550177"}))
        .await;
    let id = c["id"].as_str().unwrap();
    Captured::refresh();
    let r = with_id_and_key(&app, &format!("/contacts/{id}"), &org.key, "get-1").await;
    assert_eq!(r.status, 200);
    let dup = org
        .post("/contacts", json!({"primaryPhone": "+14155550177"}))
        .await;
    assert_eq!(dup.status, 409);

    let lines = logs.lines_with("request_id=get-1");
    assert_eq!(lines.len(), 1, "one line per request: {lines:#?}");
    let line = &lines[0];
    for field in [
        "method=GET",
        "route=/api/v1/contacts/{id}",
        &format!("org_id={}", org.id),
        "key_id=",
        "status=200",
        "duration_ms=",
    ] {
        assert!(line.contains(field), "{field} missing in {line}");
    }
    assert!(line.contains(" INFO "), "{line}");
    assert!(!line.contains("slow="), "{line}");
    let conflict = logs.lines_with("status=409");
    assert_eq!(conflict.len(), 1, "{conflict:#?}");
    assert!(
        conflict[0].contains("error_code=CONTACT_PHONE_EXISTS"),
        "{conflict:#?}"
    );
    assert!(
        conflict[0].contains("route=/api/v1/contacts "),
        "{conflict:#?}"
    );
    // The operator calls are logged too, without their token.
    let admin = logs.lines_with("route=/api/v1/admin/organizations}");
    assert!(admin.iter().any(|l| l.contains("status=201")), "{admin:#?}");
    let all = logs.text();
    for secret in [org.key.as_str(), ADMIN, secret_name, "+14155550177", id] {
        assert!(
            !all.contains(secret),
            "{secret:?} leaked into the log:\n{all}"
        );
    }
}

async fn with_id_and_key(app: &TestApp, path: &str, key: &str, id: &str) -> Resp {
    let req = Request::get(format!("/api/v1{path}"))
        .header("authorization", format!("Bearer {key}"))
        .header("x-request-id", id)
        .body(Body::empty())
        .unwrap();
    app.send(req).await
}

#[tokio::test]
async fn json_logs_are_one_object_per_line_with_the_span_fields() {
    let (logs, _guard) = Captured::start(LogFormat::Json);
    let app = TestApp::new().await;
    let org = app.org().await;
    Captured::refresh();
    let r = with_id_and_key(&app, "/contacts", &org.key, "json-1").await;
    assert_eq!(r.status, 200);
    let line = logs
        .lines_with("json-1")
        .into_iter()
        .find(|l| l.contains("\"status\":200"))
        .expect("the request line");
    let v: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(v["level"], "INFO");
    assert_eq!(v["message"], "request");
    assert_eq!(v["status"], 200);
    assert!(v["duration_ms"].is_number());
    let span = &v["span"];
    assert_eq!(span["request_id"], "json-1");
    assert_eq!(span["route"], "/api/v1/contacts");
    assert_eq!(span["method"], "GET");
    assert_eq!(span["org_id"], org.id.as_str());
    assert!(!logs.text().contains(&org.key));
}

/// The value of the series `name` whose labels include every `k="v"` of `labels`.
fn series(text: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter(|l| l.starts_with(name) && l[name.len()..].starts_with(['{', ' ']))
        .filter(|l| {
            labels
                .iter()
                .all(|(k, v)| l.contains(&format!("{k}=\"{v}\"")))
        })
        .map(|l| l.rsplit(' ').next().unwrap().parse::<f64>().unwrap())
        .reduce(|a, b| a + b)
}

#[tokio::test]
async fn metrics_move_when_a_campaign_is_sent_and_its_webhook_delivered() {
    let recorder = exporter::recorder();
    let handle = recorder.handle();
    let _local = metrics::set_default_local_recorder(&recorder);
    let app = TestApp::new().await;
    let org = app.org().await;
    let s = setup(&org).await;
    top_up(&org, 10.0).await;
    let mut ids = contacts(&org, 3, "m").await;
    let refused = org
        .contact(json!({"primaryPhone": "+5215512340000", "consent": {"given": true}}))
        .await;
    ids.push(refused["id"].as_str().unwrap().to_owned());
    let opted = org
        .contact(json!({"primaryPhone": "+5215512340001", "consent": {"given": true}}))
        .await;
    let opted = opted["id"].as_str().unwrap().to_owned();
    ids.push(opted.clone());
    let receiver = Receiver::start(&app).await;
    subscribe(&org, &receiver.url, &["campaign.finished"]).await;
    let id = campaign_to(&org, &s, &s.plain, &ids).await;
    // Opted out after joining the audience: failed uncharged when the batch is charged.
    org.patch(&format!("/contacts/{opted}"), json!({"optedOut": true}))
        .await
        .ok(200);
    org.post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .ok(200);
    app.send_pass().await;
    app.send_pass().await;
    let c = org.get(&format!("/campaigns/{id}")).await.ok(200);
    assert_eq!(c["status"], "COMPLETED", "{c}");
    assert_eq!(app.deliver().await.delivered, 1);
    assert_eq!(receiver.got().len(), 1);
    exporter::collect_once(&app.state).await.unwrap();

    let text = handle.render();
    let get = |name: &str, labels: &[(&str, &str)]| {
        series(&text, name, labels).unwrap_or_else(|| panic!("{name} {labels:?} in\n{text}"))
    };
    let send_route = [
        ("method", "POST"),
        ("route", "/api/v1/campaigns/{id}/send"),
        ("status", "200"),
    ];
    assert_eq!(get("wm_http_requests_total", &send_route), 1.0);
    assert_eq!(
        get("wm_http_request_duration_seconds_count", &send_route),
        1.0
    );
    assert!(get("wm_http_request_duration_seconds_bucket", &[("le", "+Inf")]) >= 1.0);
    assert_eq!(get("wm_http_requests_in_flight", &[]), 0.0);
    let campaign = [("provider", "simulated"), ("source", "campaign")];
    assert_eq!(get("wm_messages_sent_total", &campaign), 3.0);
    let rejected = [("source", "campaign"), ("reason", "rejected")];
    assert_eq!(get("wm_messages_failed_total", &rejected), 1.0);
    let ineligible = [("source", "campaign"), ("reason", "ineligible")];
    assert_eq!(get("wm_messages_failed_total", &ineligible), 1.0);
    assert_eq!(get("wm_messages_refunded_total", &campaign), 1.0);
    assert_eq!(
        get("wm_campaign_batches_total", &[("result", "charged")]),
        1.0
    );
    assert_eq!(get("wm_wallet_charges_total", &[]), 1.0);
    assert!(get("wm_wallet_charged_micros_total", &[]) > 0.0);
    assert_eq!(get("wm_wallet_refunds_total", &[]), 1.0);
    assert_eq!(
        get("wm_webhook_deliveries_total", &[("outcome", "delivered")]),
        1.0
    );
    assert_eq!(get("wm_webhook_attempt_duration_seconds_count", &[]), 1.0);
    for worker in ["campaigns", "webhooks"] {
        let w = [("worker", worker)];
        assert!(get("wm_worker_pass_duration_seconds_count", &w) >= 1.0);
        assert!(
            get(
                "wm_worker_passes_total",
                &[("worker", worker), ("result", "ok")]
            ) >= 1.0
        );
        let at = get("wm_worker_last_success_timestamp_seconds", &w);
        assert!(
            (at - app.state.now_ms() as f64 / 1000.0).abs() < 60.0,
            "{at}"
        );
    }
    // The collector's gauges: nothing left waiting.
    assert_eq!(
        get("wm_recipients_pending", &[("campaign_status", "SENDING")]),
        0.0
    );
    assert_eq!(get("wm_webhook_queue_depth", &[("status", "pending")]), 0.0);
    assert_eq!(get("wm_webhook_queue_depth", &[("status", "failed")]), 0.0);
    assert_eq!(get("wm_outbox_lag_seconds", &[]), 0.0);
    assert!(get("wm_db_pool_max_connections", &[]) >= 1.0);
    assert!(series(&text, "wm_db_pool_connections", &[("state", "idle")]).is_some());
    // No ids in labels.
    assert!(!text.contains(&id) && !text.contains(&org.id), "{text}");
}

#[tokio::test]
async fn collector_gauges_show_waiting_work() {
    let recorder = exporter::recorder();
    let handle = recorder.handle();
    let _local = metrics::set_default_local_recorder(&recorder);
    let app = TestApp::new().await;
    let org = app.org().await;
    let s = setup(&org).await;
    top_up(&org, 10.0).await;
    let ids = contacts(&org, 2, "w").await;
    let receiver = Receiver::start(&app).await;
    subscribe(&org, &receiver.url, &["contact.updated"]).await;
    let id = campaign_to(&org, &s, &s.plain, &ids).await;
    org.post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .ok(200);
    org.patch(&format!("/contacts/{}", ids[0]), json!({"company": "Acme"}))
        .await
        .ok(200);
    app.clock.advance(Duration::seconds(90));
    exporter::collect_once(&app.state).await.unwrap();
    let text = handle.render();
    let pending = series(
        &text,
        "wm_recipients_pending",
        &[("campaign_status", "SENDING")],
    );
    assert_eq!(pending, Some(2.0), "{text}");
    let lag = series(&text, "wm_outbox_lag_seconds", &[]).unwrap();
    assert!((90.0..100.0).contains(&lag), "{lag}");
}

#[tokio::test]
async fn metrics_count_requests_refused_by_the_rate_limit() {
    let recorder = exporter::recorder();
    let handle = recorder.handle();
    let _local = metrics::set_default_local_recorder(&recorder);
    let app = TestApp::with_limit(3).await;
    let org = app.org().await;
    for _ in 0..3 {
        org.get("/users").await.ok(200);
    }
    org.get("/users")
        .await
        .assert_error(429, Some("API_KEY_RATE_LIMITED"));
    org.get("/users")
        .await
        .assert_error(429, Some("API_KEY_RATE_LIMITED"));

    let text = handle.render();
    assert_eq!(
        series(&text, "wm_rate_limited_total", &[]),
        Some(2.0),
        "{text}"
    );
    let refused = [("route", "/api/v1/users"), ("status", "429")];
    assert_eq!(
        series(&text, "wm_http_requests_total", &refused),
        Some(2.0),
        "{text}"
    );
}

#[tokio::test]
async fn metrics_count_automation_runs_by_result() {
    let recorder = exporter::recorder();
    let handle = recorder.handle();
    let _local = metrics::set_default_local_recorder(&recorder);
    let app = TestApp::new().await;
    let org = app.org().await;
    let flow = |name: &str, step: Value| {
        json!({"name": name, "status": "ACTIVE", "triggerType": "LIFECYCLE_STAGE_ENTERED",
               "triggerConfig": {"stage": "Customer"}, "createdByUserId": org.user_id,
               "steps": [step]})
    };
    for (name, step) in [
        (
            "tag",
            json!({"type": "ACTION", "config": {"kind": "ADD_TAG", "value": "vip"}}),
        ),
        (
            "wait",
            json!({"type": "WAIT", "config": {"kind": "MINUTES", "value": 30}}),
        ),
    ] {
        org.admin(Method::POST, "/automations", Some(flow(name, step)))
            .await
            .ok(201);
    }
    let customer = org.stage("Customer").await;
    let c = org
        .contact(json!({"primaryPhone": "+5215512340009", "consent": {"given": true}}))
        .await;
    org.patch(
        &format!("/contacts/{}", c["id"].as_str().unwrap()),
        json!({"lifecycleStageId": customer}),
    )
    .await
    .ok(200);
    assert_eq!(app.automation_pass().await.runs, 2);

    let text = handle.render();
    let runs = |result: &str| series(&text, "wm_automation_runs_total", &[("result", result)]);
    assert_eq!(runs("completed"), Some(1.0), "{text}");
    assert_eq!(runs("waiting"), Some(1.0), "{text}");
    assert_eq!(runs("failed"), None, "{text}");
    assert!(
        series(
            &text,
            "wm_worker_passes_total",
            &[("worker", "automations"), ("result", "ok")]
        )
        .is_some_and(|n| n >= 1.0),
        "{text}"
    );
}

async fn ready(app: &TestApp) -> Resp {
    app.call(Method::GET, "/health/ready", None, None).await
}

#[tokio::test]
async fn readiness_checks_the_database_migrations_and_started_workers() {
    let app = TestApp::new().await;
    let r = ready(&app).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["status"], "ok");
    assert_eq!(r.body["checks"]["database"], "ok");
    assert_eq!(r.body["checks"]["migrations"], "ok");
    for w in ["campaigns", "webhooks", "automations", "imports"] {
        assert_eq!(
            r.body["checks"]["workers"][w], "not running in this process",
            "{}",
            r.body
        );
    }
    // Liveness stays constant.
    let live = app.call(Method::GET, "/health", None, None).await;
    assert_eq!(
        (live.status.as_u16(), live.body.clone()),
        (200, json!({"status": "ok"}))
    );

    // A worker started here must show signs of life.
    app.state
        .health
        .started(Worker::Campaigns, app.state.now_ms());
    assert_eq!(
        ready(&app).await.body["checks"]["workers"]["campaigns"],
        "ok"
    );
    app.clock.advance(Duration::seconds(42));
    let r = ready(&app).await;
    assert_eq!(r.status, 503, "{}", r.body);
    assert_eq!(r.body["status"], "unavailable");
    assert_eq!(r.body["checks"]["workers"]["campaigns"], "stale 42s");
    assert_eq!(r.body["checks"]["database"], "ok");
    app.state.health.beat(Worker::Campaigns, app.state.now_ms());
    assert_eq!(ready(&app).await.status, 200);
}

#[tokio::test]
async fn a_closed_database_fails_readiness_and_a_500_logs_its_cause_in_the_request_span() {
    let (logs, _guard) = Captured::start(LogFormat::Text);
    let app = TestApp::new().await;
    let org = app.org().await;
    app.state.db.conn.close_by_ref().await.unwrap();
    let r = ready(&app).await;
    assert_eq!(r.status, 503, "{}", r.body);
    assert_eq!(r.body["checks"]["database"], "unreachable");
    assert_eq!(r.body["checks"]["migrations"], "not checked (no database)");
    // The key was never used, so authenticating it needs the database: a 500. Asked twice
    // at most: the first hit of the `internal error` callsite can race with another test
    // thread registering it (tracing-core's interest cache with per-thread subscribers).
    let mut lines = Vec::new();
    for attempt in ["db-down-1", "db-down-2"] {
        Captured::refresh();
        let r = with_id_and_key(&app, "/contacts", &org.key, attempt).await;
        r.assert_error(500, None);
        assert_eq!(request_id(&r), attempt);
        lines = logs.lines_with(&format!("request_id={attempt}"));
        if lines.iter().any(|l| l.contains("ERROR")) {
            break;
        }
    }
    assert!(
        lines
            .iter()
            .any(|l| l.contains("ERROR") && l.contains("internal error") && l.contains("error=")),
        "{lines:#?} in\n{}",
        logs.text()
    );
    assert!(!logs.text().contains(&org.key));
}

#[tokio::test]
async fn readiness_answers_503_at_once_when_shutdown_begins() {
    let app = TestApp::with_settings(|s| s.limits.shutdown_delay = std::time::Duration::ZERO).await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/api/v1", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(wm_server::run(app.state.clone(), listener, async move {
        stopped.await.ok();
    }));
    let _ = rustls::crypto::ring::default_provider().install_default();
    let body: Value = reqwest::get(format!("{base}/health/ready"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(body["status"], "ok", "{body}");
    for w in ["campaigns", "webhooks", "automations", "imports"] {
        assert_eq!(body["checks"]["workers"][w], "ok", "{body}");
    }
    assert!(!app.state.health.is_draining());
    stop.send(()).unwrap();
    server.await.unwrap().unwrap();
    assert!(app.state.health.is_draining());
    let r = ready(&app).await;
    assert_eq!(r.status, 503);
    assert_eq!(
        r.body,
        json!({"status": "unavailable", "checks": {"shutdown": "draining"}})
    );
}

#[tokio::test]
async fn during_the_shutdown_delay_the_replica_still_serves_with_readiness_at_503() {
    let app = TestApp::with_settings(|s| {
        s.limits.shutdown_delay = std::time::Duration::from_secs(2);
    })
    .await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/api/v1", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(wm_server::run(app.state.clone(), listener, async move {
        stopped.await.ok();
    }));
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::new();
    let status = |path: &'static str| {
        let (http, base) = (http.clone(), base.clone());
        async move {
            http.get(format!("{base}{path}"))
                .send()
                .await
                .map(|r| r.status().as_u16())
        }
    };
    assert_eq!(status("/health/ready").await.unwrap(), 200);
    stop.send(()).unwrap();
    // At once: readiness 503, so the balancer takes the replica out, while requests are
    // still answered (the listener stays open for the delay) and the workers have stopped.
    let mut seen = false;
    for _ in 0..100 {
        if status("/health/ready").await.unwrap() == 503 {
            seen = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(seen, "readiness never turned 503");
    assert_eq!(status("/health").await.unwrap(), 200, "still serving");
    assert!(
        app.state.stopping(),
        "the workers were told to stop at the signal"
    );
    assert!(!server.is_finished());
    server.await.unwrap().unwrap();
    assert!(status("/health").await.is_err(), "closed after the delay");
}

#[tokio::test]
async fn the_metrics_listener_serves_the_text_format() {
    // The only test that installs the process-wide recorder, as the binary does.
    let app = TestApp::new().await;
    let addr = "127.0.0.1:0".parse().ok();
    let exporter = exporter::serve(addr, &app.state).await.unwrap().unwrap();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let res = reqwest::get(format!("http://{}/metrics", exporter.addr))
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert!(
        res.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain; version=0.0.4")
    );
    let text = res.text().await.unwrap();
    assert!(
        text.contains("# TYPE wm_db_pool_connections gauge"),
        "{text}"
    );
    assert!(text.contains("# HELP wm_db_pool_max_connections"), "{text}");
    assert!(exporter::serve(None, &app.state).await.unwrap().is_none());
}
