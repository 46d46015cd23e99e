//! `/wallet`: balance, allowance and the latest ledger entries (`campaigns:read`).

use aide::axum::ApiRouter;
use aide::axum::routing::get_with;
use axum::extract::State;
use wm_types::campaigns::Wallet;

use crate::error::ApiResult;
use crate::extract::{Authed, CampaignsRead, NoQuery};
use crate::reply::Json;
use crate::services::catalog;
use crate::state::AppState;

/// The wallet route.
pub fn router() -> ApiRouter<AppState> {
    ApiRouter::new().api_route(
        "/wallet",
        get_with(detail, |op| {
            op.tag("Lookups").summary("Wallet, allowance and ledger")
        }),
    )
}

async fn detail(
    State(s): State<AppState>,
    auth: Authed<CampaignsRead>,
    _: NoQuery,
) -> ApiResult<Json<Wallet>> {
    Ok(Json(catalog::wallet(&s, auth.org_id).await?))
}
