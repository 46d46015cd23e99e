//! `/lifecycle-stages`: the organisation's stages, so integrators can fill `lifecycleStageId`.

use axum::Router;
use axum::extract::State;
use axum::routing::get;
use wm_types::lookups::{LifecycleStage, List};

use crate::db;
use crate::error::ApiResult;
use crate::extract::{Authed, ContactsRead, NoQuery};
use crate::reply::Json;
use crate::state::AppState;
use crate::views::stage_view;

/// The stage routes.
pub fn router() -> Router<AppState> {
    Router::new().route("/lifecycle-stages", get(list))
}

async fn list(
    State(s): State<AppState>,
    auth: Authed<ContactsRead>,
    _: NoQuery,
) -> ApiResult<Json<List<LifecycleStage>>> {
    let data = db::lookups::stages(&s.db.conn, auth.org_id)
        .await?
        .into_iter()
        .map(stage_view)
        .collect();
    Ok(Json(List { data }))
}
