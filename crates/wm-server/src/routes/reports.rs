//! `/reports/…`: commercial, lifecycle, campaigns, wallet, team and conversations
//! (`reports:read`), each with `from`/`to`, totals and a per-day series.

use aide::axum::ApiRouter;
use aide::axum::routing::get_with;
use axum::extract::State;
use wm_types::reports::*;

use crate::error::ApiResult;
use crate::extract::{Authed, ReportsRead, ValidatedQuery};
use crate::reply::Json;
use crate::services::reports as svc;
use crate::state::AppState;

const TAG: &str = "Reports";

/// The report routes.
pub fn router() -> ApiRouter<AppState> {
    ApiRouter::new()
        .api_route(
            "/reports/commercial",
            get_with(commercial, |op| op.tag(TAG).summary("Commercial report")),
        )
        .api_route(
            "/reports/lifecycle",
            get_with(lifecycle, |op| op.tag(TAG).summary("Lifecycle report")),
        )
        .api_route(
            "/reports/campaigns",
            get_with(campaigns, |op| op.tag(TAG).summary("Campaigns report")),
        )
        .api_route(
            "/reports/wallet",
            get_with(wallet, |op| op.tag(TAG).summary("Wallet report")),
        )
        .api_route(
            "/reports/team",
            get_with(team, |op| op.tag(TAG).summary("Team report")),
        )
        .api_route(
            "/reports/conversations",
            get_with(conversations, |op| {
                op.tag(TAG).summary("Conversations report")
            }),
        )
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
