//! `/templates`: the organisation's message templates (`campaigns:read`).

use axum::Router;
use axum::extract::State;
use axum::routing::get;
use wm_types::campaigns::Template;
use wm_types::lookups::List;

use crate::error::ApiResult;
use crate::extract::{Authed, CampaignsRead, NoQuery};
use crate::reply::Json;
use crate::services::catalog;
use crate::state::AppState;

/// The template routes.
pub fn router() -> Router<AppState> {
    Router::new().route("/templates", get(list))
}

async fn list(
    State(s): State<AppState>,
    auth: Authed<CampaignsRead>,
    _: NoQuery,
) -> ApiResult<Json<List<Template>>> {
    Ok(Json(catalog::templates(&s, auth.org_id).await?))
}
