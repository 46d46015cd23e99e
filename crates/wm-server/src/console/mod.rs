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
//! axum::Router::new()
//!     .nest("/api/v1", wm_server::router(state.clone()))
//!     .merge(wm_server::console::router(state))
//! # }
//! ```
//!
//! Modules: [`session`] (sign-in sessions and cookies), [`csrf`] (every form's guard),
//! [`upload`] (forms with a file), [`api`], [`page`] (the shell and answers), [`view`]
//! (fields, tabs, formatting),
//! [`chart`] (SVG charts), [`assets`], and [`pages`], one module per section.

pub mod api;
pub mod assets;
pub mod chart;
pub mod csrf;
pub mod page;
pub mod pages;
pub mod session;
pub mod upload;
pub mod view;

use axum::routing::{get, post};
use axum::{Router, middleware};

use crate::state::AppState;

/// What every console handler holds: the server's state and the API router it calls.
#[derive(Clone)]
pub struct Console {
    /// The server's state (sessions are in its database).
    pub state: AppState,
    /// The API (relative to `/api/v1`), called in-process.
    pub api: Router,
}

/// The console's routes, under `/console`.
pub fn router(state: AppState) -> Router {
    let console = Console {
        api: crate::router(state.clone()),
        state,
    };
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
