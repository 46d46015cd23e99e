//! The retry policy: which failures are repeated, and how long the client waits first.
//!
//! # What is retried
//!
//! | failure | GET, POST | PATCH, DELETE |
//! |---|---|---|
//! | 429 Too Many Requests | yes | yes (the rate limiter refuses before the handler runs) |
//! | 5xx | yes | **no** (the write may have happened) |
//! | error while connecting (refused, DNS, TLS handshake) | yes | yes (no byte was sent) |
//! | timeout, connection reset after sending | yes | **no** (the write may have happened) |
//! | 409 `IDEMPOTENCY_KEY_IN_USE` | POST: yes | — |
//! | any other 4xx, undecodable answer | no | no |
//!
//! Every POST carries an `Idempotency-Key` drawn once for it and sent again on each retry:
//! the server acts on it at most once and answers a retry with the first answer, so a POST
//! is retried like a read.
//!
//! # How long it waits
//!
//! Before retry `n` (0-based) the client sleeps a random duration in
//! `[0, min(backoff_cap, backoff_base × 2ⁿ)]` ("full jitter"). When a 429 or 503 carries
//! `Retry-After: <seconds>`, it sleeps exactly that long instead; if that is longer than
//! [`RetryPolicy::max_retry_after`] it does not retry and returns the error, whose
//! [`Error::retry_after`] tells the caller how long to wait.
//!
//! Defaults: 3 retries (4 attempts), base 200 ms, cap 5 s, `Retry-After` honoured up to 60 s.
//! Each attempt has its own timeout ([`crate::ClientBuilder::timeout`]).

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use rand::Rng;
use reqwest::Method;

use crate::Error;
use crate::error::ErrorCode;

/// When and how long to wait before repeating a failed request. Set through
/// [`crate::ClientBuilder`]; see the [module docs](self) for the rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (0 disables retries).
    pub max_retries: u32,
    /// The backoff ceiling of the first retry; it doubles with each retry.
    pub backoff_base: Duration,
    /// The largest backoff ceiling.
    pub backoff_cap: Duration,
    /// The longest `Retry-After` the client waits for; a longer one ends the retries.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 3,
            backoff_base: Duration::from_millis(200),
            backoff_cap: Duration::from_secs(5),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// The upper bound of the wait before retry `retry` (0-based):
    /// `min(backoff_cap, backoff_base × 2^retry)`.
    pub fn ceiling(&self, retry: u32) -> Duration {
        let factor = 1u32.checked_shl(retry).unwrap_or(u32::MAX);
        self.backoff_base
            .checked_mul(factor)
            .unwrap_or(self.backoff_cap)
            .min(self.backoff_cap)
    }

    /// A random wait in `[0, ceiling(retry)]` (full jitter).
    pub fn backoff(&self, retry: u32) -> Duration {
        let ceiling = u64::try_from(self.ceiling(retry).as_nanos()).unwrap_or(u64::MAX);
        Duration::from_nanos(rand::rng().random_range(0..=ceiling))
    }

    /// Whether a request with `method` that failed with `err` may be sent again (ignoring
    /// the retry budget).
    pub fn may_retry(method: &Method, err: &Error) -> bool {
        Self::may_retry_keyed(method, false, err)
    }

    /// [`Self::may_retry`] for a request that carries an `Idempotency-Key` (`keyed`): the
    /// server acts on it at most once, so it is retried like a read, and a 409
    /// `IDEMPOTENCY_KEY_IN_USE` (its first attempt still running) is waited out.
    pub fn may_retry_keyed(method: &Method, keyed: bool, err: &Error) -> bool {
        let idempotent = method.is_safe() || keyed;
        match err {
            Error::Api { status: 429, .. } => true,
            Error::Api {
                status: 409,
                code: Some(ErrorCode::IdempotencyKeyInUse),
                ..
            } => keyed,
            Error::Api { .. } => idempotent && err.is_retryable(),
            Error::Transport(e) if e.is_connect() => true,
            Error::Transport(_) => idempotent && err.is_retryable(),
            _ => false,
        }
    }

    /// How long to wait before retry `retries_done` (0-based) of a request with `method`
    /// that failed with `err`, or `None` when it must not be retried.
    pub fn delay(&self, method: &Method, err: &Error, retries_done: u32) -> Option<Duration> {
        self.delay_keyed(method, false, err, retries_done)
    }

    /// [`Self::delay`] for a request that carries an `Idempotency-Key` when `keyed`.
    pub fn delay_keyed(
        &self,
        method: &Method,
        keyed: bool,
        err: &Error,
        retries_done: u32,
    ) -> Option<Duration> {
        if retries_done >= self.max_retries || !Self::may_retry_keyed(method, keyed, err) {
            return None;
        }
        match err.retry_after() {
            Some(wait) if wait > self.max_retry_after => None,
            Some(wait) => Some(wait),
            None => Some(self.backoff(retries_done)),
        }
    }
}

/// Waits for a duration: `tokio::time::sleep` unless a test replaced it.
pub(crate) type Sleeper = Arc<dyn Fn(Duration) -> BoxFuture<'static, ()> + Send + Sync>;

/// The default sleeper.
pub(crate) fn tokio_sleeper() -> Sleeper {
    Arc::new(|d| Box::pin(tokio::time::sleep(d)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::StatusCode;
    use reqwest::header::{HeaderMap, HeaderValue, RETRY_AFTER};

    fn api(status: u16) -> Error {
        Error::from_body(status, br#"{"statusCode":0,"message":"m"}"#)
    }

    #[test]
    fn ceiling_doubles_and_caps() {
        let p = RetryPolicy::default();
        assert_eq!(p.ceiling(0), Duration::from_millis(200));
        assert_eq!(p.ceiling(1), Duration::from_millis(400));
        assert_eq!(p.ceiling(4), Duration::from_millis(3200));
        assert_eq!(p.ceiling(5), Duration::from_secs(5));
        assert_eq!(p.ceiling(200), Duration::from_secs(5));
        for n in 0..10 {
            assert!(p.backoff(n) <= p.ceiling(n));
        }
    }

    #[test]
    fn only_transient_failures_are_retried_and_writes_only_on_429() {
        let p = RetryPolicy::default();
        assert!(p.delay(&Method::GET, &api(500), 0).is_some());
        assert!(p.delay(&Method::GET, &api(503), 2).is_some());
        assert!(
            p.delay(&Method::GET, &api(503), 3).is_none(),
            "budget spent"
        );
        assert!(p.delay(&Method::GET, &api(429), 0).is_some());
        assert!(p.delay(&Method::POST, &api(429), 0).is_some());
        for m in [Method::POST, Method::PATCH, Method::DELETE] {
            assert!(p.delay(&m, &api(500), 0).is_none());
            assert!(p.delay(&m, &api(503), 0).is_none());
        }
        for s in [400, 401, 403, 404, 409, 422] {
            assert!(p.delay(&Method::GET, &api(s), 0).is_none(), "{s}");
        }
        let v = Error::from_body(400, br#"{"statusCode":400,"message":["x"],"error":"Bad"}"#);
        assert!(p.delay(&Method::GET, &v, 0).is_none());
        assert!(
            p.delay(&Method::GET, &Error::Decode("x".into()), 0)
                .is_none()
        );
    }

    #[test]
    fn retry_after_is_honoured_up_to_the_limit() {
        let p = RetryPolicy::default();
        let mut h = HeaderMap::new();
        h.insert(RETRY_AFTER, HeaderValue::from_static("2"));
        let e = Error::from_response(StatusCode::TOO_MANY_REQUESTS, &h, b"");
        assert_eq!(p.delay(&Method::POST, &e, 0), Some(Duration::from_secs(2)));
        h.insert(RETRY_AFTER, HeaderValue::from_static("61"));
        let e = Error::from_response(StatusCode::SERVICE_UNAVAILABLE, &h, b"");
        assert_eq!(p.delay(&Method::GET, &e, 0), None);
    }
}
