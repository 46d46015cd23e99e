//! The API-key routes, one module per resource, each exporting `router()`.

use axum::Router;

use crate::state::AppState;

pub mod automations;
pub mod campaigns;
pub mod contacts;
pub mod conversations;
pub mod imports;
pub mod lifecycle_stages;
pub mod phone_numbers;
pub mod platform_whatsapp;
pub mod reports;
pub mod templates;
pub mod users;
pub mod wallet;
pub mod webhooks;

/// Every API-key route (mounted behind [`crate::auth::api_key_auth`]).
pub fn router() -> Router<AppState> {
    Router::new()
        .merge(automations::router())
        .merge(campaigns::router())
        .merge(contacts::router())
        .merge(conversations::router())
        .merge(imports::router())
        .merge(phone_numbers::router())
        .merge(reports::router())
        .merge(templates::router())
        .merge(wallet::router())
        .merge(lifecycle_stages::router())
        .merge(users::router())
        .merge(webhooks::router())
}
