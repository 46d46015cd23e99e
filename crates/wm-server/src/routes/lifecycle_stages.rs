//! `/lifecycle-stages`: the organisation's stages, so integrators can fill `lifecycleStageId`.

use aide::axum::ApiRouter;
use aide::axum::routing::get_with;
use axum::extract::State;
use wm_types::lookups::{LifecycleStage, List};

use crate::error::ApiResult;
use crate::extract::{Authed, ContactsRead, NoQuery};
use crate::reply::Json;
use crate::state::AppState;

/// The stage routes.
pub fn router() -> ApiRouter<AppState> {
    ApiRouter::new().api_route(
        "/lifecycle-stages",
        get_with(list, |op| op.tag("Lookups").summary("Lifecycle stages")),
    )
}

async fn list(
    State(s): State<AppState>,
    auth: Authed<ContactsRead>,
    _: NoQuery,
) -> ApiResult<Json<List<LifecycleStage>>> {
    crate::services::organizations::stages(&s, auth.org_id)
        .await
        .map(Json)
}
