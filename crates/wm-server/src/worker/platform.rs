//! The platform intake's applier: webhooks the intake kept are applied here, one task per
//! replica, so a burst of webhooks waits in the table rather than in the connection pool.

use crate::services::platform;
use crate::state::AppState;

/// Applies kept webhooks as they arrive, until cancelled: woken by the intake, and every
/// [`super::poll::POLL`] for what another replica's crash left. One task per replica,
/// so a burst of webhooks waits in the table rather than in the connection pool.
pub async fn applier(state: AppState, cancel: tokio_util::sync::CancellationToken) {
    loop {
        loop {
            match platform::apply_pending(&state).await {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(error = %format!("{e:#}"), "platform webhooks not applied yet");
                    break;
                }
            }
        }
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = state.intake_wake.notified() => {}
            _ = tokio::time::sleep(super::poll::POLL) => {}
        }
    }
}
