//! A contact's channel identities, notes and timeline.

use axum::http::StatusCode;
use uuid::Uuid;
use wm_types::PageQuery;
use wm_types::common::{Page, PageMeta};
use wm_types::contacts::{
    ChannelRef, CreateIdentity, CreateNote, Identity, Note, TimelineEntry, TimelineKind,
    TimelineQuery,
};

use super::rows::load;
use crate::db;
use crate::error::{ApiError, ApiResult, is_unique_violation};
use crate::keys::AuthContext;
use crate::state::AppState;
use crate::views::notes as note_views;
use wm_core::contacts as rules;

/// `POST /contacts/{id}/identities`: 201 when linked, 200 when the contact already had it,
/// 409 when another contact has it.
pub async fn add_identity(
    state: &AppState,
    org: Uuid,
    id: Uuid,
    body: CreateIdentity,
) -> ApiResult<(StatusCode, Identity)> {
    let now = state.now_ms();
    let txn = state.db.write().await?;
    let contact = load(&*txn, org, id).await?;
    let kind = body.channel_type;
    let Some(channel) = db::lookups::active_channel(&*txn, org, kind).await? else {
        return Err(ApiError::invalid(format!(
            "channelType {kind} is not active in this organization"
        )));
    };
    let external_id =
        rules::normalize_external_id(kind, &body.external_id).map_err(ApiError::invalid)?;
    let view = |m: crate::db::entities::identity::Model| Identity {
        id: m.id,
        contact_id: m.contact_id,
        channel_id: m.channel_id,
        channel: ChannelRef {
            id: m.channel_id,
            channel_type: kind,
        },
        external_id: m.external_id,
    };
    if let Some(existing) = db::identities::find(&*txn, org, kind, &external_id).await? {
        return if existing.contact_id == id {
            Ok((StatusCode::OK, view(existing)))
        } else {
            Err(ApiError::conflict(
                "This channel identity already belongs to another contact.",
            ))
        };
    }
    let created = match db::identities::insert(
        &*txn,
        Uuid::now_v7(),
        org,
        &contact,
        channel.id,
        kind,
        &external_id,
        now,
    )
    .await
    {
        Ok(m) => m,
        Err(e) if is_unique_violation(&e) => {
            return Err(ApiError::conflict(
                "This channel identity already belongs to another contact.",
            ));
        }
        Err(e) => return Err(e.into()),
    };
    db::identities::refresh_mirror(&*txn, org, id).await?;
    txn.commit().await?;
    Ok((StatusCode::CREATED, view(created)))
}

/// `POST /contacts/{id}/notes`: authored by the key's user; also a timeline entry.
pub async fn add_note(
    state: &AppState,
    auth: &AuthContext,
    id: Uuid,
    body: CreateNote,
) -> ApiResult<Note> {
    let org = auth.org_id;
    let now = state.now_ms();
    let txn = state.db.write().await?;
    load(&*txn, org, id).await?;
    let text = body.body.trim().to_owned();
    let note = db::notes::insert(&*txn, org, id, auth.user_id, &text, now).await?;
    let entry = TimelineKind::Note {
        author: auth.user_name.clone(),
        body: text,
    };
    db::timeline::add(&*txn, org, id, now, &entry).await?;
    let answer = note_views::with_author(note, &auth.user_name);
    crate::idempotency::seal(&txn, axum::http::StatusCode::CREATED, &answer).await?;
    txn.commit().await?;
    Ok(answer)
}

/// `GET /contacts/{id}/notes`, newest first.
pub async fn notes(
    state: &AppState,
    org: Uuid,
    id: Uuid,
    page: PageQuery,
) -> ApiResult<Page<Note>> {
    let conn = &state.db.conn;
    load(conn, org, id).await?;
    let (rows, total) = db::notes::page(conn, org, id, page.page, page.page_size).await?;
    let data = note_views::load(conn, org, rows).await?;
    Ok(Page {
        data,
        meta: PageMeta::new(page.page, page.page_size, total),
    })
}

/// `GET /contacts/{id}/timeline`, newest first, with the `type` filter.
pub async fn timeline(
    state: &AppState,
    org: Uuid,
    id: Uuid,
    q: TimelineQuery,
) -> ApiResult<Page<TimelineEntry>> {
    let conn = &state.db.conn;
    load(conn, org, id).await?;
    let (page, page_size) = (q.page.unwrap_or(1), q.page_size.unwrap_or(20));
    let (data, total) = db::timeline::page(
        conn,
        org,
        id,
        q.entry_type.unwrap_or_default(),
        page,
        page_size,
    )
    .await?;
    Ok(Page {
        data,
        meta: PageMeta::new(page, page_size, total),
    })
}
