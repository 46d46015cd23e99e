//! `/templates`: the organisation's message templates (`campaigns:read`).

use aide::axum::ApiRouter;
use aide::axum::routing::get_with;
use axum::extract::State;
use wm_types::campaigns::Template;
use wm_types::lookups::List;

use crate::error::ApiResult;
use crate::extract::{Authed, CampaignsRead, NoQuery};
use crate::reply::Json;
use crate::services::catalog;
use crate::state::AppState;

/// The template routes.
pub fn router() -> ApiRouter<AppState> {
    ApiRouter::new().api_route(
        "/templates",
        get_with(list, |op| op.tag("Lookups").summary("Message templates")),
    )
}

async fn list(
    State(s): State<AppState>,
    auth: Authed<CampaignsRead>,
    _: NoQuery,
) -> ApiResult<Json<List<Template>>> {
    Ok(Json(catalog::templates(&s, auth.org_id).await?))
}
