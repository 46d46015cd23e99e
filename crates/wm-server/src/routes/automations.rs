//! `/automations`: the list with its summary, the detail and the run logs
//! (`automations:read`).

use aide::axum::ApiRouter;
use aide::axum::routing::get_with;
use axum::extract::State;
use wm_types::Page;
use wm_types::automations::{
    Automation, AutomationList, AutomationRun, ListAutomationsQuery, LogsQuery,
};

use crate::error::ApiResult;
use crate::extract::{Authed, AutomationId, AutomationsRead, NoQuery, ValidatedQuery};
use crate::reply::Json;
use crate::services::automations as svc;
use crate::state::AppState;

const TAG: &str = "Automations";

/// The automation routes.
pub fn router() -> ApiRouter<AppState> {
    ApiRouter::new()
        .api_route(
            "/automations",
            get_with(list, |op| {
                op.tag(TAG).summary("List automations with summary")
            }),
        )
        .api_route(
            "/automations/{id}",
            get_with(detail, |op| op.tag(TAG).summary("Get an automation")),
        )
        .api_route(
            "/automations/{id}/logs",
            get_with(logs, |op| op.tag(TAG).summary("An automation's runs")),
        )
}

async fn list(
    State(s): State<AppState>,
    auth: Authed<AutomationsRead>,
    ValidatedQuery(q): ValidatedQuery<ListAutomationsQuery>,
) -> ApiResult<Json<AutomationList>> {
    Ok(Json(svc::list(&s, auth.org_id, &q).await?))
}

async fn detail(
    State(s): State<AppState>,
    auth: Authed<AutomationsRead>,
    _: NoQuery,
    AutomationId(id): AutomationId,
) -> ApiResult<Json<Automation>> {
    Ok(Json(svc::get(&s, auth.org_id, id).await?))
}

async fn logs(
    State(s): State<AppState>,
    auth: Authed<AutomationsRead>,
    ValidatedQuery(q): ValidatedQuery<LogsQuery>,
    AutomationId(id): AutomationId,
) -> ApiResult<Json<Page<AutomationRun>>> {
    Ok(Json(svc::logs(&s, auth.org_id, id, &q).await?))
}
