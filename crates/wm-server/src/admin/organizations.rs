//! `/admin/organizations`.

use axum::Router;
use axum::extract::State;
use axum::routing::get;
use wm_types::admin::{CreateOrganization, Organization};
use wm_types::lookups::List;

use crate::error::ApiResult;
use crate::extract::{NoQuery, OrgId, ValidatedJson};
use crate::reply::{Created, Json};
use crate::services::organizations as svc;
use crate::state::AppState;

/// The organisation routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/admin/organizations", get(list).post(create))
        .route("/admin/organizations/{orgId}", get(detail))
}

async fn create(
    State(s): State<AppState>,
    _: NoQuery,
    ValidatedJson(body): ValidatedJson<CreateOrganization>,
) -> ApiResult<Created<Organization>> {
    svc::create_organization(&s, body).await.map(Created)
}

async fn list(State(s): State<AppState>, _: NoQuery) -> ApiResult<Json<List<Organization>>> {
    let data = svc::list_organizations(&s).await?;
    Ok(Json(List { data }))
}

async fn detail(
    State(s): State<AppState>,
    _: NoQuery,
    OrgId(id): OrgId,
) -> ApiResult<Json<Organization>> {
    svc::get_organization(&s, id).await.map(Json)
}
