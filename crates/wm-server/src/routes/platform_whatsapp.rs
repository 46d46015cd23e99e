//! `/platform/whatsapp/webhook`: where Meta delivers the Cloud API's webhooks (no API key;
//! the platform proves itself with the verify token in the handshake and an HMAC of every
//! body keyed with the app secret).
//!
//! `GET` answers the subscription handshake. `POST` checks `X-Hub-Signature-256` before
//! reading anything, keeps the body and answers 200 at once; the events are applied right
//! after, and again by the campaign worker for any a crash left (see
//! [`crate::services::platform`]).

use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;

use crate::error::{ApiError, ApiResult};
use crate::provider::whatsapp::webhook::{verify_signature, verify_token_matches};
use crate::services::platform;
use crate::state::AppState;

/// The webhook routes.
pub fn router() -> Router<AppState> {
    Router::new().route("/platform/whatsapp/webhook", get(handshake).post(receive))
}

#[derive(Deserialize)]
struct Handshake {
    #[serde(rename = "hub.mode")]
    mode: Option<String>,
    #[serde(rename = "hub.verify_token")]
    verify_token: Option<String>,
    #[serde(rename = "hub.challenge")]
    challenge: Option<String>,
}

fn forbidden() -> ApiError {
    ApiError::business(
        StatusCode::FORBIDDEN,
        None,
        "The verification token does not match.",
    )
}

async fn handshake(State(s): State<AppState>, Query(q): Query<Handshake>) -> Response {
    let expected = s.settings.whatsapp.verify_token.as_deref();
    match (expected, q.mode.as_deref(), q.verify_token, q.challenge) {
        (Some(expected), Some("subscribe"), Some(given), Some(challenge))
            if verify_token_matches(expected, &given) =>
        {
            ([(header::CONTENT_TYPE, "text/plain")], challenge).into_response()
        }
        _ => forbidden().into_response(),
    }
}

async fn receive(
    State(s): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult<Json<serde_json::Value>> {
    let signature = headers
        .get("x-hub-signature-256")
        .and_then(|v| v.to_str().ok());
    let verified = s
        .settings
        .whatsapp
        .app_secret
        .as_deref()
        .is_some_and(|secret| verify_signature(secret, signature, &body));
    if !verified {
        return Err(ApiError::business(
            StatusCode::UNAUTHORIZED,
            None,
            "The X-Hub-Signature-256 signature is missing or wrong.",
        ));
    }
    let payload = String::from_utf8(body.to_vec())
        .map_err(|_| ApiError::invalid("the webhook body is not UTF-8"))?
        .replace('\0', "\u{FFFD}");
    platform::keep(&s, "whatsapp", payload).await?;
    // Applied right away, off the request, by this replica's applier (one task, so a burst
    // of webhooks queues in the table instead of crowding the connection pool).
    s.intake_wake.notify_one();
    Ok(Json(serde_json::json!({ "received": true })))
}
