//! Queues large charged batches a step at a time (see [`crate::services::charges`]) on a
//! loop of its own, so a campaign pass busy sending another campaign for minutes does not
//! hold them up. The campaign pass queues too (tests drive it alone); the two take turns on
//! a campaign under its row lock (PostgreSQL) or the writer (SQLite).

use tokio_util::sync::CancellationToken;

use crate::services::charges;
use crate::state::AppState;

/// Runs until `cancel` fires: a step whenever one is open, else a look every
/// [`super::POLL`].
pub async fn queuer(state: AppState, cancel: CancellationToken) {
    loop {
        let step = state.settings.charge_step;
        let idle = match charges::queue_step(&state.db, step, state.now_ms()).await {
            Ok(Some(_)) => {
                state.campaign_wake.notify_one();
                false
            }
            Ok(None) => true,
            Err(e) => {
                tracing::warn!(error = %e, "a charged batch's step not queued yet");
                true
            }
        };
        if cancel.is_cancelled() {
            return;
        }
        if idle {
            tokio::select! {
                _ = cancel.cancelled() => return,
                _ = tokio::time::sleep(super::POLL) => {}
            }
        }
    }
}
