//! `/admin/organizations/{orgId}/automations`: define and change automations.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use wm_types::automations::{
    Automation, AutomationList, CreateAutomation, ListAutomationsQuery, UpdateAutomation,
};

use super::org_of;
use crate::error::ApiResult;
use crate::extract::{NoQuery, ValidatedJson, path_id};
use crate::services::automations as svc;
use crate::state::AppState;

/// The routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/admin/organizations/{org_id}/automations",
            get(list).post(create),
        )
        .route(
            "/admin/organizations/{org_id}/automations/{id}",
            get(detail).patch(update),
        )
}

async fn list(
    State(s): State<AppState>,
    Path(org): Path<String>,
    _: NoQuery,
) -> ApiResult<Json<AutomationList>> {
    let org = org_of(&s, &org).await?;
    let q = ListAutomationsQuery {
        include_archived: Some(true),
        ..Default::default()
    };
    Ok(Json(svc::list(&s, org, &q).await?))
}

async fn create(
    State(s): State<AppState>,
    Path(org): Path<String>,
    _: NoQuery,
    ValidatedJson(body): ValidatedJson<CreateAutomation>,
) -> ApiResult<(StatusCode, Json<Automation>)> {
    let org = org_of(&s, &org).await?;
    Ok((StatusCode::CREATED, Json(svc::create(&s, org, body).await?)))
}

async fn detail(
    State(s): State<AppState>,
    Path((org, id)): Path<(String, String)>,
    _: NoQuery,
) -> ApiResult<Json<Automation>> {
    let org = org_of(&s, &org).await?;
    Ok(Json(svc::get(&s, org, path_id(&id, "Automation")?).await?))
}

async fn update(
    State(s): State<AppState>,
    Path((org, id)): Path<(String, String)>,
    _: NoQuery,
    ValidatedJson(body): ValidatedJson<UpdateAutomation>,
) -> ApiResult<Json<Automation>> {
    let org = org_of(&s, &org).await?;
    Ok(Json(
        svc::update(&s, org, path_id(&id, "Automation")?, body).await?,
    ))
}
