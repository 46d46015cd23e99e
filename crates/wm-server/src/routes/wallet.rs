//! `/wallet`: balance, allowance and the latest ledger entries (`campaigns:read`).

use axum::Router;
use axum::extract::State;
use axum::routing::get;
use wm_types::campaigns::Wallet;

use crate::error::ApiResult;
use crate::extract::{Authed, CampaignsRead, NoQuery};
use crate::reply::Json;
use crate::services::catalog;
use crate::state::AppState;

/// The wallet route.
pub fn router() -> Router<AppState> {
    Router::new().route("/wallet", get(detail))
}

async fn detail(
    State(s): State<AppState>,
    auth: Authed<CampaignsRead>,
    _: NoQuery,
) -> ApiResult<Json<Wallet>> {
    Ok(Json(catalog::wallet(&s, auth.org_id).await?))
}
