//! What a limiter decides, whichever keeps the window.

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

impl Decision {
    /// The decision given the window after it: `used` requests in it, the oldest at
    /// `oldest` (ms).
    pub fn new(allowed: bool, limit: u32, used: u32, oldest: Option<i64>, now_ms: i64) -> Self {
        let reset_ms = oldest.map_or(0, |t| t + WINDOW_MS - now_ms);
        Decision {
            allowed,
            limit,
            remaining: limit.saturating_sub(used),
            reset_secs: (reset_ms.max(0) as u64).div_ceil(1000),
        }
    }
}
