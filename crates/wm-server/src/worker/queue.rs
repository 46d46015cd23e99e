//! Queues large reserved batches a step at a time (see
//! [`crate::services::sending::queueing`]), on a loop of its own, so a campaign pass busy
//! sending another campaign for minutes does not hold them up. The one consumer of that
//! queue: the campaign pass sends what it queued.

use tokio_util::sync::CancellationToken;

use crate::services::sending;
use crate::state::AppState;

/// How long [`run_once`] queues before it lets its caller go on.
const BUDGET: std::time::Duration = std::time::Duration::from_secs(1);

/// Queues steps of reserved batches, one transaction each, until none is open or a second
/// has passed; how many steps it queued. A step queued wakes the campaign pass.
pub async fn run_once(state: &AppState) -> Result<usize, sea_orm::DbErr> {
    let started = std::time::Instant::now();
    let step = state.settings.charge_step;
    let mut steps = 0;
    while sending::queue_step(&state.db, step, state.now_ms())
        .await?
        .is_some()
    {
        steps += 1;
        state.campaign_wake.notify_one();
        if started.elapsed() > BUDGET {
            break;
        }
    }
    Ok(steps)
}

/// Runs until `cancel` fires: steps whenever one is open, else a look every
/// [`super::poll::POLL`].
pub async fn queuer(state: AppState, cancel: CancellationToken) {
    loop {
        let idle = match run_once(&state).await {
            Ok(n) => n == 0,
            Err(e) => {
                tracing::warn!(error = %e, "a reserved batch's step not queued yet");
                true
            }
        };
        if cancel.is_cancelled() {
            return;
        }
        if idle {
            tokio::select! {
                _ = cancel.cancelled() => return,
                _ = tokio::time::sleep(super::poll::POLL) => {}
            }
        }
    }
}
