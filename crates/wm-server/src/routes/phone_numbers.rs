//! `/phone-numbers`: the organisation's sender numbers (`campaigns:read`).

use axum::Router;
use axum::extract::State;
use axum::routing::get;
use wm_types::campaigns::PhoneNumber;
use wm_types::lookups::List;

use crate::error::ApiResult;
use crate::extract::{Authed, CampaignsRead, NoQuery};
use crate::reply::Json;
use crate::state::AppState;

/// The sender number routes.
pub fn router() -> Router<AppState> {
    Router::new().route("/phone-numbers", get(list))
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
