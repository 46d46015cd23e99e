//! `/contacts`: the contacts API.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use wm_types::PageQuery;
use wm_types::common::{Deleted, Page};
use wm_types::contacts::{
    BulkResult, BulkUpdateContacts, Contact, ContactList, CreateContact, CreateIdentity,
    CreateNote, Identity, ListContactsQuery, Note, TimelineEntry, TimelineQuery, UpdateContact,
};

use crate::error::ApiResult;
use crate::extract::{
    Authed, ContactsRead, ContactsWrite, NoBody, NoQuery, ValidatedJson, ValidatedQuery, path_id,
};
use crate::services::contacts as svc;
use crate::state::AppState;

const WHAT: &str = "Contact";

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
) -> ApiResult<(StatusCode, Json<Contact>)> {
    Ok((
        StatusCode::CREATED,
        Json(svc::create(&s, &auth, body).await?),
    ))
}

async fn bulk(
    State(s): State<AppState>,
    auth: Authed<ContactsWrite>,
    _: NoQuery,
    ValidatedJson(body): ValidatedJson<BulkUpdateContacts>,
) -> ApiResult<(StatusCode, Json<BulkResult>)> {
    Ok((StatusCode::CREATED, Json(svc::bulk(&s, &auth, body).await?)))
}

async fn detail(
    State(s): State<AppState>,
    auth: Authed<ContactsRead>,
    Path(id): Path<String>,
    _: NoQuery,
) -> ApiResult<Json<Contact>> {
    Ok(Json(svc::get(&s, auth.org_id, path_id(&id, WHAT)?).await?))
}

async fn update(
    State(s): State<AppState>,
    auth: Authed<ContactsWrite>,
    Path(id): Path<String>,
    _: NoQuery,
    ValidatedJson(body): ValidatedJson<UpdateContact>,
) -> ApiResult<Json<Contact>> {
    Ok(Json(
        svc::update(&s, &auth, path_id(&id, WHAT)?, body).await?,
    ))
}

async fn remove(
    State(s): State<AppState>,
    auth: Authed<ContactsWrite>,
    Path(id): Path<String>,
    _: NoQuery,
    _: NoBody,
) -> ApiResult<Json<Deleted>> {
    svc::delete(&s, auth.org_id, path_id(&id, WHAT)?).await?;
    Ok(Json(Deleted { deleted: true }))
}

async fn timeline(
    State(s): State<AppState>,
    auth: Authed<ContactsRead>,
    Path(id): Path<String>,
    ValidatedQuery(q): ValidatedQuery<TimelineQuery>,
) -> ApiResult<Json<Page<TimelineEntry>>> {
    Ok(Json(
        svc::timeline(&s, auth.org_id, path_id(&id, WHAT)?, q).await?,
    ))
}

async fn add_identity(
    State(s): State<AppState>,
    auth: Authed<ContactsWrite>,
    Path(id): Path<String>,
    _: NoQuery,
    ValidatedJson(body): ValidatedJson<CreateIdentity>,
) -> ApiResult<(StatusCode, Json<Identity>)> {
    let (status, identity) = svc::add_identity(&s, auth.org_id, path_id(&id, WHAT)?, body).await?;
    Ok((status, Json(identity)))
}

async fn notes(
    State(s): State<AppState>,
    auth: Authed<ContactsRead>,
    Path(id): Path<String>,
    ValidatedQuery(q): ValidatedQuery<PageQuery>,
) -> ApiResult<Json<Page<Note>>> {
    Ok(Json(
        svc::notes(&s, auth.org_id, path_id(&id, WHAT)?, q).await?,
    ))
}

async fn add_note(
    State(s): State<AppState>,
    auth: Authed<ContactsWrite>,
    Path(id): Path<String>,
    _: NoQuery,
    ValidatedJson(body): ValidatedJson<CreateNote>,
) -> ApiResult<(StatusCode, Json<Note>)> {
    Ok((
        StatusCode::CREATED,
        Json(svc::add_note(&s, &auth, path_id(&id, WHAT)?, body).await?),
    ))
}
