//! The in-process limiter (SQLite, one process): an exact sliding window per key.
//!
//! The rule is "more than N requests in any 60 s answer 429". A token bucket with burst N
//! admits about 2N in the first minute, so this keeps, per key, the instants of the requests
//! admitted in the last window (at most N of them) and admits a request only while fewer
//! than N fall inside it. Memory is bounded by N timestamps per active key; a key idle for a
//! whole window (wall time, which the system clock follows) leaves the [`crate::ttl`] map.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use uuid::Uuid;

use super::decision::{Decision, WINDOW_MS};
use crate::ttl::TtlMap;

/// Most keys tracked at once; past it the least recently seen are forgotten first.
const CAPACITY: u64 = 100_000;

/// The sliding-window log of every key.
pub struct RateLimiter {
    limit: u32,
    /// Each key's log; a key unused for a whole window has nothing left in it and goes.
    keys: TtlMap<Uuid, Arc<Mutex<VecDeque<i64>>>>,
}

impl std::fmt::Debug for RateLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimiter")
            .field("limit", &self.limit)
            .finish_non_exhaustive()
    }
}

impl RateLimiter {
    /// A limiter admitting `limit` requests per key in any 60 s.
    pub fn new(limit: u32) -> Self {
        let window = Duration::from_millis(WINDOW_MS.unsigned_abs());
        RateLimiter {
            limit: limit.max(1),
            keys: crate::ttl::idle(window, CAPACITY),
        }
    }

    /// Decides on one request of `key` at `now_ms`; admitted requests are recorded.
    pub fn check(&self, key: Uuid, now_ms: i64) -> Decision {
        let cell = self.keys.get_with(key, Arc::default);
        let mut log = cell.lock().unwrap_or_else(|p| p.into_inner());
        while log.front().is_some_and(|t| now_ms - t >= WINDOW_MS) {
            log.pop_front();
        }
        let allowed = (log.len() as u32) < self.limit;
        if allowed {
            log.push_back(now_ms);
        }
        Decision::new(
            allowed,
            self.limit,
            log.len() as u32,
            log.front().copied(),
            now_ms,
        )
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
