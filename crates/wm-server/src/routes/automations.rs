//! `/automations`: the list with its summary, the detail and the run logs
//! (`automations:read`).

use axum::extract::{Path, State};
use axum::routing::get;
use axum::{Json, Router};
use wm_types::Page;
use wm_types::automations::{
    Automation, AutomationList, AutomationRun, ListAutomationsQuery, LogsQuery,
};

use crate::error::ApiResult;
use crate::extract::{Authed, AutomationsRead, NoQuery, ValidatedQuery, path_id};
use crate::services::automations as svc;
use crate::state::AppState;

const WHAT: &str = "Automation";

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
    Path(id): Path<String>,
    _: NoQuery,
) -> ApiResult<Json<Automation>> {
    Ok(Json(svc::get(&s, auth.org_id, path_id(&id, WHAT)?).await?))
}

async fn logs(
    State(s): State<AppState>,
    auth: Authed<AutomationsRead>,
    Path(id): Path<String>,
    ValidatedQuery(q): ValidatedQuery<LogsQuery>,
) -> ApiResult<Json<Page<AutomationRun>>> {
    Ok(Json(
        svc::logs(&s, auth.org_id, path_id(&id, WHAT)?, &q).await?,
    ))
}
