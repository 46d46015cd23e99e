//! Typed errors: the spec's business codes (tolerant of codes added later), the validation
//! messages, and what the retry policy needs to know (`Retry-After`, transient or not).
//!
//! A rate-limited call (429) stays an [`Error::Api`] with `status: 429` and, when the server
//! sent one, its `Retry-After` in the variant's `retry_after` field (also [`Error::retry_after`]):
//! callers that match on `Api { status, .. }` keep working, and the business code
//! (`API_KEY_RATE_LIMITED`) and body stay available.

use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{HeaderMap, RETRY_AFTER};
use wm_types::common::{BusinessErrorBody, ValidationErrorBody};
/// A stable error code of API v1, shared with the server (`wm_types::enums::ErrorCode`);
/// codes added later arrive as `ErrorCode::Unknown`, their spelling still in the error's body.
pub use wm_types::enums::ErrorCode;

/// What can go wrong with a call.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// 400 with one message per failed constraint (never retried).
    #[error("validation failed: {}", messages.join("; "))]
    Validation {
        /// The messages.
        messages: Vec<String>,
    },
    /// Any other error answer, including 429 (rate limited) and 5xx.
    #[error("{status}: {message}")]
    Api {
        /// HTTP status.
        status: u16,
        /// Stable code, when the API gives one.
        code: Option<ErrorCode>,
        /// For a person.
        message: String,
        /// The whole body (extra fields such as `contactId`); `Null` when it was not JSON.
        /// Boxed to keep every `Result<_, Error>` small.
        body: Box<serde_json::Value>,
        /// The `Retry-After` header (in seconds) of a 429 or 503, when the server sent one.
        retry_after: Option<Duration>,
    },
    /// The request did not complete: connection refused or reset, timeout, TLS failure.
    #[error("transport: {0}")]
    Transport(#[source] reqwest::Error),
    /// The answer was not what the API documents.
    #[error("unexpected response: {0}")]
    Decode(String),
    /// The client or a request could not be built (bad base URL, API key or body).
    #[error("client configuration: {0}")]
    Config(String),
}

impl Error {
    /// Builds the error of a non-2xx answer from its status, headers and body.
    pub(crate) fn from_response(status: StatusCode, headers: &HeaderMap, bytes: &[u8]) -> Error {
        let mut e = Error::from_body(status.as_u16(), bytes);
        if let Error::Api { retry_after, .. } = &mut e
            && (status == StatusCode::TOO_MANY_REQUESTS
                || status == StatusCode::SERVICE_UNAVAILABLE)
        {
            *retry_after = parse_retry_after(headers);
        }
        e
    }

    /// Builds the error of a non-2xx answer from its status and body.
    pub(crate) fn from_body(status: u16, bytes: &[u8]) -> Error {
        if status == 400
            && let Ok(v) = serde_json::from_slice::<ValidationErrorBody>(bytes)
        {
            return Error::Validation {
                messages: v.message,
            };
        }
        let body: serde_json::Value =
            serde_json::from_slice(bytes).unwrap_or(serde_json::Value::Null);
        match serde_json::from_value::<BusinessErrorBody>(body.clone()) {
            Ok(b) => Error::Api {
                status,
                code: b.code,
                message: b.message,
                body: Box::new(body),
                retry_after: None,
            },
            Err(_) => Error::Api {
                status,
                code: None,
                message: String::from_utf8_lossy(bytes).into_owned(),
                body: Box::new(body),
                retry_after: None,
            },
        }
    }

    /// The business code, if any.
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            Error::Api { code, .. } => *code,
            _ => None,
        }
    }

    /// The HTTP status of an error answer (400 for [`Error::Validation`]).
    pub fn status(&self) -> Option<u16> {
        match self {
            Error::Validation { .. } => Some(400),
            Error::Api { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// How long the server asked to wait (`Retry-After` of a 429 or 503).
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Error::Api { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// Whether the failure is transient: 429, any 5xx, a timeout or a connection error.
    ///
    /// This says nothing about whether *repeating the request* is safe: the client retries
    /// GET requests on every transient error, but other methods only on 429 and on errors
    /// while connecting (see [`crate::retry`]).
    pub fn is_retryable(&self) -> bool {
        match self {
            Error::Api { status, .. } => *status == 429 || (500..600).contains(status),
            Error::Transport(e) => is_transient_transport(e),
            _ => false,
        }
    }

    /// Whether this is a transport error raised while connecting, so no byte of the request
    /// reached the server.
    pub fn is_connect(&self) -> bool {
        matches!(self, Error::Transport(e) if e.is_connect())
    }

    /// Whether this is a transport timeout.
    pub fn is_timeout(&self) -> bool {
        matches!(self, Error::Transport(e) if e.is_timeout())
    }
}

/// Timeouts, connection failures and I/O failures while sending or reading.
fn is_transient_transport(e: &reqwest::Error) -> bool {
    e.is_timeout() || e.is_connect() || e.is_request() || e.is_body()
}

/// `Retry-After` in delta-seconds (the form the wm server sends); an HTTP date or garbage
/// is ignored (the backoff applies instead).
fn parse_retry_after(headers: &HeaderMap) -> Option<Duration> {
    let v = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    v.parse::<u64>().ok().map(Duration::from_secs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn bodies_become_typed_errors() {
        let e = Error::from_body(
            409,
            br#"{"statusCode":409,"code":"CONTACT_PHONE_EXISTS","message":"x","contactId":"a"}"#,
        );
        assert_eq!(e.code(), Some(ErrorCode::ContactPhoneExists));
        assert!(!e.is_retryable());
        let e = Error::from_body(
            400,
            br#"{"statusCode":400,"message":["a","b"],"error":"Bad Request"}"#,
        );
        assert!(matches!(e, Error::Validation { ref messages } if messages.len() == 2));
        let e = Error::from_body(418, br#"{"statusCode":418,"code":"TEAPOT","message":"t"}"#);
        assert_eq!(e.code(), Some(ErrorCode::Unknown));
        assert!(matches!(e, Error::Api { ref body, .. } if body["code"] == "TEAPOT"));
        let e = Error::from_body(502, b"<html>bad gateway</html>");
        assert!(
            matches!(e, Error::Api { status: 502, code: None, ref message, ref body, .. } if message.contains("bad gateway") && body.is_null())
        );
        assert!(e.is_retryable());
    }

    #[test]
    fn retry_after_is_read_on_429_and_503_only() {
        let mut h = HeaderMap::new();
        h.insert(RETRY_AFTER, HeaderValue::from_static("7"));
        let body = br#"{"statusCode":429,"code":"API_KEY_RATE_LIMITED","message":"slow"}"#;
        let e = Error::from_response(StatusCode::TOO_MANY_REQUESTS, &h, body);
        assert_eq!(e.retry_after(), Some(Duration::from_secs(7)));
        assert_eq!(e.code(), Some(ErrorCode::ApiKeyRateLimited));
        assert!(e.is_retryable());
        let e = Error::from_response(StatusCode::SERVICE_UNAVAILABLE, &h, b"");
        assert_eq!(e.retry_after(), Some(Duration::from_secs(7)));
        let e = Error::from_response(StatusCode::INTERNAL_SERVER_ERROR, &h, b"");
        assert_eq!(e.retry_after(), None);
        h.insert(
            RETRY_AFTER,
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        let e = Error::from_response(StatusCode::TOO_MANY_REQUESTS, &h, b"");
        assert_eq!(e.retry_after(), None);
    }
}
