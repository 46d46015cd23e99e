//! Attempts whose outcome stayed unknown (a timeout, a connection lost after the request
//! went out, a crash between claim and answer) are never sent again: past the
//! reconciliation window (`WM_WHATSAPP_RECONCILE_AFTER`) with no status to settle them,
//! they fail as "outcome unknown" and are refunded — a campaign recipient and a message
//! alike.

use sea_orm::{ConnectionTrait, DbErr};

/// Why an attempt whose outcome stayed unknown fails.
pub use super::recipients::OUTCOME_UNKNOWN;

/// Fails up to a few hundred attempts of each store older than `window_ms`; how many.
pub async fn run(conn: &impl ConnectionTrait, now: i64, window_ms: i64) -> Result<usize, DbErr> {
    let mut failed = super::recipients::reconcile(conn, now, window_ms).await?;
    for m in super::messages::stale(conn, now.saturating_sub(window_ms), 500).await? {
        if super::failed::fail(conn, &m, OUTCOME_UNKNOWN, now).await? {
            failed += 1;
        }
    }
    Ok(failed)
}
