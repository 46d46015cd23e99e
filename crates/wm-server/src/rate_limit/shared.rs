//! The rate limit shared by every replica on PostgreSQL.
//!
//! Each key has one row holding the instants of its admissions in the last 60 s (at most N
//! of them). A replica does not ask for every request: it takes a small *grant* of
//! admissions with one `INSERT … ON CONFLICT DO UPDATE`, which prunes the window and, while
//! fewer than N remain, records the granted admissions at the instant the grant expires
//! ([`LONG_GRANT_MS`] from now while the window is less than half full, [`SHORT_GRANT_MS`]
//! nearer the limit). The replica then admits up to that many requests locally until the
//! grant expires. Every admission is thus in the shared window, stamped no
//! earlier than the request it admits, so no 60 s ever holds more than N requests of a key,
//! whatever the number of replicas. The row lock taken by the upsert serialises grants
//! across processes, and the update reads the row as the previous grant left it.
//!
//! Grants adapt: they start at one, double while a replica uses them up, and never exceed
//! a tenth of the limit nor a quarter of what is left in the window, so a key near its
//! limit gets single admissions (exact to the request). With its next grant a replica
//! gives back what it left of the previous one and re-stamps the admissions it used with
//! the instant of the last of them, so a burst leaves the window when a minute has passed
//! since the burst, not since its grant's expiry; only a replica that stops seeing a key
//! keeps its last grant counted as stamped, for the rest of the minute. The table is unlogged: no WAL flush per grant, and a crash
//! only forgets the last minute.

use std::sync::Arc;

use sea_orm::{ConnectionTrait, DbBackend, DbErr, Statement};
use uuid::Uuid;

use super::decision::{Decision, WINDOW_MS};
use crate::db::Db;
use crate::ttl::TtlMap;

/// Most keys with a grant at once; past it the least recently used are forgotten first.
const GRANTS_CAPACITY: u64 = 100_000;

/// How long a grant may be used while its key's window is less than half full; its
/// admissions are stamped with its expiry. Long grants keep PostgreSQL out of most
/// requests (a key at 10 req/s asks once per 5 s, not every second); the price is a
/// `Retry-After` of up to 65 s and a leftover counted a little longer.
pub const LONG_GRANT_MS: i64 = 5_000;

/// How long a grant may be used nearer the limit: an admission's stamp is then at most a
/// second after the request, so a key kept at its limit still gets N per ~61 s.
pub const SHORT_GRANT_MS: i64 = 1_000;

/// The upsert taking one grant: `$1` key, `$2` now (ms), `$3` limit, `$4` window (ms),
/// `$5` the grant's expiry (ms), `$6` the admissions wanted, and this replica's previous
/// grant, stamped `$7`: its `$8` unused admissions are given back and its `$10` used ones
/// are re-stamped with the instant of the last of them, `$9` (still no earlier than any
/// request they admitted, and usually well before the grant's expiry). The window stays
/// sorted, so `hits[1]` is its oldest entry and the last its newest.
const GRANT: &str = r#"
WITH wanted AS (SELECT least($6::int, $3::int) AS n)
INSERT INTO rate_limit_windows AS w (key_id, hits, granted)
SELECT $1, array_fill($5::bigint, ARRAY[n]), n FROM wanted
ON CONFLICT (key_id) DO UPDATE SET (hits, granted) = (
    SELECT ARRAY(SELECT x FROM unnest(kept || array_fill($5::bigint, ARRAY[g])) x ORDER BY x), g
    FROM (
        SELECT kept, greatest(0, least($6::int, greatest(($3 - c) / 4, 1), $3 - c))::int AS g
        FROM (
            SELECT coalesce(array_agg(v), '{}') AS kept, count(*)::int AS c
            FROM (
                SELECT CASE WHEN h = $7 AND rn <= $8 + $10 THEN $9::bigint ELSE h END AS v,
                    h, rn
                FROM (
                    SELECT h, row_number() OVER (PARTITION BY h) AS rn FROM unnest(w.hits) h
                ) numbered
            ) restamped
            WHERE v > $2 - $4 AND NOT (h = $7 AND rn <= $8)
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
    /// When its last admission was made (ms).
    last: i64,
    /// The window's count and oldest entry when it was taken.
    used: u32,
    oldest: Option<i64>,
}

/// The PostgreSQL-backed limiter.
pub struct SharedLimiter {
    db: Db,
    limit: u32,
    /// Each key's grant; a key's requests wait for one another only while a grant is
    /// taken, so two never take (and then waste) one each. A grant unused for a window
    /// is spent and goes.
    grants: TtlMap<Uuid, Arc<tokio::sync::Mutex<Grant>>>,
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
            grants: crate::ttl::idle(
                std::time::Duration::from_millis(WINDOW_MS.unsigned_abs()),
                GRANTS_CAPACITY,
            ),
        }
    }

    /// Decides on one request of `key` at `now_ms`.
    pub async fn check(&self, key: Uuid, now_ms: i64) -> Result<Decision, DbErr> {
        let cell = self.grants.get_with(key, Arc::default);
        let mut g = cell.lock().await;
        if g.left > 0 && now_ms <= g.until {
            g.left -= 1;
            g.last = now_ms;
            return Ok(self.decision(true, &g, now_ms));
        }
        // Used up in time: twice as many next time; expired: as many as were used.
        let next = if g.left == 0 && g.size > 0 {
            g.size.saturating_mul(2)
        } else {
            g.size - g.left
        };
        let wanted = next.clamp(1, (self.limit / 10).max(1));
        // The window as of this replica's last grant tells how far the key is from its limit.
        let until = now_ms
            + if u64::from(g.used) + u64::from(wanted) <= u64::from(self.limit / 2) {
                LONG_GRANT_MS
            } else {
                SHORT_GRANT_MS
            };
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
                    until.into(),
                    i64::from(wanted).into(),
                    // What is left of the expired grant goes back into the window.
                    g.until.into(),
                    i64::from(g.left).into(),
                    g.last.into(),
                    i64::from(g.size - g.left).into(),
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
            until,
            size,
            last: now_ms,
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
