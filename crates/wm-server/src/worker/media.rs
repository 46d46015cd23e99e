//! The media fetcher: inbound media files are fetched from the platform as they become due
//! (new ones at once, failed ones after their backoff), one task per replica.

use std::time::Duration;

use crate::services::media;
use crate::state::AppState;

/// How often the fetcher looks for due files when not woken.
const IDLE: Duration = Duration::from_secs(1);

/// Fetches due media until cancelled.
pub async fn fetcher(state: AppState, cancel: tokio_util::sync::CancellationToken) {
    loop {
        loop {
            match media::fetch_due(&state).await {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(error = %format!("{e:#}"), "inbound media not fetched yet");
                    break;
                }
            }
        }
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = state.media_wake.notified() => {}
            _ = tokio::time::sleep(IDLE) => {}
        }
    }
}
