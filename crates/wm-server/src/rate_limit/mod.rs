//! Per-key rate limiting: "more than N requests in any 60 s answer 429", exactly.
//!
//! One process on SQLite keeps each key's window in memory ([`local`]). On PostgreSQL,
//! where several replicas serve one key, the window lives in the database and replicas take
//! small grants of admissions from it with one atomic statement each ([`shared`]), so the
//! limit holds whatever the number of replicas.

pub mod decision;
pub mod local;
pub mod shared;

use sea_orm::DbBackend;
use uuid::Uuid;

use crate::db::Db;

pub use decision::{Decision, WINDOW_MS};

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
