//! The axum extractor: a genuine delivery reaches the handler once; tampering, a wrong
//! secret, an old timestamp or a re-serialised body do not.
#![cfg(feature = "axum")]
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{Request, StatusCode};
use axum::routing::post;
use http_body_util::BodyExt;
use tower::ServiceExt;
use wm_types::events::ContactEventData;
use wm_webhook::extract::{VerifiedEvent, WebhookConfig};
use wm_webhook::sign_header;

const NOW: i64 = 1_795_000_000;
const SECRET: &str = "whsec_current";

#[derive(Clone)]
struct AppState {
    config: WebhookConfig,
    handled: Arc<AtomicUsize>,
}

impl axum::extract::FromRef<AppState> for WebhookConfig {
    fn from_ref(s: &AppState) -> WebhookConfig {
        s.config.clone()
    }
}

async fn handler(
    State(s): State<AppState>,
    VerifiedEvent(e): VerifiedEvent<ContactEventData>,
) -> String {
    s.handled.fetch_add(1, Ordering::SeqCst);
    e.data.full_name.unwrap_or_default()
}

fn app() -> (Router, Arc<AtomicUsize>) {
    let handled = Arc::new(AtomicUsize::new(0));
    let config = WebhookConfig::new([SECRET, "whsec_previous"]).clock(|| NOW);
    let state = AppState {
        config,
        handled: handled.clone(),
    };
    (
        Router::new().route("/wm", post(handler)).with_state(state),
        handled,
    )
}

const BODY: &str = r#"{"id":"0195f3c2-0000-7000-8000-000000000001","event":"contact.created","createdAt":"2026-11-21T10:00:00.000Z","data":{"organizationId":"0195f3c2-0000-7000-8000-0000000000aa","contactId":"0195f3c2-0000-7000-8000-0000000000bb","fullName":"Ana","primaryPhone":null,"primaryEmail":null,"lifecycleStage":null}}"#;

async fn send(app: &Router, body: &str, header: &str) -> (StatusCode, String) {
    let req = Request::post("/wm")
        .header("x-wm-signature", header)
        .header("x-wm-delivery", "0195f3c2-0000-7000-8000-000000000001")
        .body(Body::from(body.to_owned()))
        .unwrap();
    let res = app.clone().oneshot(req).await.unwrap();
    let status = res.status();
    let text =
        String::from_utf8(res.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap();
    (status, text)
}

#[tokio::test]
async fn a_genuine_delivery_is_handled_once() {
    let (app, handled) = app();
    let header = sign_header(SECRET, NOW - 10, BODY.as_bytes());
    assert_eq!(
        send(&app, BODY, &header).await,
        (StatusCode::OK, "Ana".to_owned())
    );
    // The same delivery again (a retry): acknowledged, not handled again.
    let (status, _) = send(&app, BODY, &header).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(handled.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_rotated_secret_still_verifies() {
    let (app, handled) = app();
    let header = sign_header("whsec_previous", NOW, BODY.as_bytes());
    assert_eq!(send(&app, BODY, &header).await.0, StatusCode::OK);
    assert_eq!(handled.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn forgeries_are_refused() {
    let (app, handled) = app();
    let good = sign_header(SECRET, NOW, BODY.as_bytes());
    let tampered = BODY.replace("Ana", "Eve");
    assert_eq!(
        send(&app, &tampered, &good).await.0,
        StatusCode::UNAUTHORIZED
    );
    let reserialised =
        serde_json::to_string_pretty(&serde_json::from_str::<serde_json::Value>(BODY).unwrap())
            .unwrap();
    assert_eq!(
        send(&app, &reserialised, &good).await.0,
        StatusCode::UNAUTHORIZED
    );
    let wrong = sign_header("whsec_other", NOW, BODY.as_bytes());
    assert_eq!(send(&app, BODY, &wrong).await.0, StatusCode::UNAUTHORIZED);
    let old = sign_header(SECRET, NOW - 301, BODY.as_bytes());
    assert_eq!(send(&app, BODY, &old).await.0, StatusCode::UNAUTHORIZED);
    assert_eq!(
        send(&app, BODY, "garbage").await.0,
        StatusCode::UNAUTHORIZED
    );
    let not_event = r#"{"hello":"world"}"#;
    let signed = sign_header(SECRET, NOW, not_event.as_bytes());
    assert_eq!(
        send(&app, not_event, &signed).await.0,
        StatusCode::BAD_REQUEST
    );
    assert_eq!(handled.load(Ordering::SeqCst), 0);
}
