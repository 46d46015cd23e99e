//! Folds PostgreSQL's count deltas into their counts (contacts: `db::contacts::counts`;
//! campaigns, conversations and automation logs: `db::tallies`), so a reader adds up a
//! handful of deltas, not a day's worth; and drops counts back at zero. Nothing to do on
//! SQLite, whose triggers write the counts directly.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::db::{contacts::counts, tallies};
use crate::state::AppState;

/// How often deltas are folded.
pub const FOLD_EVERY: Duration = Duration::from_secs(1);
/// How often counts at zero are dropped.
const PRUNE_EVERY: u32 = 600;

/// Runs until `cancel` fires. Any replica may fold; they take turns under advisory locks.
pub async fn folder(state: AppState, cancel: CancellationToken) {
    if state.db.backend() != sea_orm::DbBackend::Postgres {
        return;
    }
    let mut folds: u32 = 0;
    loop {
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = tokio::time::sleep(FOLD_EVERY) => {}
        }
        let conn = &state.db.conn;
        let (contacts, others) = tokio::join!(counts::fold(conn), tallies::fold(conn));
        for (e, what) in [(contacts.err(), "contact count"), (others.err(), "tally")] {
            if let Some(e) = e {
                tracing::warn!(error = %e, "{what} deltas not folded yet");
            }
        }
        folds = folds.wrapping_add(1);
        if folds.is_multiple_of(PRUNE_EVERY) {
            let (contacts, others) = tokio::join!(counts::prune(conn), tallies::prune(conn));
            for (e, what) in [
                (contacts.err(), "contact counts"),
                (others.err(), "tallies"),
            ] {
                if let Some(e) = e {
                    tracing::warn!(error = %e, "{what} at zero not dropped");
                }
            }
        }
    }
}
