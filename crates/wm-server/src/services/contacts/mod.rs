//! Contact use cases.

use std::collections::{HashMap, HashSet};

use axum::http::StatusCode;
use std::sync::Arc;

use sea_orm::{ColumnTrait, ConnectionTrait, PaginatorTrait, QueryFilter};
use uuid::Uuid;
use wm_core::contacts as rules;
use wm_core::phone::Phone;
use wm_core::tags::{merge_tags, normalize_tags};
use wm_types::common::{Page, PageMeta};
use wm_types::contacts::{
    AuthorRef, BulkResult, BulkUpdateContacts, ChannelRef, Contact, ContactList, CreateContact,
    CreateIdentity, CreateNote, Identity, IdentityRef, ListContactsQuery, Note, TimelineEntry,
    TimelineKind, TimelineQuery, UpdateContact,
};
use wm_types::enums::ChannelType;
use wm_types::events::{ContactEventData, EventKind};
use wm_types::{PageQuery, Timestamp};

use crate::auth::AuthContext;
use crate::cache::OrgLookups;
use crate::db::entities::contact;
use crate::db::{self, contacts::Shape};
use crate::error::{ApiError, ApiResult, is_unique_violation};
use crate::state::AppState;

const NOT_FOUND: &str = "Contact";

/// 400 unless the stage and the owner (when given) are the organisation's. The cached
/// lookups answer for ids they know; others are checked in the database.
async fn check_refs(
    conn: &impl ConnectionTrait,
    l: &OrgLookups,
    org: Uuid,
    stage: Option<Uuid>,
    owner: Option<Uuid>,
) -> ApiResult<()> {
    let mut errors = Vec::new();
    if let Some(id) = stage
        && l.stage(id).is_none()
        && db::lookups::stage(conn, org, id).await?.is_none()
    {
        errors.push("lifecycleStageId must be a lifecycle stage of this organization".to_owned());
    }
    if let Some(id) = owner
        && !l.users.contains_key(&id)
        && db::lookups::user(conn, org, id).await?.is_none()
    {
        errors.push("ownerId must be a user of this organization".to_owned());
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(ApiError::Validation(errors))
    }
}

/// The organisation's lookups, knowing the stage and owner of every given row.
async fn lookups_for(
    state: &AppState,
    org: Uuid,
    rows: &[&contact::Model],
) -> ApiResult<Arc<OrgLookups>> {
    let stages: Vec<Uuid> = rows.iter().filter_map(|r| r.lifecycle_stage_id).collect();
    let users: Vec<Uuid> = rows.iter().filter_map(|r| r.owner_id).collect();
    Ok(state
        .lookups
        .covering(&state.db.conn, org, stages, users)
        .await?)
}

fn phone_exists(holder: &contact::Model) -> ApiError {
    ApiError::business(
        StatusCode::CONFLICT,
        Some("CONTACT_PHONE_EXISTS"),
        "A contact with this phone already exists.",
    )
    .with("contactId", holder.id.to_string())
    .with("fullName", holder.full_name.clone())
}

/// The contact holding a phone: as its primary phone or as its MESSAGING_APP_A identity.
async fn phone_holder(
    conn: &impl ConnectionTrait,
    org: Uuid,
    phone: &Phone,
) -> ApiResult<Option<contact::Model>> {
    if let Some(holder) = db::contacts::find_by_phone(conn, org, phone).await? {
        return Ok(Some(holder));
    }
    match db::identities::find(conn, org, ChannelType::MessagingAppA, phone.digits()).await? {
        Some(ident) => Ok(db::contacts::find(conn, org, ident.contact_id).await?),
        None => Ok(None),
    }
}

/// A write lost to a unique index: 409 `CONTACT_PHONE_EXISTS` naming the holder. Called
/// after the failed transaction is dropped (PostgreSQL aborts it), so it reads on the pool.
async fn phone_conflict(state: &AppState, org: Uuid, phone: Option<&Phone>) -> ApiError {
    let Some(phone) = phone else {
        return ApiError::conflict("The contact conflicts with an existing one.");
    };
    match phone_holder(&state.db.conn, org, phone).await {
        Ok(Some(holder)) => phone_exists(&holder),
        Ok(None) => ApiError::conflict("The contact conflicts with an existing one."),
        Err(e) => e,
    }
}

fn event_data(m: &contact::Model, l: &OrgLookups) -> ContactEventData {
    ContactEventData {
        organization_id: m.organization_id,
        contact_id: m.id,
        full_name: m.full_name.clone(),
        primary_phone: m.primary_phone.clone(),
        primary_email: m.primary_email.clone(),
        lifecycle_stage: l.stage_name(m.lifecycle_stage_id),
        changed_fields: None,
        previous_stage: None,
    }
}

/// One contact's change, as `record_change` needs it.
struct Change<'a> {
    before: &'a contact::Model,
    after: &'a contact::Model,
    changed: &'a [&'static str],
    /// Made by `/contacts/bulk`.
    bulk: bool,
    /// Whether the change may start automations (not when an automation made it).
    triggers: bool,
}

async fn record_change(
    conn: &impl ConnectionTrait,
    auth: &AuthContext,
    change: Change<'_>,
    l: &OrgLookups,
    now: i64,
) -> ApiResult<()> {
    let Change {
        before,
        after,
        changed,
        bulk,
        triggers,
    } = change;
    if changed.is_empty() {
        return Ok(());
    }
    let org = after.organization_id;
    let mut data = event_data(after, l);
    data.changed_fields = Some(changed.iter().map(|s| (*s).to_owned()).collect());
    if before.lifecycle_stage_id != after.lifecycle_stage_id {
        let from = l.stage_name(before.lifecycle_stage_id);
        let to = l.stage_name(after.lifecycle_stage_id);
        let to_name = to.clone();
        let entry = TimelineKind::Stage {
            by: auth.user_name.clone(),
            from: from.clone(),
            to,
            bulk,
        };
        db::timeline::add(conn, org, after.id, now, &entry).await?;
        if triggers && let Some(stage) = &to_name {
            crate::services::automations::on_stage_entered(conn, org, after.id, stage, now).await?;
        }
        let mut stage_data = data.clone();
        stage_data.previous_stage = Some(from);
        db::outbox::push(conn, org, EventKind::ContactStageChanged, &stage_data, now).await?;
    }
    db::outbox::push(conn, org, EventKind::ContactUpdated, &data, now).await?;
    Ok(())
}

async fn detail(state: &AppState, org: Uuid, row: &contact::Model) -> ApiResult<Contact> {
    let l = lookups_for(state, org, &[row]).await?;
    db::contacts::views(
        &state.db.conn,
        org,
        std::slice::from_ref(row),
        Shape::Detail,
        &l,
    )
    .await?
    .pop()
    .ok_or_else(|| ApiError::not_found(NOT_FOUND))
}

async fn load(conn: &impl ConnectionTrait, org: Uuid, id: Uuid) -> ApiResult<contact::Model> {
    db::contacts::find(conn, org, id)
        .await?
        .ok_or_else(|| ApiError::not_found(NOT_FOUND))
}

/// `GET /contacts`.
pub async fn list(state: &AppState, org: Uuid, q: &ListContactsQuery) -> ApiResult<ContactList> {
    let conn = &state.db.conn;
    let l = state.lookups.get(conn, org).await?;
    let mut list = db::contacts::list(conn, org, q, state.now_ms(), &l).await?;
    if !l.knows(
        list.data.iter().filter_map(|c| c.lifecycle_stage_id),
        list.data.iter().filter_map(|c| c.owner_id),
    ) {
        // A stage or user newer than the cached copy: read again with fresh lookups.
        let l = state.lookups.reload(conn, org).await?;
        list = db::contacts::list(conn, org, q, state.now_ms(), &l).await?;
    }
    Ok(list)
}

/// `GET /contacts/{id}`.
pub async fn get(state: &AppState, org: Uuid, id: Uuid) -> ApiResult<Contact> {
    let row = load(&state.db.conn, org, id).await?;
    detail(state, org, &row).await
}

/// `POST /contacts`: the contact, its phone identity, its first note, a `created` timeline
/// entry and `contact.created`, all in one transaction. The unique indexes on the phone and
/// on identities decide conflicts (no read-then-write race); the answer is built from what
/// was written.
pub async fn create(
    state: &AppState,
    auth: &AuthContext,
    body: CreateContact,
) -> ApiResult<Contact> {
    let org = auth.org_id;
    let note = body
        .note
        .clone()
        .map(|n| n.trim().to_owned())
        .filter(|n| !n.is_empty());
    let fields = rules::new_contact(body).map_err(ApiError::Validation)?;
    let now = state.now_ms();
    let l = state
        .lookups
        .covering(
            &state.db.conn,
            org,
            fields.lifecycle_stage_id,
            fields.owner_id,
        )
        .await?;
    let phone = fields.primary_phone.as_ref();
    let txn = state.db.write().await?;
    check_refs(&*txn, &l, org, fields.lifecycle_stage_id, fields.owner_id).await?;
    // The phone's MESSAGING_APP_A identity is mirrored on the row, so it is planned first.
    let planned = phone.zip(l.active_channel(ChannelType::MessagingAppA));
    let identities: Vec<IdentityRef> = planned
        .map(|(p, _)| IdentityRef {
            id: Uuid::now_v7(),
            channel_type: ChannelType::MessagingAppA,
            external_id: p.digits().to_owned(),
        })
        .into_iter()
        .collect();
    let id = Uuid::now_v7();
    let row = match db::contacts::insert(&*txn, id, org, &fields, &identities, now).await {
        Ok(row) => row,
        Err(e) if is_unique_violation(&e) => {
            drop(txn);
            return Err(phone_conflict(state, org, phone).await);
        }
        Err(e) => return Err(e.into()),
    };
    if let (Some((_, channel)), Some(ident)) = (planned, identities.first()) {
        let kind = ChannelType::MessagingAppA;
        let inserted = db::identities::insert(
            &*txn,
            ident.id,
            org,
            id,
            channel.id,
            kind,
            &ident.external_id,
            now,
        )
        .await;
        match inserted {
            Ok(_) => {}
            Err(e) if is_unique_violation(&e) => {
                drop(txn);
                return Err(phone_conflict(state, org, phone).await);
            }
            Err(e) => return Err(e.into()),
        }
    }
    db::timeline::add(
        &*txn,
        org,
        row.id,
        now,
        &TimelineKind::Created {
            source: fields.source,
        },
    )
    .await?;
    if let Some(body) = note {
        db::notes::insert(&*txn, org, row.id, auth.user_id, &body, now).await?;
        let entry = TimelineKind::Note {
            author: auth.user_name.clone(),
            body,
        };
        db::timeline::add(&*txn, org, row.id, now, &entry).await?;
    }
    db::outbox::push(
        &*txn,
        org,
        EventKind::ContactCreated,
        &event_data(&row, &l),
        now,
    )
    .await?;
    txn.commit().await?;
    Ok(db::contacts::view(
        &row,
        identities,
        Vec::new(),
        &l,
        Shape::Detail,
    ))
}

/// `PATCH /contacts/{id}`: only sent fields change; nothing is recorded when nothing changed.
pub async fn update(
    state: &AppState,
    auth: &AuthContext,
    id: Uuid,
    patch: UpdateContact,
) -> ApiResult<Contact> {
    let org = auth.org_id;
    let now = state.now_ms();
    let l = state.lookups.get(&state.db.conn, org).await?;
    let txn = state.db.write().await?;
    let before = load(&*txn, org, id).await?;
    let (fields, changed) = rules::apply_update(&db::contacts::fields_of(&before), patch)
        .map_err(ApiError::Validation)?;
    if changed.is_empty() {
        drop(txn);
        return detail(state, org, &before).await;
    }
    check_refs(
        &*txn,
        &l,
        org,
        fields
            .lifecycle_stage_id
            .filter(|s| Some(*s) != before.lifecycle_stage_id),
        fields.owner_id.filter(|o| Some(*o) != before.owner_id),
    )
    .await?;
    let new_phone = fields
        .primary_phone
        .as_ref()
        .filter(|p| before.primary_phone.as_deref() != Some(p.as_str()));
    let mut add_identity = None;
    if let Some(phone) = new_phone {
        match phone_holder(&*txn, org, phone).await? {
            Some(holder) if holder.id != id => return Err(phone_exists(&holder)),
            Some(_) => {}
            None => {
                add_identity = l
                    .active_channel(ChannelType::MessagingAppA)
                    .map(|c| (c.id, phone))
            }
        }
    }
    let after = match db::contacts::save(&*txn, &before, &fields, now).await {
        Ok(after) => after,
        Err(e) if is_unique_violation(&e) => {
            drop(txn);
            return Err(phone_conflict(state, org, new_phone).await);
        }
        Err(e) => return Err(e.into()),
    };
    if let Some((channel, phone)) = add_identity {
        let kind = ChannelType::MessagingAppA;
        db::identities::insert(
            &*txn,
            Uuid::now_v7(),
            org,
            id,
            channel,
            kind,
            phone.digits(),
            now,
        )
        .await?;
        db::contacts::refresh_identities(&*txn, org, id).await?;
    }
    // Inside the write transaction: a reload must use it (an in-memory SQLite pool has one
    // connection, which the transaction holds).
    let l = state
        .lookups
        .covering(
            &*txn,
            org,
            [before.lifecycle_stage_id, after.lifecycle_stage_id]
                .into_iter()
                .flatten(),
            after.owner_id,
        )
        .await?;
    let change = Change {
        before: &before,
        after: &after,
        changed: &changed,
        bulk: false,
        triggers: true,
    };
    record_change(&*txn, auth, change, &l, now).await?;
    let after = if add_identity.is_some() {
        load(&*txn, org, id).await?
    } else {
        after
    };
    txn.commit().await?;
    detail(state, org, &after).await
}

/// `POST /contacts/bulk`: moves stage, adds tags and sets or removes the owner of up to 500
/// contacts in one transaction; ids of other organisations are counted as skipped.
pub async fn bulk(
    state: &AppState,
    auth: &AuthContext,
    body: BulkUpdateContacts,
) -> ApiResult<BulkResult> {
    if body.lifecycle_stage_id.is_none() && body.add_tags.is_none() && body.owner_id.is_none() {
        return Err(ApiError::invalid(
            "at least one of lifecycleStageId, addTags or ownerId must be given",
        ));
    }
    let add_tags = normalize_tags("addTags", body.add_tags.as_deref().unwrap_or_default())
        .map_err(ApiError::Validation)?;
    let org = auth.org_id;
    let now = state.now_ms();
    let ids: Vec<Uuid> = body
        .ids
        .iter()
        .copied()
        .collect::<HashSet<_>>()
        .into_iter()
        .collect();
    let l = state
        .lookups
        .covering(
            &state.db.conn,
            org,
            body.lifecycle_stage_id,
            body.owner_id.flatten(),
        )
        .await?;
    let txn = state.db.write().await?;
    check_refs(
        &*txn,
        &l,
        org,
        body.lifecycle_stage_id,
        body.owner_id.flatten(),
    )
    .await?;
    let rows = db::contacts::find_many(&*txn, org, ids.clone()).await?;
    let mut too_many_tags = false;
    for before in &rows {
        let current = db::contacts::fields_of(before);
        let mut fields = current.clone();
        if let Some(stage) = body.lifecycle_stage_id {
            fields.lifecycle_stage_id = Some(stage);
        }
        if let Some(owner) = body.owner_id {
            fields.owner_id = owner;
        }
        fields.tags = merge_tags(&current.tags, &add_tags);
        if fields.tags.len() > rules::MAX_TAGS {
            too_many_tags = true;
            break;
        }
        let changed = rules::changed_fields(&current, &fields);
        if changed.is_empty() {
            continue;
        }
        let after = db::contacts::save(&*txn, before, &fields, now).await?;
        let change = Change {
            before,
            after: &after,
            changed: &changed,
            bulk: true,
            triggers: true,
        };
        record_change(&*txn, auth, change, &l, now).await?;
    }
    if too_many_tags {
        return Err(ApiError::invalid(format!(
            "addTags would give a contact more than {} tags",
            rules::MAX_TAGS
        )));
    }
    txn.commit().await?;
    Ok(BulkResult {
        updated: rows.len() as u64,
        skipped: (ids.len() - rows.len()) as u64,
    })
}

/// `DELETE /contacts/{id}`: only a contact without history (open deals, conversations,
/// campaigns) may go; it takes its notes, identities and timeline with it.
pub async fn delete(state: &AppState, org: Uuid, id: Uuid) -> ApiResult<()> {
    let txn = state.db.write().await?;
    let has_campaigns = crate::db::tenant::in_org::<crate::db::entities::recipient::Entity>(org)
        .filter(crate::db::entities::recipient::Column::ContactId.eq(id))
        .count(&*txn)
        .await?
        > 0;
    let has_conversations =
        crate::db::tenant::in_org::<crate::db::entities::conversation::Entity>(org)
            .filter(crate::db::entities::conversation::Column::ContactId.eq(id))
            .count(&*txn)
            .await?
            > 0;
    if load(&*txn, org, id).await?.open_deals > 0 || has_campaigns || has_conversations {
        return Err(ApiError::business(
            StatusCode::CONFLICT,
            Some("CONTACT_HAS_HISTORY"),
            "The contact has history (conversations, campaigns or deals); set optedOut instead.",
        ));
    }
    db::contacts::delete(&*txn, org, id).await?;
    txn.commit().await?;
    Ok(())
}

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
    load(&*txn, org, id).await?;
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
        id,
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
    db::contacts::refresh_identities(&*txn, org, id).await?;
    txn.commit().await?;
    Ok((StatusCode::CREATED, view(created)))
}

fn note_view(m: crate::db::entities::note::Model, author: &str) -> Note {
    Note {
        id: m.id,
        contact_id: m.contact_id,
        author_id: m.author_id,
        author: AuthorRef {
            id: m.author_id,
            full_name: author.to_owned(),
        },
        body: m.body,
        created_at: Timestamp::from_millis(m.created_at),
    }
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
    txn.commit().await?;
    Ok(note_view(note, &auth.user_name))
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
    let mut authors: Vec<Uuid> = rows.iter().map(|n| n.author_id).collect();
    authors.sort_unstable();
    authors.dedup();
    let names: HashMap<Uuid, String> = db::lookups::users_by_id(conn, org, authors)
        .await?
        .into_iter()
        .map(|u| (u.id, u.full_name))
        .collect();
    let data = rows
        .into_iter()
        .map(|n| {
            let name = names.get(&n.author_id).cloned().unwrap_or_default();
            note_view(n, &name)
        })
        .collect();
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

/// Applies new fields to a contact on behalf of an automation (`by` its name): records the
/// change like a PATCH would, without starting other automations (no loops).
pub async fn apply_automation_change(
    conn: &impl ConnectionTrait,
    state: &AppState,
    before: &contact::Model,
    fields: &wm_core::contacts::ContactFields,
    by: &str,
    now: i64,
) -> ApiResult<()> {
    let changed = rules::changed_fields(&db::contacts::fields_of(before), fields);
    if changed.is_empty() {
        return Ok(());
    }
    let after = db::contacts::save(conn, before, fields, now).await?;
    let org = before.organization_id;
    let l = state
        .lookups
        .covering(
            conn,
            org,
            [before.lifecycle_stage_id, after.lifecycle_stage_id]
                .into_iter()
                .flatten(),
            after.owner_id,
        )
        .await?;
    let actor = AuthContext {
        key_id: Uuid::nil(),
        org_id: org,
        user_id: Uuid::nil(),
        user_name: by.to_owned(),
        scopes: Vec::new(),
        expires_at: None,
    };
    let change = Change {
        before,
        after: &after,
        changed: &changed,
        bulk: false,
        triggers: false,
    };
    record_change(conn, &actor, change, &l, now).await
}
