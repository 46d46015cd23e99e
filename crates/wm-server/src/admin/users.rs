//! `/admin/organizations/{orgId}/users`.

use axum::Router;
use axum::extract::State;
use axum::routing::get;
use wm_types::admin::CreateUser;
use wm_types::lookups::{List, User};

use super::org::OperatorOrg;
use crate::error::ApiResult;
use crate::extract::{NoQuery, ValidatedJson};
use crate::reply::{Created, Json};
use crate::services::organizations as svc;
use crate::state::AppState;

/// The user routes.
pub fn router() -> Router<AppState> {
    Router::new().route("/admin/organizations/{orgId}/users", get(list).post(create))
}

async fn create(
    State(s): State<AppState>,
    _: NoQuery,
    OperatorOrg(org): OperatorOrg,
    ValidatedJson(body): ValidatedJson<CreateUser>,
) -> ApiResult<Created<User>> {
    svc::create_user(&s, org, body).await.map(Created)
}

async fn list(
    State(s): State<AppState>,
    _: NoQuery,
    OperatorOrg(org): OperatorOrg,
) -> ApiResult<Json<List<User>>> {
    svc::users(&s, org).await.map(Json)
}
