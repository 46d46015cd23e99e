//! `/contacts`: the contacts API.

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use wm_types::PageQuery;
use wm_types::common::{Deleted, Page};
use wm_types::contacts::{
    BulkResult, BulkUpdateContacts, Contact, ContactList, CreateContact, CreateIdentity,
    CreateNote, Identity, ListContactsQuery, Note, TimelineEntry, TimelineQuery, UpdateContact,
};

use crate::error::ApiResult;
use crate::extract::{
    Authed, ContactId, ContactsRead, ContactsWrite, NoBody, NoQuery, ValidatedJson, ValidatedQuery,
};
use crate::reply::{Created, Json};
use crate::services::contacts as svc;
use crate::state::AppState;

/// The contact routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/contacts", get(list).post(create))
        .route("/contacts/bulk", post(bulk))
        .route("/contacts/{id}", get(detail).patch(update).delete(remove))
        .route("/contacts/{id}/timeline", get(timeline))
        .route("/contacts/{id}/identities", post(add_identity))
        .route("/contacts/{id}/notes", get(notes).post(add_note))
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

/// The identity link's answer: 201 when linked now, 200 when it already was.
struct Linked(StatusCode, Identity);

impl IntoResponse for Linked {
    fn into_response(self) -> axum::response::Response {
        (self.0, axum::Json(self.1)).into_response()
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
