//! The API-key routes, one module per resource, each exporting `router()`: an aide
//! [`ApiRouter`] whose routes also make the OpenAPI document ([`crate::openapi`]).

use aide::axum::ApiRouter;

use crate::state::AppState;

pub mod automations;
pub mod campaigns;
pub mod contacts;
pub mod conversations;
pub mod imports;
pub mod lifecycle_stages;
pub mod media;
pub mod phone_numbers;
pub mod platform;
pub mod reports;
pub mod templates;
pub mod users;
pub mod wallet;
pub mod webhooks;

/// The OpenAPI document of these routes (`GET /api/v1/openapi.json` serves it).
pub fn document() -> serde_json::Value {
    crate::openapi::document(router)
}

/// Every API-key route (mounted behind [`crate::auth::api_key_auth`]), documented. Generic
/// wire types carry their item's name in the document (`ContactPage`, `TemplateList`), so
/// the order here changes no schema's name.
pub fn router() -> ApiRouter<AppState> {
    ApiRouter::new()
        .merge(imports::router())
        .merge(contacts::router())
        .merge(lifecycle_stages::router())
        .merge(users::router())
        .merge(templates::router())
        .merge(phone_numbers::router())
        .merge(wallet::router())
        .merge(conversations::router())
        .merge(automations::router())
        .merge(campaigns::router())
        .merge(reports::router())
        .merge(webhooks::router())
        .merge(media::router())
}
