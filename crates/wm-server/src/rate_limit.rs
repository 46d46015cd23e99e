//! Per-key rate limiting with an exact sliding window.
//!
//! The rule is "more than N requests in any 60 s answer 429". A token bucket with burst N
//! admits about 2N in the first minute, so this keeps, per key, the instants of the requests
//! admitted in the last window (at most N of them) and admits a request only while fewer
//! than N fall inside it. Memory is bounded by N timestamps per active key; idle keys are
//! swept. The window is per process: replicas behind a load balancer each apply it.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use uuid::Uuid;

/// Length of the window.
pub const WINDOW_MS: i64 = 60_000;

/// What the limiter decided, with the figures for the `RateLimit-*` headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    /// Whether the request is admitted.
    pub allowed: bool,
    /// The limit.
    pub limit: u32,
    /// Requests left in the current window after this one.
    pub remaining: u32,
    /// Seconds until a slot frees up (the `RateLimit-Reset` and `Retry-After` value).
    pub reset_secs: u64,
}

/// The sliding-window log of every key.
#[derive(Debug)]
pub struct RateLimiter {
    limit: u32,
    keys: Mutex<HashMap<Uuid, VecDeque<i64>>>,
}

impl RateLimiter {
    /// A limiter admitting `limit` requests per key in any 60 s.
    pub fn new(limit: u32) -> Self {
        RateLimiter {
            limit: limit.max(1),
            keys: Mutex::new(HashMap::new()),
        }
    }

    /// Decides on one request of `key` at `now_ms`; admitted requests are recorded.
    pub fn check(&self, key: Uuid, now_ms: i64) -> Decision {
        let mut keys = self.keys.lock().unwrap_or_else(|p| p.into_inner());
        if keys.len() > 10_000 {
            keys.retain(|_, log| log.back().is_some_and(|t| now_ms - t < WINDOW_MS));
        }
        let log = keys.entry(key).or_default();
        while log.front().is_some_and(|t| now_ms - t >= WINDOW_MS) {
            log.pop_front();
        }
        let allowed = (log.len() as u32) < self.limit;
        if allowed {
            log.push_back(now_ms);
        }
        let reset_ms = log.front().map_or(0, |oldest| oldest + WINDOW_MS - now_ms);
        Decision {
            allowed,
            limit: self.limit,
            remaining: self.limit - log.len() as u32,
            reset_secs: (reset_ms.max(0) as u64).div_ceil(1000),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admits_exactly_the_limit_in_any_window() {
        let rl = RateLimiter::new(600);
        let key = Uuid::now_v7();
        // 600 spread over the first 30 s are admitted, the 601st is not.
        for i in 0..600 {
            assert!(rl.check(key, i * 50).allowed, "request {i}");
        }
        let d = rl.check(key, 30_000);
        assert!(!d.allowed);
        assert_eq!(d.remaining, 0);
        assert_eq!(d.reset_secs, 30);
        // Just before the first request leaves the window: still refused.
        assert!(!rl.check(key, 59_999).allowed);
        // One slot frees as each old request ages out; never more than 600 in 60 s.
        assert!(rl.check(key, 60_000).allowed);
        assert!(!rl.check(key, 60_001).allowed);
        assert!(rl.check(key, 60_050).allowed);
    }

    #[test]
    fn a_token_bucket_burst_is_not_admitted_twice() {
        let rl = RateLimiter::new(600);
        let key = Uuid::now_v7();
        let admitted = (0..1200).filter(|i| rl.check(key, i * 40).allowed).count();
        assert_eq!(admitted, 600, "48 s of traffic may admit only 600");
    }

    #[test]
    fn keys_are_independent() {
        let rl = RateLimiter::new(1);
        assert!(rl.check(Uuid::now_v7(), 0).allowed);
        assert!(rl.check(Uuid::now_v7(), 0).allowed);
    }
}
