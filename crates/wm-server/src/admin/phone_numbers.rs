//! Operator routes for sender numbers and their platform accounts.

use axum::Router;
use axum::extract::State;
use axum::routing::{get, patch};
use wm_types::campaigns::{CreatePhoneNumber, PhoneNumber, UpdatePhoneNumber};
use wm_types::lookups::List;

use super::org::OperatorOrg;
use crate::error::ApiResult;
use crate::extract::{NoQuery, PhoneNumberId, ValidatedJson};
use crate::reply::{Created, Json};
use crate::services::phone_numbers as svc;
use crate::state::AppState;

/// The routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route(
            "/admin/organizations/{orgId}/phone-numbers",
            get(list).post(create),
        )
        .route(
            "/admin/organizations/{orgId}/phone-numbers/{id}",
            patch(update),
        )
}

async fn list(
    State(s): State<AppState>,
    _: NoQuery,
    OperatorOrg(org): OperatorOrg,
) -> ApiResult<Json<List<PhoneNumber>>> {
    Ok(Json(svc::list(&s, org).await?))
}

async fn create(
    State(s): State<AppState>,
    _: NoQuery,
    OperatorOrg(org): OperatorOrg,
    ValidatedJson(body): ValidatedJson<CreatePhoneNumber>,
) -> ApiResult<Created<PhoneNumber>> {
    Ok(Created(svc::create(&s, org, body).await?))
}

async fn update(
    State(s): State<AppState>,
    _: NoQuery,
    OperatorOrg(org): OperatorOrg,
    PhoneNumberId(id): PhoneNumberId,
    ValidatedJson(body): ValidatedJson<UpdatePhoneNumber>,
) -> ApiResult<Json<PhoneNumber>> {
    Ok(Json(svc::update(&s, org, id, body).await?))
}
