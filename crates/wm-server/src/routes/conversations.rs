//! `/conversations`: the inbox (`conversations:read`), its threads, and what an agent does
//! (`conversations:write`): status and assignee changes, replies, read marks.

use aide::axum::ApiRouter;
use aide::axum::routing::{get_with, post_with};
use axum::extract::State;
use wm_types::conversations::{
    Conversation, ConversationList, ListConversationsQuery, UpdateConversation,
};
use wm_types::messages::{ListMessagesQuery, MarkedRead, Message, MessageList, SendMessage};

use crate::error::ApiResult;
use crate::extract::{
    Authed, ConversationId, ConversationsRead, ConversationsWrite, NoBody, NoQuery, ValidatedJson,
    ValidatedQuery,
};
use crate::reply::{Created, Json};
use crate::services::conversations as svc;
use crate::services::{messages, replies};
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
            })
            .post_with(reply, |op| {
                op.tag(TAG).summary(
                    "Reply: text, media, buttons or a template (outside the 24-hour window only a template)",
                )
            }),
        )
        .api_route(
            "/conversations/{id}/read",
            post_with(read, |op| {
                op.tag(TAG)
                    .summary("Mark the customer's messages read at the platform")
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

async fn reply(
    State(s): State<AppState>,
    auth: Authed<ConversationsWrite>,
    _: NoQuery,
    ConversationId(id): ConversationId,
    ValidatedJson(body): ValidatedJson<SendMessage>,
) -> ApiResult<Created<Message>> {
    Ok(Created(replies::send(&s, &auth, id, body).await?))
}

async fn read(
    State(s): State<AppState>,
    auth: Authed<ConversationsWrite>,
    _: NoQuery,
    ConversationId(id): ConversationId,
    _: NoBody,
) -> ApiResult<Json<MarkedRead>> {
    Ok(Json(replies::read::mark(&s, auth.org_id, id).await?))
}
