//! The API-key routes, one module per resource, each exporting `router()`.

use axum::Router;

use crate::state::AppState;

pub mod contacts;
pub mod lifecycle_stages;
pub mod users;
pub mod webhooks;

/// Every API-key route (mounted behind [`crate::auth::api_key_auth`]).
pub fn router() -> Router<AppState> {
    Router::new()
        .merge(contacts::router())
        .merge(lifecycle_stages::router())
        .merge(users::router())
        .merge(webhooks::router())
}
