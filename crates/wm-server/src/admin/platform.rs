//! Operator routes that stand in for the messaging platform: inbound messages and status
//! callbacks.

use axum::extract::{Path, State};
use axum::routing::post;
use axum::{Json, Router};
use wm_types::campaigns::{Inbound, ProviderEvent};

use super::org_of;
use crate::error::ApiResult;
use crate::extract::{NoQuery, ValidatedJson};
use crate::services::inbound::{self, InboundResult};
use crate::state::AppState;

/// The routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/admin/organizations/{org_id}/inbound", post(on_inbound))
        .route(
            "/admin/organizations/{org_id}/provider-events",
            post(on_status),
        )
}

async fn on_inbound(
    State(s): State<AppState>,
    Path(org): Path<String>,
    _: NoQuery,
    ValidatedJson(body): ValidatedJson<Inbound>,
) -> ApiResult<Json<InboundResult>> {
    let org = org_of(&s, &org).await?;
    Ok(Json(inbound::inbound(&s, org, body).await?))
}

async fn on_status(
    State(s): State<AppState>,
    Path(org): Path<String>,
    _: NoQuery,
    ValidatedJson(body): ValidatedJson<ProviderEvent>,
) -> ApiResult<Json<serde_json::Value>> {
    let org = org_of(&s, &org).await?;
    let applied = inbound::provider_event(&s, org, body).await?;
    Ok(Json(serde_json::json!({ "applied": applied })))
}
