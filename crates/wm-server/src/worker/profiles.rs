//! The profile reader: people's names and usernames read from the platforms that share
//! them, as they become due (one task per replica; an identity is claimed by one).

use std::time::Duration;

use crate::services::profiles;
use crate::state::AppState;

/// How often the reader looks for due profiles.
const IDLE: Duration = Duration::from_millis(500);

/// Reads due profiles until cancelled.
pub async fn reader(state: AppState, cancel: tokio_util::sync::CancellationToken) {
    loop {
        loop {
            match profiles::read_due(&state).await {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(error = %format!("{e:#}"), "profiles not read yet");
                    break;
                }
            }
        }
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = tokio::time::sleep(IDLE) => {}
        }
    }
}
