//! A contact row: read, its references and phone checked, and a change recorded with its
//! timeline entry and event.

use crate::db;
use crate::db::entities::contact;
use crate::db::lookups::OrgLookups;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use crate::views::{self, contacts::Shape};
use axum::http::StatusCode;
use sea_orm::ConnectionTrait;
use std::collections::HashMap;
use std::sync::Arc;
use uuid::Uuid;
use wm_core::phone::Phone;
use wm_types::contacts::{Contact, TimelineKind};
use wm_types::enums::ChannelType;
use wm_types::enums::ErrorCode;
use wm_types::events::{ContactEventData, EventKind};

pub(super) const NOT_FOUND: &str = "Contact";

/// The message of a stage that is not the organisation's.
pub const STAGE_NOT_ORGS: &str = "lifecycleStageId must be a lifecycle stage of this organization";

/// The message of an owner who is not the organisation's user.
pub const OWNER_NOT_ORGS: &str = "ownerId must be a user of this organization";

/// 400 unless the stage and the owner (when given) are the organisation's. The cached
/// lookups answer for ids they know; others are checked in the database.
pub(super) async fn check_refs(
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
        errors.push(STAGE_NOT_ORGS.to_owned());
    }
    if let Some(id) = owner
        && !l.users.contains_key(&id)
        && db::lookups::user(conn, org, id).await?.is_none()
    {
        errors.push(OWNER_NOT_ORGS.to_owned());
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(ApiError::Validation(errors))
    }
}

/// The organisation's lookups, knowing the stage and owner of every given row.
pub(super) async fn lookups_for(
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

pub(super) fn phone_exists(holder: &contact::Model) -> ApiError {
    ApiError::business(
        StatusCode::CONFLICT,
        Some(ErrorCode::ContactPhoneExists),
        "A contact with this phone already exists.",
    )
    .with("contactId", holder.id.to_string())
    .with("fullName", holder.full_name.clone())
}

/// The contact holding a phone: as its primary phone or as its MESSAGING_APP_A identity.
pub(super) async fn phone_holder(
    conn: &impl ConnectionTrait,
    org: Uuid,
    phone: &Phone,
) -> ApiResult<Option<contact::Model>> {
    Ok(phone_holders(conn, org, &[phone])
        .await?
        .remove(phone.as_str()))
}

/// The contacts holding any of `phones` (as primary phone or MESSAGING_APP_A identity),
/// by phone (its `as_str`), in three queries whatever their number (an import chunk's).
pub async fn phone_holders(
    conn: &impl ConnectionTrait,
    org: Uuid,
    phones: &[&Phone],
) -> ApiResult<HashMap<String, contact::Model>> {
    let mut out = HashMap::new();
    if phones.is_empty() {
        return Ok(out);
    }
    let stored: Vec<&str> = phones.iter().map(|p| p.as_str()).collect();
    let by_phone = db::contacts::with_phones(conn, org, &stored).await?;
    for c in by_phone {
        if let Some(p) = c.primary_phone.clone() {
            out.insert(p, c);
        }
    }
    let phone_of: HashMap<&str, &str> = phones
        .iter()
        .filter(|p| !out.contains_key(p.as_str()))
        .map(|p| (p.digits(), p.as_str()))
        .collect();
    if phone_of.is_empty() {
        return Ok(out);
    }
    let digits: Vec<&str> = phone_of.keys().copied().collect();
    let idents =
        db::identities::with_external_ids(conn, org, ChannelType::MessagingAppA, &digits).await?;
    let holders =
        db::contacts::find_many(conn, org, idents.iter().map(|i| i.contact_id).collect()).await?;
    for i in idents {
        if let (Some(phone), Some(holder)) = (
            phone_of.get(i.external_id.as_str()),
            holders.iter().find(|h| h.id == i.contact_id),
        ) {
            out.insert((*phone).to_owned(), holder.clone());
        }
    }
    Ok(out)
}

/// A write lost to a unique index: 409 `CONTACT_PHONE_EXISTS` naming the holder. Called
/// after the failed transaction is dropped (PostgreSQL aborts it), so it reads on the pool.
pub(super) async fn phone_conflict(state: &AppState, org: Uuid, phone: Option<&Phone>) -> ApiError {
    let Some(phone) = phone else {
        return ApiError::conflict("The contact conflicts with an existing one.");
    };
    match phone_holder(&state.db.conn, org, phone).await {
        Ok(Some(holder)) => phone_exists(&holder),
        Ok(None) => ApiError::conflict("The contact conflicts with an existing one."),
        Err(e) => e,
    }
}

pub(super) fn event_data(m: &contact::Model, l: &OrgLookups) -> ContactEventData {
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
pub(super) struct Change<'a> {
    pub(super) before: &'a contact::Model,
    pub(super) after: &'a contact::Model,
    pub(super) changed: &'a [&'static str],
    /// Made by `/contacts/bulk`.
    pub(super) bulk: bool,
    /// Whether the change may start automations (not when an automation made it).
    pub(super) triggers: bool,
}

/// Records a change made by `by` (a user's or an automation's name): `contact.updated`,
/// and on a stage change its timeline entry, `contact.stage_changed` and the automations
/// the new stage starts.
pub(super) async fn record_change(
    conn: &impl ConnectionTrait,
    by: &str,
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
            by: by.to_owned(),
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

/// [`record_change`] for one saved contact, with lookups that know the stages and owner
/// involved. Called inside the write transaction, so a reload uses it (an in-memory SQLite
/// pool has one connection, which the transaction holds).
pub(super) async fn record_saved(
    conn: &impl ConnectionTrait,
    state: &AppState,
    by: &str,
    change: Change<'_>,
    now: i64,
) -> ApiResult<()> {
    let (before, after) = (change.before, change.after);
    let l = state
        .lookups
        .covering(
            conn,
            after.organization_id,
            [before.lifecycle_stage_id, after.lifecycle_stage_id]
                .into_iter()
                .flatten(),
            after.owner_id,
        )
        .await?;
    record_change(conn, by, change, &l, now).await
}

pub(super) async fn detail(
    state: &AppState,
    org: Uuid,
    row: &contact::Model,
) -> ApiResult<Contact> {
    let l = lookups_for(state, org, &[row]).await?;
    views::contacts::load(
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

pub(super) async fn load(
    conn: &impl ConnectionTrait,
    org: Uuid,
    id: Uuid,
) -> ApiResult<contact::Model> {
    db::contacts::find(conn, org, id)
        .await?
        .ok_or_else(|| ApiError::not_found(NOT_FOUND))
}
