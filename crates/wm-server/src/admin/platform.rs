//! Operator routes that stand in for the messaging platform (inbound messages and status
//! callbacks), and what the real platforms sent that wm could not apply.

use axum::Router;
use axum::extract::State;
use axum::routing::{get, post};
use wm_types::admin::UnappliedPart;
use wm_types::campaigns::{Inbound, ProviderEvent};
use wm_types::lookups::List;

use super::org::OperatorOrg;
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
        .route("/admin/platform/unapplied", get(unapplied))
}

/// `GET /admin/platform/unapplied`: the newest 200 parts of platform webhooks wm could not
/// apply, with why (every one was also logged at WARN and counted).
async fn unapplied(State(s): State<AppState>, _: NoQuery) -> ApiResult<Json<List<UnappliedPart>>> {
    let rows = crate::services::platform::unapplied::newest(&s.db.conn, 200).await?;
    Ok(Json(List {
        data: rows.into_iter().map(UnappliedPart::from).collect(),
    }))
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
