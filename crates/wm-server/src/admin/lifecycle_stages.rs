//! `/admin/organizations/{orgId}/lifecycle-stages`.

use axum::Router;
use axum::extract::State;
use axum::routing::get;
use wm_types::admin::CreateLifecycleStage;
use wm_types::lookups::{LifecycleStage, List};

use super::org::OperatorOrg;
use crate::error::ApiResult;
use crate::extract::{NoQuery, ValidatedJson};
use crate::reply::{Created, Json};
use crate::services::organizations as svc;
use crate::state::AppState;

/// The stage routes.
pub fn router() -> Router<AppState> {
    Router::new().route(
        "/admin/organizations/{orgId}/lifecycle-stages",
        get(list).post(create),
    )
}

async fn create(
    State(s): State<AppState>,
    _: NoQuery,
    OperatorOrg(org): OperatorOrg,
    ValidatedJson(body): ValidatedJson<CreateLifecycleStage>,
) -> ApiResult<Created<LifecycleStage>> {
    svc::create_stage(&s, org, body).await.map(Created)
}

async fn list(
    State(s): State<AppState>,
    _: NoQuery,
    OperatorOrg(org): OperatorOrg,
) -> ApiResult<Json<List<LifecycleStage>>> {
    svc::stages(&s, org).await.map(Json)
}
