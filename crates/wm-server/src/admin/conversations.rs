//! `PATCH /admin/organizations/{orgId}/conversations/{id}`: status and assignee.

use axum::extract::{Path, State};
use axum::routing::patch;
use axum::{Json, Router};
use wm_types::conversations::{Conversation, UpdateConversation};

use super::org_of;
use crate::error::ApiResult;
use crate::extract::{NoQuery, ValidatedJson, path_id};
use crate::services::conversations as svc;
use crate::state::AppState;

/// The route.
pub fn router() -> Router<AppState> {
    Router::new().route(
        "/admin/organizations/{org_id}/conversations/{id}",
        patch(update),
    )
}

async fn update(
    State(s): State<AppState>,
    Path((org, id)): Path<(String, String)>,
    _: NoQuery,
    ValidatedJson(body): ValidatedJson<UpdateConversation>,
) -> ApiResult<Json<Conversation>> {
    let org = org_of(&s, &org).await?;
    Ok(Json(
        svc::update(&s, org, path_id(&id, "Conversation")?, body).await?,
    ))
}
