//! Operator routes for sender numbers and their platform accounts.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{get, patch};
use axum::{Json, Router};
use wm_types::campaigns::{CreatePhoneNumber, PhoneNumber, UpdatePhoneNumber};
use wm_types::lookups::List;

use super::org_of;
use crate::error::ApiResult;
use crate::extract::{NoQuery, ValidatedJson, path_id};
use crate::services::phone_numbers as svc;
use crate::state::AppState;

/// The routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/admin/organizations/{org_id}/phone-numbers",
            get(list).post(create),
        )
        .route(
            "/admin/organizations/{org_id}/phone-numbers/{id}",
            patch(update),
        )
}

async fn list(
    State(s): State<AppState>,
    Path(org): Path<String>,
    _: NoQuery,
) -> ApiResult<Json<List<PhoneNumber>>> {
    let org = org_of(&s, &org).await?;
    Ok(Json(svc::list(&s, org).await?))
}

async fn create(
    State(s): State<AppState>,
    Path(org): Path<String>,
    _: NoQuery,
    ValidatedJson(body): ValidatedJson<CreatePhoneNumber>,
) -> ApiResult<(StatusCode, Json<PhoneNumber>)> {
    let org = org_of(&s, &org).await?;
    Ok((StatusCode::CREATED, Json(svc::create(&s, org, body).await?)))
}

async fn update(
    State(s): State<AppState>,
    Path((org, id)): Path<(String, String)>,
    _: NoQuery,
    ValidatedJson(body): ValidatedJson<UpdatePhoneNumber>,
) -> ApiResult<Json<PhoneNumber>> {
    let org = org_of(&s, &org).await?;
    Ok(Json(
        svc::update(&s, org, path_id(&id, "Phone number")?, body).await?,
    ))
}
