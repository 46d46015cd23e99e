//! `/platform/{provider}/webhook`: where a messaging platform delivers its webhooks (no API
//! key; the platform proves itself through its [`PlatformIntake`]: Meta's with the verify
//! token of the handshake and an HMAC of every body keyed with the app secret).
//!
//! `GET` answers the subscription handshake. `POST` checks the body's signature before
//! reading anything, keeps the body and answers 200 at once; the events are applied right
//! after, and again by the applier for any a crash left (see [`crate::services::platform`]).
//! A provider wm does not run is a 404.

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use wm_core::platform::{Handshake, PlatformIntake};

use crate::error::{ApiError, ApiResult};
use crate::services::platform;
use crate::state::AppState;

/// The webhook routes.
pub fn router() -> Router<AppState> {
    Router::new().route("/platform/{provider}/webhook", get(handshake).post(receive))
}

fn intake(s: &AppState, provider: &str) -> ApiResult<std::sync::Arc<dyn PlatformIntake>> {
    s.registry.intake(provider).ok_or_else(|| {
        ApiError::business(
            StatusCode::NOT_FOUND,
            None,
            format!("No messaging platform named {provider:?} is configured."),
        )
    })
}

async fn handshake(
    State(s): State<AppState>,
    Path(provider): Path<String>,
    Query(q): Query<Vec<(String, String)>>,
) -> Response {
    let intake = match intake(&s, &provider) {
        Ok(i) => i,
        Err(e) => return e.into_response(),
    };
    match intake.handshake(&q) {
        Handshake::Accept(challenge) => {
            ([(header::CONTENT_TYPE, "text/plain")], challenge).into_response()
        }
        Handshake::Refuse => ApiError::business(
            StatusCode::FORBIDDEN,
            None,
            "The verification token does not match.",
        )
        .into_response(),
    }
}

async fn receive(
    State(s): State<AppState>,
    Path(provider): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult<Json<serde_json::Value>> {
    let intake = intake(&s, &provider)?;
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    if !intake.verify(&header, &body) {
        return Err(ApiError::business(
            StatusCode::UNAUTHORIZED,
            None,
            "The webhook signature is missing or wrong.",
        ));
    }
    let payload = String::from_utf8(body.to_vec())
        .map_err(|_| ApiError::invalid("the webhook body is not UTF-8"))?
        .replace('\0', "\u{FFFD}");
    platform::keep(&s, intake.name(), payload).await?;
    // Applied right away, off the request, by this replica's applier (one task, so a burst
    // of webhooks queues in the table instead of crowding the connection pool).
    s.intake_wake.notify_one();
    Ok(Json(serde_json::json!({ "received": true })))
}
