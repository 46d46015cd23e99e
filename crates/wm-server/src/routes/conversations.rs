//! `/conversations`: the inbox (`conversations:read`), its threads, and status and assignee
//! changes (`conversations:write`).

use aide::axum::ApiRouter;
use aide::axum::routing::get_with;
use axum::extract::State;
use wm_types::conversations::{
    Conversation, ConversationList, ListConversationsQuery, UpdateConversation,
};
use wm_types::messages::{ListMessagesQuery, MessageList};

use crate::error::ApiResult;
use crate::extract::{
    Authed, ConversationId, ConversationsRead, ConversationsWrite, NoQuery, ValidatedJson,
    ValidatedQuery,
};
use crate::reply::Json;
use crate::services::conversations as svc;
use crate::services::messages;
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
            get_with(detail, |op| op.tag(TAG).summary("Get a conversation")).patch_with(
                update,
                |op| {
                    op.tag(TAG)
                        .summary("Change a conversation's status or assignee")
                },
            ),
        )
        .api_route(
            "/conversations/{id}/messages",
            get_with(thread, |op| {
                op.tag(TAG)
                    .summary("List a conversation's messages, newest first")
            }),
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

async fn update(
    State(s): State<AppState>,
    auth: Authed<ConversationsWrite>,
    _: NoQuery,
    ConversationId(id): ConversationId,
    ValidatedJson(body): ValidatedJson<UpdateConversation>,
) -> ApiResult<Json<Conversation>> {
    Ok(Json(svc::update_by_key(&s, auth.org_id, id, body).await?))
}

async fn thread(
    State(s): State<AppState>,
    auth: Authed<ConversationsRead>,
    ValidatedQuery(q): ValidatedQuery<ListMessagesQuery>,
    ConversationId(id): ConversationId,
) -> ApiResult<Json<MessageList>> {
    Ok(Json(messages::list(&s, auth.org_id, id, &q).await?))
}
