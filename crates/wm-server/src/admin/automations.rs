//! `/admin/organizations/{orgId}/automations`: define and change automations.

use axum::Router;
use axum::extract::State;
use axum::routing::get;
use wm_types::automations::{
    Automation, AutomationList, CreateAutomation, ListAutomationsQuery, UpdateAutomation,
};

use super::org::OperatorOrg;
use crate::error::ApiResult;
use crate::extract::{AutomationId, NoQuery, ValidatedJson};
use crate::reply::{Created, Json};
use crate::services::automations as svc;
use crate::state::AppState;

/// The routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/admin/organizations/{orgId}/automations",
            get(list).post(create),
        )
        .route(
            "/admin/organizations/{orgId}/automations/{id}",
            get(detail).patch(update),
        )
}

async fn list(
    State(s): State<AppState>,
    _: NoQuery,
    OperatorOrg(org): OperatorOrg,
) -> ApiResult<Json<AutomationList>> {
    let q = ListAutomationsQuery {
        include_archived: Some(true),
        ..Default::default()
    };
    Ok(Json(svc::list(&s, org, &q).await?))
}

async fn create(
    State(s): State<AppState>,
    _: NoQuery,
    OperatorOrg(org): OperatorOrg,
    ValidatedJson(body): ValidatedJson<CreateAutomation>,
) -> ApiResult<Created<Automation>> {
    Ok(Created(svc::create(&s, org, body).await?))
}

async fn detail(
    State(s): State<AppState>,
    _: NoQuery,
    OperatorOrg(org): OperatorOrg,
    AutomationId(id): AutomationId,
) -> ApiResult<Json<Automation>> {
    Ok(Json(svc::get(&s, org, id).await?))
}

async fn update(
    State(s): State<AppState>,
    _: NoQuery,
    OperatorOrg(org): OperatorOrg,
    AutomationId(id): AutomationId,
    ValidatedJson(body): ValidatedJson<UpdateAutomation>,
) -> ApiResult<Json<Automation>> {
    Ok(Json(svc::update(&s, org, id, body).await?))
}
