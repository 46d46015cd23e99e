//! The request log: one `info` line per request, in a span that every other line of the
//! request inherits, and `X-Request-Id` on every response.
//!
//! The span carries `request_id`, `method` and `route` (the matched route, never the raw
//! path, so ids in paths stay out of the fields that get indexed), then `org_id` and
//! `key_id` once the API-key middleware has authenticated the caller, `error_code` when a
//! business error answered, and `slow=true` past [`SLOW`]. The closing line adds `status`
//! and `duration_ms`. Keys, tokens, secrets and bodies are never recorded.

use std::time::{Duration, Instant};

use axum::extract::{MatchedPath, Request};
use axum::http::{Extensions, HeaderMap, HeaderValue, Method};
use axum::middleware::Next;
use axum::response::Response;
use tracing::field::Empty;
use uuid::Uuid;

use crate::error::LoggedError;
use crate::keys::AuthContext;

/// The request/response header of the request id.
pub const HEADER: &str = "x-request-id";
/// Requests slower than this are marked `slow=true`.
pub const SLOW: Duration = Duration::from_secs(1);
/// The route label of requests no route matched (the JSON 404), so that unknown paths do
/// not become label values.
pub const UNMATCHED: &str = "unmatched";

/// The id of a request: the caller's `X-Request-Id` when it is sane (1–64 characters of
/// `[A-Za-z0-9._-]`), otherwise a fresh UUID v7. Handlers find it in the request's
/// extensions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestId(HeaderValue);

impl RequestId {
    /// The caller's id when sane, else a new one.
    pub fn from_headers(headers: &HeaderMap) -> RequestId {
        headers
            .get(HEADER)
            .filter(|v| is_sane(v.as_bytes()))
            .map(|v| RequestId(v.clone()))
            .unwrap_or_else(Self::generate)
    }

    /// A new id (UUID v7: sortable by time).
    pub fn generate() -> RequestId {
        let text = Uuid::now_v7().hyphenated().to_string();
        // A hyphenated UUID is always a valid header value.
        RequestId(HeaderValue::from_str(&text).unwrap_or(HeaderValue::from_static("invalid")))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        // Only ever built from sane ASCII.
        self.0.to_str().unwrap_or_default()
    }
}

/// Whether a presented request id may be echoed and logged as is.
pub fn is_sane(id: &[u8]) -> bool {
    (1..=64).contains(&id.len())
        && id
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// The request's span, in the request's extensions so that the API-key middleware records
/// the caller on it directly ([`record_caller`]) instead of looking the current span up.
#[derive(Debug, Clone)]
pub struct RequestSpan(pub tracing::Span);

/// Records the authenticated caller in the request span (called by the API-key middleware
/// with the request's extensions; the current span when the request was not logged). Ids
/// only: never the key.
pub fn record_caller(extensions: &Extensions, ctx: &AuthContext) {
    let record = |span: &tracing::Span| {
        span.record("org_id", tracing::field::display(ctx.org_id));
        span.record("key_id", tracing::field::display(ctx.key_id));
    };
    match extensions.get::<RequestSpan>() {
        Some(RequestSpan(span)) => record(span),
        None => record(&tracing::Span::current()),
    }
}

/// Keeps the in-flight gauge right even when a request is cancelled (the client hung up).
struct InFlight;

impl InFlight {
    fn start() -> InFlight {
        super::metrics::in_flight(1.0);
        InFlight
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        super::metrics::in_flight(-1.0);
    }
}

/// The middleware (applied to every route and the fallback by [`super::wrap`]).
///
/// The span is entered on every poll of the inner service (as `Instrument` does, without
/// its extra span handle), so that any line logged while the request is handled carries the
/// request id; the closing line is logged in it once the answer is ready.
pub async fn middleware(mut req: Request, next: Next) -> Response {
    let started = Instant::now();
    let id = RequestId::from_headers(req.headers());
    let method = req.method().clone();
    // The matched route shares its text with the router (no copy per request).
    let matched = req.extensions().get::<MatchedPath>().cloned();
    let route = matched.as_ref().map_or(UNMATCHED, MatchedPath::as_str);
    let span = tracing::info_span!(
        "request",
        request_id = %id.as_str(),
        method = %method,
        route = %route,
        org_id = Empty,
        key_id = Empty,
        error_code = Empty,
        slow = Empty,
    );
    req.extensions_mut().insert(id.clone());
    req.extensions_mut().insert(RequestSpan(span.clone()));
    let guard = InFlight::start();
    let mut inner = std::pin::pin!(next.run(req));
    let mut response = std::future::poll_fn(|cx| {
        let _entered = span.enter();
        inner.as_mut().poll(cx)
    })
    .await;
    drop(guard);
    let elapsed = started.elapsed();
    let status = response.status();
    if let Some(LoggedError(code)) = response.extensions().get::<LoggedError>() {
        span.record("error_code", tracing::field::display(code));
    }
    if elapsed >= SLOW {
        span.record("slow", true);
    }
    let duration_ms = (elapsed.as_secs_f64() * 10_000.0).round() / 10.0;
    span.in_scope(|| tracing::info!(status = status.as_u16(), duration_ms, "request"));
    super::metrics::http_request(method_label(&method), route, status, elapsed);
    response.headers_mut().insert(HEADER, id.0);
    response
}

/// A bounded method label: the standard methods by name, anything else as `other`.
fn method_label(m: &Method) -> &'static str {
    match *m {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        _ => "other",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sane_ids_only() {
        assert!(is_sane(b"abc-123_x.y"));
        assert!(is_sane(&[b'a'; 64]));
        assert!(!is_sane(&[b'a'; 65]));
        assert!(!is_sane(b""));
        assert!(!is_sane(b"has space"));
        assert!(!is_sane(b"new\nline"));
        assert!(!is_sane("é".as_bytes()));
    }

    #[test]
    fn generated_ids_are_uuids() {
        let id = RequestId::generate();
        assert!(Uuid::parse_str(id.as_str()).is_ok());
        assert!(is_sane(id.as_str().as_bytes()));
    }
}
