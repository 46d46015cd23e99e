//! What every console handler is given.

use axum::Router;

use crate::state::AppState;

/// What every console handler holds: the server's state and the API router it calls.
#[derive(Clone)]
pub struct Console {
    /// The server's state (sessions are in its database).
    pub state: AppState,
    /// The API (relative to `/api/v1`), called in-process.
    pub api: Router,
}
