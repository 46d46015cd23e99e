//! Folds PostgreSQL's contact count deltas into the counts (see `db::contacts::counts`), so
//! a reader adds up a handful of deltas, not a day's worth; and drops counts back at zero.
//! Nothing to do on SQLite, whose triggers write the counts directly.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::db::contacts::counts;
use crate::state::AppState;

/// How often deltas are folded.
pub const FOLD_EVERY: Duration = Duration::from_secs(1);
/// How often counts at zero are dropped.
const PRUNE_EVERY: u32 = 600;

/// Runs until `cancel` fires. Any replica may fold; they take turns under an advisory lock.
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
        if let Err(e) = counts::fold(&state.db.conn).await {
            tracing::warn!(error = %e, "contact count deltas not folded yet");
            continue;
        }
        folds = folds.wrapping_add(1);
        if folds.is_multiple_of(PRUNE_EVERY)
            && let Err(e) = counts::prune(&state.db.conn).await
        {
            tracing::warn!(error = %e, "contact counts at zero not dropped");
        }
    }
}
