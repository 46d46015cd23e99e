//! `/reports/…`: commercial, lifecycle, campaigns, wallet, team and conversations
//! (`reports:read`), each with `from`/`to`, totals and a per-day series.

use axum::Router;
use axum::extract::State;
use axum::routing::get;
use wm_types::reports::*;

use crate::error::ApiResult;
use crate::extract::{Authed, ReportsRead, ValidatedQuery};
use crate::reply::Json;
use crate::services::reports as svc;
use crate::state::AppState;

/// The report routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/reports/commercial", get(commercial))
        .route("/reports/lifecycle", get(lifecycle))
        .route("/reports/campaigns", get(campaigns))
        .route("/reports/wallet", get(wallet))
        .route("/reports/team", get(team))
        .route("/reports/conversations", get(conversations))
}

macro_rules! report {
    ($name:ident, $t:ty, $d:ty) => {
        async fn $name(
            State(s): State<AppState>,
            auth: Authed<ReportsRead>,
            ValidatedQuery(q): ValidatedQuery<ReportQuery>,
        ) -> ApiResult<Json<Report<$t, $d>>> {
            Ok(Json(svc::$name(&s, auth.org_id, &q).await?))
        }
    };
}

report!(commercial, CommercialTotals, CommercialDay);
report!(lifecycle, LifecycleTotals, LifecycleDay);
report!(campaigns, CampaignTotals, CampaignDay);
report!(wallet, WalletTotals, WalletDay);
report!(team, TeamTotals, TeamDay);
report!(conversations, ConversationTotals, ConversationDay);
