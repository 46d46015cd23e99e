//! The rate limit shared by every replica on PostgreSQL.
//!
//! Each key has one row holding the instants of its admissions in the last 60 s (at most N
//! of them). A replica does not ask for every request: it takes a small *grant* of
//! admissions with one `INSERT … ON CONFLICT DO UPDATE`, which prunes the window and, while
//! fewer than N remain, records the granted admissions at the instant the grant expires
//! ([`GRANT_MS`] from now). The replica then admits up to that many requests locally
//! until the grant expires. Every admission is thus in the shared window, stamped no
//! earlier than the request it admits, so no 60 s ever holds more than N requests of a key,
//! whatever the number of replicas. The row lock taken by the upsert serialises grants
//! across processes, and the update reads the row as the previous grant left it.
//!
//! Grants adapt: they start at one, double while a replica uses them up, and never exceed
//! a tenth of the limit nor a quarter of what is left in the window, so a key near its
//! limit gets single admissions (exact to the request). What a replica leaves of a grant
//! goes back into the window with its next one; only a replica that stops seeing a key
//! keeps its leftover counted, for the rest of the minute. The table is unlogged: no WAL flush per grant, and a crash
//! only forgets the last minute.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use sea_orm::{ConnectionTrait, DbBackend, DbErr, Statement};
use uuid::Uuid;

use super::{Decision, WINDOW_MS};
use crate::db::Db;

/// How long a grant may be used; its admissions are stamped with its expiry.
pub const GRANT_MS: i64 = 1_000;

/// The upsert taking one grant: `$1` key, `$2` now (ms), `$3` limit, `$4` window (ms),
/// `$5` the grant's expiry (ms), `$6` the admissions wanted, and the admissions this
/// replica gives back from its previous grant: `$8` of those stamped `$7`.
const GRANT: &str = r#"
WITH wanted AS (SELECT least($6::int, $3::int) AS n)
INSERT INTO rate_limit_windows AS w (key_id, hits, granted)
SELECT $1, array_fill($5::bigint, ARRAY[n]), n FROM wanted
ON CONFLICT (key_id) DO UPDATE SET (hits, granted) = (
    SELECT kept || array_fill($5::bigint, ARRAY[g]), g
    FROM (
        SELECT kept, greatest(0, least($6::int, greatest(($3 - c) / 4, 1), $3 - c))::int AS g
        FROM (
            SELECT coalesce(array_agg(h ORDER BY h), '{}') AS kept, count(*)::int AS c
            FROM (
                SELECT h, row_number() OVER (PARTITION BY h) AS rn FROM unnest(w.hits) h
            ) numbered
            WHERE h > $2 - $4 AND NOT (h = $7 AND rn <= $8)
        ) pruned
    ) sized
)
RETURNING granted, cardinality(hits)::bigint AS used, hits[1] AS oldest
"#;

/// Forgets keys idle for a whole window: `$1` now (ms), `$2` window (ms).
const SWEEP: &str = r#"
DELETE FROM rate_limit_windows
WHERE coalesce(hits[cardinality(hits)], 0) <= $1 - $2
"#;

/// This replica's grant for one key.
#[derive(Debug, Clone, Copy, Default)]
struct Grant {
    /// Admissions left.
    left: u32,
    /// Usable until then (ms).
    until: i64,
    /// The size of the grant.
    size: u32,
    /// The window's count and oldest entry when it was taken.
    used: u32,
    oldest: Option<i64>,
}

/// The PostgreSQL-backed limiter.
pub struct SharedLimiter {
    db: Db,
    limit: u32,
    /// Each key's grant; a key's requests wait for one another only while a grant is
    /// taken, so two never take (and then waste) one each.
    grants: Mutex<HashMap<Uuid, Arc<tokio::sync::Mutex<Grant>>>>,
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
            grants: Mutex::default(),
        }
    }

    /// Decides on one request of `key` at `now_ms`.
    pub async fn check(&self, key: Uuid, now_ms: i64) -> Result<Decision, DbErr> {
        let cell = {
            let mut grants = self.grants.lock().unwrap_or_else(|p| p.into_inner());
            if grants.len() > 4 * 1024 {
                grants.retain(|_, g| g.try_lock().map_or(true, |g| g.until >= now_ms - WINDOW_MS));
            }
            grants.entry(key).or_default().clone()
        };
        let mut g = cell.lock().await;
        if g.left > 0 && now_ms <= g.until {
            g.left -= 1;
            return Ok(self.decision(true, &g, now_ms));
        }
        // Used up in time: twice as many next time; expired: as many as were used.
        let next = if g.left == 0 && g.size > 0 {
            g.size.saturating_mul(2)
        } else {
            g.size - g.left
        };
        let wanted = next.clamp(1, (self.limit / 10).max(1));
        let row = self
            .db
            .conn
            .query_one_raw(Statement::from_sql_and_values(
                DbBackend::Postgres,
                GRANT,
                [
                    key.into(),
                    now_ms.into(),
                    i64::from(self.limit).into(),
                    WINDOW_MS.into(),
                    (now_ms + GRANT_MS).into(),
                    i64::from(wanted).into(),
                    // What is left of the expired grant goes back into the window.
                    g.until.into(),
                    i64::from(g.left).into(),
                ],
            ))
            .await?
            .ok_or_else(|| DbErr::RecordNotFound("the rate-limit upsert returned no row".into()))?;
        let granted: i32 = row.try_get("", "granted")?;
        let used: i64 = row.try_get("", "used")?;
        let oldest: Option<i64> = row.try_get("", "oldest")?;
        let size = u32::try_from(granted).unwrap_or(0);
        *g = Grant {
            left: size,
            until: now_ms + GRANT_MS,
            size,
            used: u32::try_from(used).unwrap_or(u32::MAX),
            oldest,
        };
        let admitted = g.left > 0;
        if admitted {
            g.left -= 1;
        }
        Ok(self.decision(admitted, &g, now_ms))
    }

    /// The headers' figures: the window as of the grant, less what this replica has not
    /// used of it yet.
    fn decision(&self, admitted: bool, g: &Grant, now_ms: i64) -> Decision {
        let used = g.used.saturating_sub(g.left);
        Decision::new(admitted, self.limit, used, g.oldest, now_ms)
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
