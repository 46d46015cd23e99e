//! The rate limit shared by every replica on PostgreSQL.
//!
//! Each key has one row holding the instants of its admitted requests in the last 60 s
//! (at most N of them). One `INSERT … ON CONFLICT DO UPDATE` prunes the window, admits the
//! request when fewer than N remain and returns the figures for the headers: the row lock
//! taken by the upsert serialises a key's requests across processes, and the update reads
//! the row as the previous request left it, so the count is exact. The table is unlogged:
//! no WAL flush per request, and a crash only forgets the last minute.

use sea_orm::{ConnectionTrait, DbBackend, DbErr, Statement};
use uuid::Uuid;

use super::{Decision, WINDOW_MS};
use crate::db::Db;

/// The upsert deciding one request: `$1` key, `$2` now (ms), `$3` limit, `$4` window (ms).
const DECIDE: &str = r#"
INSERT INTO rate_limit_windows AS w (key_id, hits, admitted)
VALUES ($1, ARRAY[$2::bigint], true)
ON CONFLICT (key_id) DO UPDATE SET
    hits = ARRAY(SELECT h FROM unnest(w.hits) h WHERE h > $2 - $4 ORDER BY h)
        || CASE WHEN (SELECT count(*) FROM unnest(w.hits) h WHERE h > $2 - $4) < $3
                THEN ARRAY[$2::bigint] ELSE ARRAY[]::bigint[] END,
    admitted = (SELECT count(*) FROM unnest(w.hits) h WHERE h > $2 - $4) < $3
RETURNING admitted, cardinality(hits)::bigint AS used, hits[1] AS oldest
"#;

/// Forgets keys idle for a whole window: `$1` now (ms), `$2` window (ms).
const SWEEP: &str = r#"
DELETE FROM rate_limit_windows
WHERE coalesce(hits[cardinality(hits)], 0) <= $1 - $2
"#;

/// The PostgreSQL-backed limiter.
pub struct SharedLimiter {
    db: Db,
    limit: u32,
}

impl std::fmt::Debug for SharedLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedLimiter")
            .field("limit", &self.limit)
            .finish_non_exhaustive()
    }
}

impl SharedLimiter {
    /// A limiter admitting `limit` requests per key in any 60 s, across replicas.
    pub fn new(db: Db, limit: u32) -> Self {
        SharedLimiter {
            db,
            limit: limit.max(1),
        }
    }

    /// Decides on one request of `key` at `now_ms`.
    pub async fn check(&self, key: Uuid, now_ms: i64) -> Result<Decision, DbErr> {
        let row = self
            .db
            .conn
            .query_one_raw(Statement::from_sql_and_values(
                DbBackend::Postgres,
                DECIDE,
                [
                    key.into(),
                    now_ms.into(),
                    i64::from(self.limit).into(),
                    WINDOW_MS.into(),
                ],
            ))
            .await?
            .ok_or_else(|| DbErr::RecordNotFound("the rate-limit upsert returned no row".into()))?;
        let admitted: bool = row.try_get("", "admitted")?;
        let used: i64 = row.try_get("", "used")?;
        let oldest: Option<i64> = row.try_get("", "oldest")?;
        Ok(Decision::new(
            admitted,
            self.limit,
            u32::try_from(used).unwrap_or(u32::MAX),
            oldest,
            now_ms,
        ))
    }
}

/// Deletes the windows of keys idle for a minute (the webhook worker's hourly purge).
pub async fn sweep(conn: &impl ConnectionTrait, now_ms: i64) -> Result<u64, DbErr> {
    if conn.get_database_backend() != DbBackend::Postgres {
        return Ok(0);
    }
    let r = conn
        .execute_raw(Statement::from_sql_and_values(
            DbBackend::Postgres,
            SWEEP,
            [now_ms.into(), WINDOW_MS.into()],
        ))
        .await?;
    Ok(r.rows_affected())
}
