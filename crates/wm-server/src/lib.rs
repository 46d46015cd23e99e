//! The wm reference server: an axum [`Router`] over sea-orm (SQLite by default, PostgreSQL
//! for production), mountable in any axum app, and the `wm-server` binary around it.
//!
//! Two entry points:
//! - [`router`]: the API (public routes under their v1 paths, the operator API under
//!   `/admin`), to `nest("/api/v1", ..)` in your own app;
//! - [`serve`]: connect, migrate, optionally seed the demo, and listen.
//!
//! Modules: [`config`] (flags), [`state`], [`error`] (the spec's error bodies), [`extract`]
//! (auth, validated JSON/query, path ids), [`reply`] (success statuses), [`auth`] (the middlewares),
//! [`keys`] (key format, hash, cache), [`rate_limit`], [`listener`] (connection timeouts and caps), [`routes`]
//! (one module per resource), [`openapi`] (the document, generated from [`routes`]),
//! [`admin`] (operator API), [`services`] (use cases), [`views`] (rows to wire types shared
//! by the API-key and operator routes),
//! [`db`] (entities, migrations, queries), [`worker`] (campaigns, webhook deliveries,
//! automations, contact imports), [`provider`] (the simulated and WhatsApp senders, and
//! their pacing), [`secrets`] (platform tokens encrypted at rest), [`cache`] (organisation
//! lookups), [`changes`] (cache invalidation every replica sees), [`ttl`] (the one TTL
//! map under every cache and limiter), [`demo`],
//! [`observe`] (request logs, metrics, readiness), [`console`] (the web console under
//! `/console`, over the API).
//!
//! A host app that mounts [`router`] runs the workers with [`worker::spawn_all`].
//!
//! ```no_run
//! # async fn run() -> anyhow::Result<()> {
//! use std::sync::Arc;
//! let db = wm_server::db::Db::connect("sqlite::memory:").await?;
//! db.migrate().await?;
//! let settings = wm_server::state::Settings::new("operator-secret");
//! let state = wm_server::state::AppState::new(db, Arc::new(wm_core::time::SystemClock), settings);
//! let app = axum::Router::new().nest("/api/v1", wm_server::router(state));
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! axum::serve(listener, app).await?;
//! # Ok(()) }
//! ```

pub mod admin;
pub mod auth;
pub mod cache;
pub mod changes;
pub mod config;
pub mod console;
pub mod db;
pub mod demo;
pub mod error;
pub mod extract;
pub mod idempotency;
pub mod keys;
pub mod listener;
pub mod media;
pub mod observe;
pub mod openapi;
pub mod provider;
pub mod rate_limit;
pub mod reply;
pub mod routes;
pub mod secrets;
pub mod services;
pub mod state;
pub mod ttl;
pub mod views;
pub mod webchat;
pub mod worker;

use std::sync::Arc;

use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router, middleware};
use rand::Rng;

use crate::config::ServeArgs;
use crate::error::ApiError;
use crate::state::{AppState, Settings};

/// The whole API, relative to `/api/v1`: API-key routes, the operator API under `/admin`,
/// `GET /health` (liveness), `GET /health/ready` (readiness), and a JSON 404 for anything
/// else; every answer carries `X-Request-Id` and is logged (see [`observe`]).
pub fn router(state: AppState) -> Router {
    let api = Router::from(routes::router()).route_layer(middleware::from_fn_with_state(
        state.clone(),
        auth::api_key_auth,
    ));
    let admin = admin::router().route_layer(middleware::from_fn_with_state(
        state.clone(),
        auth::admin_auth,
    ));
    let routes = Router::new()
        .route("/health", get(health))
        .route("/health/ready", get(observe::health::ready))
        .route("/openapi.json", get(openapi_json))
        .route("/docs", get(docs))
        .merge(routes::platform::router())
        .merge(api)
        .merge(admin)
        .method_not_allowed_fallback(method_not_allowed)
        .fallback(not_found);
    observe::wrap(routes)
        .layer(middleware::from_fn(run_to_completion))
        .with_state(state)
}

/// Runs each request to its end on a task of its own. A client that hangs up (or times
/// out) mid-request would otherwise cancel the handler wherever it is, possibly inside a
/// database transaction: the write would be half done from the handler's point of view and
/// the connection handed back with the transaction still open. Detached, the handler
/// finishes (its writes commit or roll back as they would have) and only the answer is
/// lost.
async fn run_to_completion(
    req: axum::extract::Request,
    next: middleware::Next,
) -> axum::response::Response {
    match tokio::spawn(next.run(req)).await {
        Ok(response) => response,
        Err(e) => axum::response::IntoResponse::into_response(error::ApiError::Internal(
            anyhow::anyhow!("the request's task ended early: {e}"),
        )),
    }
}

/// The OpenAPI 3.1 document, built and serialised once; each request shares the bytes.
async fn openapi_json() -> impl axum::response::IntoResponse {
    static DOC: std::sync::LazyLock<axum::body::Bytes> = std::sync::LazyLock::new(|| {
        serde_json::to_vec(&routes::document())
            .unwrap_or_default()
            .into()
    });
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        DOC.clone(),
    )
}

async fn docs() -> axum::response::Html<&'static str> {
    axum::response::Html(openapi::DOCS_HTML)
}

async fn health() -> Json<serde_json::Value> {
    Json(serde_json::json!({ "status": "ok" }))
}

async fn not_found() -> ApiError {
    ApiError::business(StatusCode::NOT_FOUND, None, "Route not found")
}

/// A known path with a method it does not have: 405 in the business-error shape (axum adds
/// the `Allow` header listing the methods it has).
async fn method_not_allowed(method: axum::http::Method) -> ApiError {
    ApiError::business(
        StatusCode::METHOD_NOT_ALLOWED,
        None,
        format!("Method {method} is not allowed on this route"),
    )
}

/// A random operator token, used when `WM_ADMIN_TOKEN` is not set.
pub fn random_token() -> String {
    let mut bytes = [0u8; 24];
    rand::rng().fill(&mut bytes);
    format!("wm_admin_{}", hex::encode(bytes))
}

/// Runs the server until Ctrl-C or SIGTERM: connects, migrates, seeds the demo when asked,
/// prints the operator token when it was generated, and listens.
pub async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    // Refuse a bad key before touching anything.
    let secret_key = args
        .secret_key
        .as_deref()
        .map(secrets::SecretKey::from_base64)
        .transpose()
        .map_err(|e| anyhow::anyhow!("WM_SECRET_KEY: {e}"))?;
    if args.provider == "whatsapp" && secret_key.is_none() {
        anyhow::bail!(
            "WM_PROVIDER=whatsapp needs WM_SECRET_KEY (32 bytes in base64) to keep the numbers' access tokens encrypted"
        );
    }
    let db = db::Db::connect(&args.db.database_url).await?;
    db.migrate().await?;
    let generated = args.admin_token.is_none();
    let admin_token = args.admin_token.clone().unwrap_or_else(random_token);
    let settings = Settings {
        admin_token: admin_token.clone(),
        rate_limit_per_minute: args.rate_limit_per_minute,
        webhook_retry_schedule: args.webhook_retry_schedule.0.clone(),
        allow_insecure_webhooks: args.allow_insecure_webhooks,
        provider_mps: args.provider_mps,
        limits: args.limits(),
        reconcile_after: args.whatsapp_reconcile_after,
        hold_keyed_answers: args.test_hold_keyed_answers,
        webchat_messages_per_minute: args.webchat_messages_per_minute,
        webchat_writes_per_address_per_minute: args.webchat_writes_per_address_per_minute,
        providers: provider::Settings {
            messaging: args.provider.clone(),
            whatsapp: provider::whatsapp::Settings {
                graph_url: args.whatsapp_graph_url.clone(),
                api_version: args.whatsapp_api_version.clone(),
                app_secret: args.whatsapp_app_secret.clone(),
                verify_token: args.whatsapp_verify_token.clone(),
            },
            messenger: provider::messenger::Settings {
                graph_url: args.messenger_graph_url.clone().unwrap_or_default(),
                api_version: args.messenger_api_version.clone().unwrap_or_default(),
                app_secret: args.messenger_app_secret.clone(),
                verify_token: args.messenger_verify_token.clone(),
            },
        },
        media: media::MediaSettings {
            dir: args.media_dir.clone(),
            s3_bucket: args.media_s3_bucket.clone(),
            ..Default::default()
        },
        ..Settings::new(admin_token.clone())
    };
    // Refuse a media store that cannot be opened before listening.
    media::MediaStore::open(&settings.media)?;
    let clock: Arc<dyn wm_core::time::Clock> = Arc::new(wm_core::time::SystemClock);
    let registry = provider::registry(&settings.providers, &db, clock.clone())
        .map_err(|e| anyhow::anyhow!("the providers: {e}"))?;
    let state = AppState::with_registry(db, clock, settings, registry, secret_key);
    let listener = listener::bind(args.listen, "--listen / WM_LISTEN").await?;
    let _metrics = observe::exporter::serve(args.metrics_listen.0, &state).await?;
    let base = format!("http://{}/api/v1", listener.local_addr()?);
    if generated {
        println!("Operator token (WM_ADMIN_TOKEN was not set; shown once): {admin_token}");
    }
    if args.demo {
        let demo = demo::seed(&state).await?;
        demo.print(&base, &admin_token);
    }
    tracing::info!(%base, "wm-server listening");
    run(state, listener, signal()).await
}

/// Serves `state` under `/api/v1` (and the console under `/console`) on `listener`, with
/// the background workers (webhook deliveries, campaign sending), until `shutdown`
/// resolves. Then, at once, readiness answers 503 and the workers stop between messages
/// and hand their leases back; the
/// listener keeps serving for [`listener::Limits::shutdown_delay`] (or until a second
/// signal), so the load balancer stops sending traffic first, and then drains.
pub async fn run(
    state: AppState,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let workers = worker::spawn_all(&state, state.stop.clone())?;
    let limits = state.settings.limits;
    let stopping = state.clone();
    let shutdown = async move {
        shutdown.await;
        stopping.health.set_draining();
        stopping.stop.cancel();
        tracing::info!(
            delay = ?limits.shutdown_delay,
            "shutting down: readiness answers 503, workers hand their work back"
        );
        tokio::select! {
            _ = tokio::time::sleep(limits.shutdown_delay) => {}
            _ = signal() => tracing::info!("second signal: stopping now"),
        }
    };
    let api = router(state.clone());
    let app = Router::new()
        .nest("/api/v1", api.clone())
        .merge(console::router(state.clone(), api))
        .merge(webchat::router(state.clone()));
    let served = listener::serve(listener, app, limits, shutdown).await;
    state.stop.cancel();
    for w in workers {
        let _ = w.await;
    }
    served?;
    Ok(())
}

/// Ctrl-C or SIGTERM.
async fn signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        if let Ok(mut s) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        {
            s.recv().await;
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! { _ = ctrl_c => {}, _ = term => {} }
}
