//! `/conversations`: the inbox, read-only (`conversations:read`).

use aide::axum::ApiRouter;
use aide::axum::routing::get_with;
use axum::extract::State;
use wm_types::conversations::{Conversation, ConversationList, ListConversationsQuery};

use crate::error::ApiResult;
use crate::extract::{Authed, ConversationId, ConversationsRead, NoQuery, ValidatedQuery};
use crate::reply::Json;
use crate::services::conversations as svc;
use crate::state::AppState;

const TAG: &str = "Conversations";

/// The conversation routes.
pub fn router() -> ApiRouter<AppState> {
    ApiRouter::new()
        .api_route(
            "/conversations",
            get_with(list, |op| {
                op.tag(TAG)
                    .summary("List conversations with tabs and summary")
            }),
        )
        .api_route(
            "/conversations/{id}",
            get_with(detail, |op| op.tag(TAG).summary("Get a conversation")),
        )
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
