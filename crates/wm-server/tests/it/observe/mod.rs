//! Operating the server: request ids and the request log (fields, no secrets) here; metrics
//! that move with real work in `metrics`, readiness and shutdown in `readiness`.

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
use crate::support::{ADMIN, IdOf, Resp, TestApp};
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
        static UNDECIDED: std::sync::Once = std::sync::Once::new();
        UNDECIDED.call_once(|| {
            // A callsite first hit on a thread with no subscriber caches "never", and one
            // registering on another thread while `refresh` runs can store that after it:
            // a test then misses a line. A process-wide subscriber that answers "sometimes"
            // keeps every callsite asking the thread's own subscriber instead.
            let _ = tracing::subscriber::set_global_default(Undecided);
        });
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

/// Takes no event and no span, and never lets a callsite cache its interest.
struct Undecided;

impl tracing::Subscriber for Undecided {
    fn register_callsite(
        &self,
        _: &'static tracing::Metadata<'static>,
    ) -> tracing::subscriber::Interest {
        tracing::subscriber::Interest::sometimes()
    }
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        false
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, _: &tracing::Event<'_>) {}
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
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
    let id = c.id();
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

mod metrics;
mod platform;
mod readiness;
