//! `/conversations`: the inbox, read-only (`conversations:read`).

use axum::Router;
use axum::extract::State;
use axum::routing::get;
use wm_types::conversations::{Conversation, ConversationList, ListConversationsQuery};

use crate::error::ApiResult;
use crate::extract::{Authed, ConversationId, ConversationsRead, NoQuery, ValidatedQuery};
use crate::reply::Json;
use crate::services::conversations as svc;
use crate::state::AppState;

/// The conversation routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/conversations", get(list))
        .route("/conversations/{id}", get(detail))
}

async fn list(
    State(s): State<AppState>,
    auth: Authed<ConversationsRead>,
    ValidatedQuery(q): ValidatedQuery<ListConversationsQuery>,
) -> ApiResult<Json<ConversationList>> {
    Ok(Json(svc::list(&s, &auth, &q).await?))
}

async fn detail(
    State(s): State<AppState>,
    auth: Authed<ConversationsRead>,
    _: NoQuery,
    ConversationId(id): ConversationId,
) -> ApiResult<Json<Conversation>> {
    Ok(Json(svc::get(&s, auth.org_id, id).await?))
}
