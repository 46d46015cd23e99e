//! `/automations`: the list with its summary, the detail and the run logs
//! (`automations:read`).

use axum::Router;
use axum::extract::State;
use axum::routing::get;
use wm_types::Page;
use wm_types::automations::{
    Automation, AutomationList, AutomationRun, ListAutomationsQuery, LogsQuery,
};

use crate::error::ApiResult;
use crate::extract::{Authed, AutomationId, AutomationsRead, NoQuery, ValidatedQuery};
use crate::reply::Json;
use crate::services::automations as svc;
use crate::state::AppState;

/// The automation routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/automations", get(list))
        .route("/automations/{id}", get(detail))
        .route("/automations/{id}/logs", get(logs))
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
