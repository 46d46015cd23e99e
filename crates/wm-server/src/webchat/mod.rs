//! The website chat's public side: the widget script (`/widget/{websiteToken}.js`, served
//! from the binary) and the API its visitors' browsers call (`/webchat/v1/{websiteToken}/…`,
//! no API key: a visitor token). Every answer carries CORS headers for the page that asked;
//! only the chat's allowed sites get anything but a refusal. The contract is
//! `wm_types::webchat`'s; the README lists the routes.

pub mod api;
pub mod stream;
pub mod visit;
pub mod widget;

use axum::routing::{get, post};
use axum::{Router, middleware};

use crate::state::AppState;

/// The widget's routes (mounted at the root, beside `/api/v1` and `/console`).
pub fn router(state: AppState) -> Router {
    let api = Router::new()
        .route("/webchat/v1/{site}/config", get(api::config))
        .route("/webchat/v1/{site}/visitors", post(api::visitors))
        .route(
            "/webchat/v1/{site}/messages",
            get(api::messages).post(api::write),
        )
        .route("/webchat/v1/{site}/files", post(api::files))
        .route("/webchat/v1/{site}/buttons", post(api::tap))
        .route("/webchat/v1/{site}/identify", post(api::identify))
        .route("/webchat/v1/{site}/email", post(api::email))
        .route("/webchat/v1/{site}/media/{id}", get(api::media))
        .route("/webchat/v1/{site}/events", get(stream::events))
        .layer(middleware::from_fn(visit::cors))
        .layer(axum::extract::DefaultBodyLimit::max(api::MAX_BODY));
    Router::new()
        // The script is gzipped for browsers that take it (9.8 KB instead of 28 KB).
        .route(
            "/widget/{file}",
            get(widget::script).layer(tower_http::compression::CompressionLayer::new()),
        )
        .merge(api)
        .with_state(state)
}
