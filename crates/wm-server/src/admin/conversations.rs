//! `PATCH /admin/organizations/{orgId}/conversations/{id}`: status and assignee.

use axum::Router;
use axum::extract::State;
use axum::routing::patch;
use wm_types::conversations::{Conversation, UpdateConversation};

use super::org::OperatorOrg;
use crate::error::ApiResult;
use crate::extract::{ConversationId, NoQuery, ValidatedJson};
use crate::reply::Json;
use crate::services::conversations as svc;
use crate::state::AppState;

/// The route.
pub fn router() -> Router<AppState> {
    Router::new().route(
        "/admin/organizations/{orgId}/conversations/{id}",
        patch(update),
    )
}

async fn update(
    State(s): State<AppState>,
    _: NoQuery,
    OperatorOrg(org): OperatorOrg,
    ConversationId(id): ConversationId,
    ValidatedJson(body): ValidatedJson<UpdateConversation>,
) -> ApiResult<Json<Conversation>> {
    Ok(Json(svc::update(&s, org, id, body).await?))
}
