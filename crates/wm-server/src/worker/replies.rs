//! The reply sender: replies queued by `POST /conversations/{id}/messages` are sent as soon
//! as they are queued (woken) or come due after a retry, one task per replica; each reply is
//! claimed in the database, so replicas never send one twice.

use std::time::Duration;

use crate::services::replies::deliver;
use crate::state::AppState;

/// How often the sender looks when not woken (retries coming due, replicas' crashes).
const IDLE: Duration = Duration::from_millis(500);

/// Sends queued replies until cancelled.
pub async fn sender(state: AppState, cancel: tokio_util::sync::CancellationToken) {
    loop {
        loop {
            match deliver::run_once(&state).await {
                Ok(o) if o.sent + o.failed + o.retried == 0 => break,
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(error = %format!("{e:#}"), "replies not sent yet");
                    break;
                }
            }
        }
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = state.reply_wake.notified() => {}
            _ = tokio::time::sleep(IDLE) => {}
        }
    }
}
