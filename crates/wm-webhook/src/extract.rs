//! An axum extractor for receivers: [`VerifiedEvent`] reads the raw body, checks
//! `X-WM-Signature` against the configured secrets (several during a rotation), drops
//! deliveries it has already seen, and yields the typed event.
//!
//! ```no_run
//! use axum::{Router, routing::post};
//! use wm_webhook::extract::{VerifiedEvent, WebhookConfig};
//! use wm_types::events::ContactEventData;
//!
//! async fn on_event(VerifiedEvent(event): VerifiedEvent<serde_json::Value>) -> &'static str {
//!     println!("{} {}", event.event, event.id);
//!     "ok"
//! }
//!
//! let config = WebhookConfig::new(["whsec_..."]);
//! let app: Router = Router::new().route("/wm", post(on_event)).with_state(config);
//! ```

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::body::Bytes;
use axum::extract::{FromRef, FromRequest, Request};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;
use wm_types::events::Event;

use crate::{
    DEFAULT_TOLERANCE_SECS, InMemoryReplayGuard, ReplayGuard, Secret, VerifyError,
    verify_with_tolerance,
};

/// What the extractor checks against; put it in your state (or derive it with `FromRef`).
#[derive(Clone)]
pub struct WebhookConfig {
    secrets: Arc<Vec<Secret>>,
    tolerance_secs: u64,
    replay: Arc<dyn ReplayGuard>,
    now: fn() -> i64,
}

fn system_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default()
}

impl WebhookConfig {
    /// Accepts deliveries signed with any of `secrets` (list the new one first while
    /// rotating), with the 300 s tolerance and an in-memory replay guard.
    pub fn new<S: Into<String>>(secrets: impl IntoIterator<Item = S>) -> WebhookConfig {
        WebhookConfig {
            secrets: Arc::new(secrets.into_iter().map(|s| Secret::new(s)).collect()),
            tolerance_secs: DEFAULT_TOLERANCE_SECS,
            replay: Arc::new(InMemoryReplayGuard::default()),
            now: system_now,
        }
    }

    /// Another tolerance.
    pub fn tolerance_secs(mut self, secs: u64) -> Self {
        self.tolerance_secs = secs;
        self
    }

    /// Another replay guard (a shared store when several receivers run).
    pub fn replay_guard(mut self, guard: Arc<dyn ReplayGuard>) -> Self {
        self.replay = guard;
        self
    }

    /// Another clock (unix seconds), for tests.
    pub fn clock(mut self, now: fn() -> i64) -> Self {
        self.now = now;
        self
    }
}

impl std::fmt::Debug for WebhookConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookConfig")
            .field("secrets", &self.secrets)
            .field("tolerance_secs", &self.tolerance_secs)
            .finish_non_exhaustive()
    }
}

/// A verified, first-seen delivery.
#[derive(Debug, Clone)]
pub struct VerifiedEvent<T = serde_json::Value>(pub Event<T>);

/// Why a delivery was not handed to the handler.
#[derive(Debug, thiserror::Error)]
pub enum Rejection {
    /// Missing header or bad signature: 401 (the sender retries; an attacker learns nothing).
    #[error("signature: {0}")]
    Signature(VerifyError),
    /// Signed, but not an event of the expected shape: 400.
    #[error("body: {0}")]
    Body(String),
    /// Already processed: 200, so the sender stops retrying.
    #[error("duplicate delivery")]
    Duplicate,
}

impl IntoResponse for Rejection {
    fn into_response(self) -> Response {
        let status = match &self {
            Rejection::Signature(_) => StatusCode::UNAUTHORIZED,
            Rejection::Body(_) => StatusCode::BAD_REQUEST,
            Rejection::Duplicate => StatusCode::OK,
        };
        (status, self.to_string()).into_response()
    }
}

impl<S, T> FromRequest<S> for VerifiedEvent<T>
where
    S: Send + Sync,
    WebhookConfig: FromRef<S>,
    T: DeserializeOwned,
{
    type Rejection = Rejection;

    async fn from_request(req: Request, state: &S) -> Result<Self, Rejection> {
        let config = WebhookConfig::from_ref(state);
        let header = req
            .headers()
            .get("x-wm-signature")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
            .ok_or(Rejection::Signature(VerifyError::MalformedHeader))?;
        let delivery = req
            .headers()
            .get("x-wm-delivery")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let body = Bytes::from_request(req, state)
            .await
            .map_err(|e| Rejection::Body(e.to_string()))?;
        let now = (config.now)();
        let mut last = VerifyError::NoMatchingSignature;
        let mut ok = false;
        for secret in config.secrets.iter() {
            match verify_with_tolerance(secret.expose(), &header, &body, now, config.tolerance_secs)
            {
                Ok(()) => {
                    ok = true;
                    break;
                }
                Err(e) => last = e,
            }
        }
        if !ok {
            return Err(Rejection::Signature(last));
        }
        let event: Event<T> =
            serde_json::from_slice(&body).map_err(|e| Rejection::Body(e.to_string()))?;
        let id = event.id.to_string();
        if delivery.is_some_and(|d| d != id) {
            return Err(Rejection::Body(
                "X-WM-Delivery does not match the body id".into(),
            ));
        }
        // Remember ids a little longer than a signature stays valid.
        let expires = now.saturating_add(2 * config.tolerance_secs as i64);
        if !config.replay.first_time(&id, now, expires) {
            return Err(Rejection::Duplicate);
        }
        Ok(VerifiedEvent(event))
    }
}
