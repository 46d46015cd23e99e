//! The operator API under `/admin` (stands in for the dashboard), one module per resource.
//! Authenticated by the operator token ([`crate::auth::admin_auth`]). Not part of the public
//! contract, so plain axum routes, left out of the OpenAPI document.

use axum::Router;

use crate::state::AppState;

pub mod api_keys;
pub mod automations;
pub mod catalog;
pub mod channels;
pub mod conversations;
pub mod deals;
pub mod lifecycle_stages;
pub mod org;
pub mod organizations;
pub mod phone_numbers;
pub mod platform;
pub mod users;
pub mod webhooks;

/// Every operator route.
pub fn router() -> Router<AppState> {
    Router::new()
        .merge(organizations::router())
        .merge(users::router())
        .merge(api_keys::router())
        .merge(lifecycle_stages::router())
        .merge(channels::router())
        .merge(deals::router())
        .merge(automations::router())
        .merge(catalog::router())
        .merge(phone_numbers::router())
        .merge(conversations::router())
        .merge(platform::router())
        .merge(webhooks::router())
}
