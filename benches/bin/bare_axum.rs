//! The ceiling `benches/load.sh` measures wm-server against: a bare axum server on the same
//! tokio runtime that answers `GET /api/v1/contacts/{id}` with a contact-shaped JSON body of
//! about the size wm-server sends, and no database, authentication or middleware.
//!
//! Run: `cargo run --release -p wm-benches --bin bare-axum -- 127.0.0.1:8081`.

use axum::extract::Path;
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Value, json};

async fn contact(Path(id): Path<String>) -> Json<Value> {
    Json(json!({
        "id": id,
        "organizationId": "0193a5b2-7c1e-7f00-8000-000000000001",
        "fullName": "Ana Perez 1234",
        "primaryPhone": "+5215500001234",
        "primaryEmail": "ana1234@example.com",
        "company": "Acme",
        "country": "MX",
        "source": "API",
        "lifecycleStageId": null,
        "lifecycleStage": null,
        "ownerId": null,
        "owner": null,
        "optedOut": false,
        "consent": {"given": true, "source": null, "at": "2026-11-24T10:00:00.000Z"},
        "tags": ["vip"],
        "identities": [],
        "openDeals": [],
        "createdAt": "2026-11-24T10:00:00.000Z",
        "updatedAt": "2026-11-24T10:00:00.000Z"
    }))
}

async fn health() -> Json<Value> {
    Json(json!({"status": "ok"}))
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:8081".to_owned());
    let app = Router::new()
        .route("/api/v1/health", get(health))
        .route("/api/v1/contacts/{id}", get(contact));
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    axum::serve(listener, app).await
}
