//! The console: the pages the people who run campaigns and answer customers use, served
//! under `/console` by the same binary, rendered on the server (maud), with every asset
//! compiled in. Like listmonk's UI it uses only the public API — called in-process as the
//! signed-in key ([`api`]) — so it can do nothing the API cannot, and a key's missing
//! scope hides or refuses that part exactly as the API would.
//!
//! Mount it beside the API (it uses absolute `/console` paths); an embedding app that wants
//! no console leaves it out:
//!
//! ```no_run
//! # fn app(state: wm_server::state::AppState) -> axum::Router {
//! let api = wm_server::router(state.clone());
//! axum::Router::new()
//!     .nest("/api/v1", api.clone())
//!     .merge(wm_server::console::router(state, api))
//! # }
//! ```
//!
//! Modules: [`session`] (sign-in sessions and cookies), [`csrf`] (every form's guard),
//! [`upload`] (forms with a file), [`api`], [`context`] (what handlers hold), [`answer`]
//! (plain answers and errors), [`page`] (the shell), [`view`]
//! (fields, tabs, formatting),
//! [`chart`] (SVG charts), [`assets`], and [`pages`], one module per section.

pub mod answer;
pub mod api;
pub mod assets;
pub mod chart;
pub mod context;
pub mod csrf;
pub mod page;
pub mod pages;
pub mod session;
pub mod upload;
pub mod view;

use axum::routing::{get, post};
use axum::{Router, middleware};

use crate::state::AppState;

use context::Console;

/// The console's routes, under `/console`, calling `api` (the API router, relative to
/// `/api/v1`, as the server mounts it) in-process: one API, never a second copy built here.
pub fn router(state: AppState, api: Router) -> Router {
    let console = Console { api, state };
    let routes = Router::new()
        .route("/console", get(pages::home::show))
        .route(
            "/console/",
            get(|| async { axum::response::Redirect::permanent("/console") }),
        )
        .route("/console/live/sending", get(pages::home::sending))
        .route(
            "/console/sign-in",
            get(pages::sign_in::show).post(pages::sign_in::submit),
        )
        .route("/console/sign-out", post(pages::sign_in::sign_out))
        .route("/console/assets/{file}", get(assets::serve))
        .merge(pages::contacts::routes())
        .merge(pages::imports::routes())
        .merge(pages::campaigns::routes())
        .merge(pages::inbox::routes())
        .merge(pages::webhooks::routes())
        .merge(pages::catalog::routes())
        .merge(pages::automations::routes())
        .merge(pages::reports::routes())
        .fallback(pages::sign_in::not_found)
        .layer(middleware::from_fn_with_state(console.clone(), csrf::guard))
        .with_state(console);
    crate::observe::wrap(routes)
}
