//! `/phone-numbers`: the organisation's sender numbers (`campaigns:read`).

use aide::axum::ApiRouter;
use aide::axum::routing::get_with;
use axum::extract::State;
use wm_types::campaigns::PhoneNumber;
use wm_types::lookups::List;

use crate::error::ApiResult;
use crate::extract::{Authed, CampaignsRead, NoQuery};
use crate::reply::Json;
use crate::state::AppState;

/// The sender number routes.
pub fn router() -> ApiRouter<AppState> {
    ApiRouter::new().api_route(
        "/phone-numbers",
        get_with(list, |op| op.tag("Lookups").summary("Sender numbers")),
    )
}

async fn list(
    State(s): State<AppState>,
    auth: Authed<CampaignsRead>,
    _: NoQuery,
) -> ApiResult<Json<List<PhoneNumber>>> {
    Ok(Json(
        crate::services::phone_numbers::list(&s, auth.org_id).await?,
    ))
}
