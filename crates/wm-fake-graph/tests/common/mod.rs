//! Shared helpers: a fake with one number and a few templates, and a small
//! axum webhook receiver that verifies `X-Hub-Signature-256` independently.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod media;
pub mod users;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use hmac::{Hmac, KeyInit, Mac};
use serde_json::{Value, json};
use sha2::Sha256;
use wm_fake_graph::{
    FakeGraph, FakeGraphOptions, NumberSpec, StatusOptions, TemplateSpec, TemplateStatus,
    WebhookConfig,
};

pub const PNID: &str = "106540352242922";
pub const WABA: &str = "102290129340398";
pub const DISPLAY: &str = "15550783881";
pub const TOKEN: &str = "EAAGtesttoken";
pub const SECRET: &str = "app-secret-for-tests";
pub const VERSION: &str = "v23.0";

/// One webhook POST as the receiver saw it.
#[derive(Debug, Clone)]
pub struct Received {
    pub body: Vec<u8>,
    pub signature: Option<String>,
    pub content_type: Option<String>,
    pub signature_valid: bool,
}

impl Received {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }
}

#[derive(Clone, Default)]
struct RxState {
    got: Arc<Mutex<Vec<Received>>>,
    fail_next: Arc<AtomicU32>,
    secret: Arc<String>,
}

/// A webhook receiver on 127.0.0.1.
pub struct Receiver {
    pub url: String,
    state: RxState,
}

fn hmac_hex(secret: &str, body: &[u8]) -> String {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(body);
    hex::encode(mac.finalize().into_bytes())
}

async fn receive(State(st): State<RxState>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let signature = headers
        .get("x-hub-signature-256")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let content_type = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let expected = format!("sha256={}", hmac_hex(&st.secret, &body));
    let signature_valid = signature.as_deref() == Some(expected.as_str());
    st.got.lock().unwrap().push(Received {
        body: body.to_vec(),
        signature,
        content_type,
        signature_valid,
    });
    let fail = st.fail_next.load(Ordering::SeqCst);
    if fail > 0 {
        st.fail_next.store(fail - 1, Ordering::SeqCst);
        return StatusCode::INTERNAL_SERVER_ERROR;
    }
    if signature_valid {
        StatusCode::OK
    } else {
        StatusCode::FORBIDDEN
    }
}

impl Receiver {
    pub async fn start(secret: &str) -> Self {
        let state = RxState {
            secret: Arc::new(secret.to_owned()),
            ..RxState::default()
        };
        let app = axum::Router::new()
            .route("/webhook", post(receive))
            .with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self {
            url: format!("http://{addr}/webhook"),
            state,
        }
    }

    pub fn received(&self) -> Vec<Received> {
        self.state.got.lock().unwrap().clone()
    }

    /// Answers the next `n` deliveries with 500.
    pub fn fail_next(&self, n: u32) {
        self.state.fail_next.store(n, Ordering::SeqCst);
    }

    /// Waits until at least `n` POSTs arrived.
    pub async fn wait_for(&self, n: usize, timeout: Duration) -> Vec<Received> {
        let deadline = Instant::now() + timeout;
        loop {
            let got = self.received();
            if got.len() >= n || Instant::now() >= deadline {
                return got;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// The `statuses[]` entries received so far, in arrival order.
    pub fn statuses(&self) -> Vec<Value> {
        self.received()
            .iter()
            .filter_map(|r| {
                r.json()["entry"][0]["changes"][0]["value"]["statuses"]
                    .as_array()
                    .cloned()
            })
            .flatten()
            .collect()
    }
}

pub fn number() -> NumberSpec {
    NumberSpec {
        phone_number_id: PNID.into(),
        waba_id: WABA.into(),
        display_phone_number: DISPLAY.into(),
        access_token: TOKEN.into(),
    }
}

pub fn template(name: &str, status: TemplateStatus, body: &str) -> TemplateSpec {
    TemplateSpec {
        waba_id: WABA.into(),
        name: name.into(),
        language: "en_US".into(),
        category: "UTILITY".into(),
        status,
        body_text: body.into(),
    }
}

/// A fake with one number and templates `order_update` (2 params, approved),
/// `hello` (0 params), `paused_tpl`, `disabled_tpl`, `pending_tpl`.
pub async fn fake() -> FakeGraph {
    let fake = FakeGraph::start(FakeGraphOptions::default()).await.unwrap();
    fake.register_number(number());
    fake.register_template(template(
        "order_update",
        TemplateStatus::Approved,
        "Hi {{1}}, order {{2}} shipped.",
    ));
    fake.register_template(template("hello", TemplateStatus::Approved, "Hello there"));
    fake.register_template(template(
        "paused_tpl",
        TemplateStatus::Paused,
        "Paused {{1}}",
    ));
    fake.register_template(template(
        "disabled_tpl",
        TemplateStatus::Disabled,
        "Disabled {{1}}",
    ));
    fake.register_template(template(
        "pending_tpl",
        TemplateStatus::Pending,
        "Pending {{1}}",
    ));
    fake
}

/// A fake plus a receiver wired as its webhook target.
pub async fn fake_with_receiver(statuses: StatusOptions) -> (FakeGraph, Receiver) {
    let fake = fake().await;
    let rx = Receiver::start(SECRET).await;
    let retry = wm_fake_graph::RetryPolicy {
        initial_backoff_ms: 20,
        ..Default::default()
    };
    fake.configure_webhook(Some(WebhookConfig {
        url: rx.url.clone(),
        app_secret: SECRET.into(),
        statuses,
        retry,
    }));
    (fake, rx)
}

pub fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder().no_proxy().build().unwrap()
}

pub fn template_body(to: &str, name: &str, params: &[&str]) -> Value {
    let parameters: Vec<Value> = params
        .iter()
        .map(|p| json!({ "type": "text", "text": p }))
        .collect();
    json!({
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": to,
        "type": "template",
        "template": {
            "name": name,
            "language": { "code": "en_US" },
            "components": [{ "type": "body", "parameters": parameters }],
        },
    })
}

pub fn messages_url(fake: &FakeGraph, pnid: &str) -> String {
    format!("{}/{VERSION}/{pnid}/messages", fake.url())
}

/// Sends `body` with the default token; returns (HTTP status, JSON body).
pub async fn send(client: &reqwest::Client, fake: &FakeGraph, body: &Value) -> (u16, Value) {
    send_as(client, fake, PNID, Some(TOKEN), body).await
}

pub async fn send_as(
    client: &reqwest::Client,
    fake: &FakeGraph,
    pnid: &str,
    token: Option<&str>,
    body: &Value,
) -> (u16, Value) {
    let mut req = client.post(messages_url(fake, pnid)).json(body);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap())
}

/// Asserts the documented error shape and returns the `error` object.
pub fn assert_error(status: u16, body: &Value, http: u16, code: i64) -> Value {
    assert_eq!(status, http, "HTTP status for code {code}: {body}");
    let err = &body["error"];
    assert_eq!(err["code"], json!(code), "{body}");
    assert!(err["message"].is_string(), "{body}");
    assert!(err["type"].is_string(), "{body}");
    assert!(
        err["fbtrace_id"].as_str().is_some_and(|s| !s.is_empty()),
        "{body}"
    );
    err.clone()
}
