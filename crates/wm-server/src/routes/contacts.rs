//! `/contacts`: the contacts API.

use aide::OperationOutput;
use aide::axum::ApiRouter;
use aide::axum::routing::{get_with, post_with};
use wm_types::common::PhoneExistsErrorBody;

use crate::openapi::conflict;
use aide::generate::GenContext;
use aide::openapi::{Operation, Response, StatusCode as DocStatus};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use wm_types::PageQuery;
use wm_types::common::{Deleted, Page};
use wm_types::contacts::{
    BulkResult, BulkUpdateContacts, Contact, ContactList, CreateContact, CreateIdentity,
    CreateNote, Identity, ListContactsQuery, Note, TimelineEntry, TimelineQuery, UpdateContact,
};
use wm_types::messages::{ListMessagesQuery, MessageList};

use crate::error::ApiResult;
use crate::extract::{
    Authed, AuthedEither, ContactId, ContactsRead, ContactsWrite, ConversationsRead, NoBody,
    NoQuery, ValidatedJson, ValidatedQuery,
};
use crate::openapi;
use crate::reply::{self, Created, Json};
use crate::services::contacts as svc;
use crate::state::AppState;

const TAG: &str = "Contacts";

/// The contact routes.
pub fn router() -> ApiRouter<AppState> {
    ApiRouter::new()
        .api_route(
            "/contacts",
            get_with(list, |op| {
                op.tag(TAG).summary("List contacts with tabs and summary")
            })
            .post_with(create, |op| {
                conflict::<PhoneExistsErrorBody>(op.tag(TAG).summary("Create a contact"))
            }),
        )
        .api_route(
            "/contacts/bulk",
            post_with(bulk, |op| {
                op.tag(TAG)
                    .summary("Change the stage, tags or owner of up to 500 contacts")
            }),
        )
        .api_route(
            "/contacts/{id}",
            get_with(detail, |op| op.tag(TAG).summary("Get a contact"))
                .patch_with(update, |op| {
                    conflict::<PhoneExistsErrorBody>(op.tag(TAG).summary("Update a contact"))
                })
                .delete_with(remove, |op| {
                    op.tag(TAG).summary("Delete a contact without history")
                }),
        )
        .api_route(
            "/contacts/{id}/timeline",
            get_with(timeline, |op| op.tag(TAG).summary("A contact's timeline")),
        )
        .api_route(
            "/contacts/{id}/messages",
            get_with(messages, |op| {
                op.tag(TAG).summary(
                    "A contact's messages across every conversation and channel, newest first",
                )
            }),
        )
        .api_route(
            "/contacts/{id}/identities",
            post_with(add_identity, |op| {
                op.tag(TAG).summary("Link a channel identity")
            }),
        )
        .api_route(
            "/contacts/{id}/notes",
            get_with(notes, |op| op.tag(TAG).summary("A contact's notes"))
                .post_with(add_note, |op| op.tag(TAG).summary("Write a note")),
        )
}

async fn list(
    State(s): State<AppState>,
    auth: Authed<ContactsRead>,
    ValidatedQuery(q): ValidatedQuery<ListContactsQuery>,
) -> ApiResult<Json<ContactList>> {
    Ok(Json(svc::list(&s, auth.org_id, &q).await?))
}

async fn create(
    State(s): State<AppState>,
    auth: Authed<ContactsWrite>,
    _: NoQuery,
    ValidatedJson(body): ValidatedJson<CreateContact>,
) -> ApiResult<Created<Contact>> {
    Ok(Created(svc::create(&s, &auth, body).await?))
}

async fn bulk(
    State(s): State<AppState>,
    auth: Authed<ContactsWrite>,
    _: NoQuery,
    ValidatedJson(body): ValidatedJson<BulkUpdateContacts>,
) -> ApiResult<Created<BulkResult>> {
    Ok(Created(svc::bulk(&s, &auth, body).await?))
}

async fn detail(
    State(s): State<AppState>,
    auth: Authed<ContactsRead>,
    _: NoQuery,
    ContactId(id): ContactId,
) -> ApiResult<Json<Contact>> {
    Ok(Json(svc::get(&s, auth.org_id, id).await?))
}

async fn update(
    State(s): State<AppState>,
    auth: Authed<ContactsWrite>,
    _: NoQuery,
    ContactId(id): ContactId,
    ValidatedJson(body): ValidatedJson<UpdateContact>,
) -> ApiResult<Json<Contact>> {
    Ok(Json(svc::update(&s, &auth, id, body).await?))
}

async fn remove(
    State(s): State<AppState>,
    auth: Authed<ContactsWrite>,
    _: NoQuery,
    ContactId(id): ContactId,
    _: NoBody,
) -> ApiResult<Json<Deleted>> {
    svc::delete(&s, auth.org_id, id).await?;
    Ok(Json(Deleted { deleted: true }))
}

async fn timeline(
    State(s): State<AppState>,
    auth: Authed<ContactsRead>,
    ValidatedQuery(q): ValidatedQuery<TimelineQuery>,
    ContactId(id): ContactId,
) -> ApiResult<Json<Page<TimelineEntry>>> {
    Ok(Json(svc::timeline(&s, auth.org_id, id, q).await?))
}

async fn messages(
    State(s): State<AppState>,
    auth: AuthedEither<ContactsRead, ConversationsRead>,
    ValidatedQuery(q): ValidatedQuery<ListMessagesQuery>,
    ContactId(id): ContactId,
) -> ApiResult<Json<MessageList>> {
    Ok(Json(
        crate::services::messages::of_contact(&s, auth.org_id, id, &q).await?,
    ))
}

/// The identity link's answer: 201 when linked now, 200 when it already was.
struct Linked(StatusCode, Identity);

impl IntoResponse for Linked {
    fn into_response(self) -> axum::response::Response {
        (self.0, axum::Json(self.1)).into_response()
    }
}

impl OperationOutput for Linked {
    type Inner = Identity;

    fn inferred_responses(
        ctx: &mut GenContext,
        _: &mut Operation,
    ) -> Vec<(Option<DocStatus>, Response)> {
        let schema = ctx.schema.subschema_for::<Identity>();
        let again = openapi::json_response("Already linked to this contact", schema);
        vec![
            (Some(DocStatus::Code(201)), reply::success::<Identity>(ctx)),
            (Some(DocStatus::Code(200)), again),
        ]
    }
}

async fn add_identity(
    State(s): State<AppState>,
    auth: Authed<ContactsWrite>,
    _: NoQuery,
    ContactId(id): ContactId,
    ValidatedJson(body): ValidatedJson<CreateIdentity>,
) -> ApiResult<Linked> {
    let (status, identity) = svc::add_identity(&s, auth.org_id, id, body).await?;
    Ok(Linked(status, identity))
}

async fn notes(
    State(s): State<AppState>,
    auth: Authed<ContactsRead>,
    ValidatedQuery(q): ValidatedQuery<PageQuery>,
    ContactId(id): ContactId,
) -> ApiResult<Json<Page<Note>>> {
    Ok(Json(svc::notes(&s, auth.org_id, id, q).await?))
}

async fn add_note(
    State(s): State<AppState>,
    auth: Authed<ContactsWrite>,
    _: NoQuery,
    ContactId(id): ContactId,
    ValidatedJson(body): ValidatedJson<CreateNote>,
) -> ApiResult<Created<Note>> {
    Ok(Created(svc::add_note(&s, &auth, id, body).await?))
}
