//! Operator routes that stand in for the messaging platform: inbound messages and status
//! callbacks.

use axum::Router;
use axum::extract::State;
use axum::routing::post;
use wm_types::campaigns::{Inbound, ProviderEvent};

use super::OperatorOrg;
use crate::error::ApiResult;
use crate::extract::{NoQuery, ValidatedJson};
use crate::reply::Json;
use crate::services::inbound::{self, InboundResult};
use crate::state::AppState;

/// The routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/admin/organizations/{orgId}/inbound", post(on_inbound))
        .route(
            "/admin/organizations/{orgId}/provider-events",
            post(on_status),
        )
}

async fn on_inbound(
    State(s): State<AppState>,
    _: NoQuery,
    OperatorOrg(org): OperatorOrg,
    ValidatedJson(body): ValidatedJson<Inbound>,
) -> ApiResult<Json<InboundResult>> {
    Ok(Json(inbound::inbound(&s, org, body).await?))
}

async fn on_status(
    State(s): State<AppState>,
    _: NoQuery,
    OperatorOrg(org): OperatorOrg,
    ValidatedJson(body): ValidatedJson<ProviderEvent>,
) -> ApiResult<Json<serde_json::Value>> {
    let applied = inbound::provider_event(&s, org, body).await?;
    Ok(Json(serde_json::json!({ "applied": applied })))
}
