//! Per-key rate limiting: "more than N requests in any 60 s answer 429", exactly.
//!
//! One process on SQLite keeps each key's window in memory ([`local`]). On PostgreSQL,
//! where several replicas serve one key, the window lives in the database and replicas take
//! small grants of admissions from it with one atomic statement each ([`shared`]), so the
//! limit holds whatever the number of replicas.

pub mod local;
pub mod shared;

use sea_orm::DbBackend;
use uuid::Uuid;

use crate::db::Db;

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

/// The server's limiter: in memory on SQLite, in the database on PostgreSQL.
#[derive(Debug)]
pub enum Limiter {
    /// One process's windows.
    Local(local::RateLimiter),
    /// Windows shared by every replica.
    Shared(shared::SharedLimiter),
}

impl Limiter {
    /// The limiter that fits the database: `limit` requests per key in any 60 s.
    pub fn for_db(db: &Db, limit: u32) -> Limiter {
        match db.backend() {
            DbBackend::Postgres => Limiter::Shared(shared::SharedLimiter::new(db.clone(), limit)),
            _ => Limiter::Local(local::RateLimiter::new(limit)),
        }
    }

    /// Decides on one request of `key` at `now_ms`; admitted requests are recorded.
    pub async fn check(&self, key: Uuid, now_ms: i64) -> Result<Decision, sea_orm::DbErr> {
        match self {
            Limiter::Local(l) => Ok(l.check(key, now_ms)),
            Limiter::Shared(s) => s.check(key, now_ms).await,
        }
    }
}
