//! Embed wm in your own axum app: your routes and your own auth beside wm's router, which
//! is nested under `/api/v1` and keeps its own API-key auth.
//!
//! Run: `cargo run -p wm-examples --example embed_router`, then
//! `curl localhost:3000/hello` and `curl localhost:3000/api/v1/health`.

use std::sync::Arc;

use axum::Router;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::get;

/// Your app's own auth, applied to your routes only.
async fn my_auth(req: Request, next: Next) -> Result<Response, StatusCode> {
    if req.headers().get("x-my-app").is_some() || req.uri().path() == "/hello" {
        Ok(next.run(req).await)
    } else {
        Err(StatusCode::UNAUTHORIZED)
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let db = wm_server::db::Db::connect("sqlite::memory:").await?;
    db.migrate().await?;
    let settings = wm_server::state::Settings::new(wm_server::random_token());
    println!("operator token: {}", settings.admin_token);
    let state = wm_server::state::AppState::new(db, Arc::new(wm_core::time::SystemClock), settings);

    let mine = Router::new()
        .route("/hello", get(|| async { "hello from the host app" }))
        .route("/private", get(|| async { "only with x-my-app" }))
        .layer(middleware::from_fn(my_auth));
    let app = mine.nest("/api/v1", wm_server::router(state));

    let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
    println!("listening on http://{}", listener.local_addr()?);
    axum::serve(listener, app).await?;
    Ok(())
}
