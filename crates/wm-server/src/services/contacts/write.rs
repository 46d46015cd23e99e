//! Creating and changing contacts: the one writer behind `POST /contacts`, imports and
//! inbound messages, and the one change path behind `PATCH /contacts/{id}` and import
//! updates.

use sea_orm::ConnectionTrait;
use uuid::Uuid;
use wm_core::contacts::{self as rules, ContactFields};
use wm_types::contacts::{Contact, CreateContact, IdentityRef, TimelineKind, UpdateContact};
use wm_types::enums::ChannelType;
use wm_types::events::EventKind;

use super::rows::{
    Change, check_refs, detail, event_data, load, phone_conflict, phone_exists, phone_holder,
    record_saved,
};
use crate::db::entities::{contact, identity};
use crate::db::lookups::OrgLookups;
use crate::db::{self, contacts::NewRow};
use crate::error::{ApiError, ApiResult};
use crate::keys::AuthContext;
use crate::state::AppState;

/// A contact about to be created: its normalised fields and its first note.
#[derive(Debug, Clone)]
pub struct Planned {
    /// What `rules::new_contact` made of the body.
    pub fields: ContactFields,
    /// The first note, trimmed; none when blank.
    pub note: Option<String>,
}

impl Planned {
    /// Applies the create rules to a validated body.
    pub fn from_body(body: CreateContact) -> Result<Planned, Vec<String>> {
        let note = body
            .note
            .as_deref()
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(str::to_owned);
        Ok(Planned {
            fields: rules::new_contact(body)?,
            note,
        })
    }
}

/// Who writes: notes and timeline entries are theirs.
#[derive(Debug, Clone, Copy)]
pub struct Author<'a> {
    /// The user's id.
    pub user_id: Uuid,
    /// The user's name.
    pub user_name: &'a str,
}

impl<'a> From<&'a AuthContext> for Author<'a> {
    fn from(a: &'a AuthContext) -> Self {
        Author {
            user_id: a.user_id,
            user_name: &a.user_name,
        }
    }
}

/// Creates contacts in the caller's transaction: the rows and their tags, each phone's
/// MESSAGING_APP_A identity when that channel is active, a `created` timeline entry, the
/// first note with its entry, and `contact.created` — one multi-row statement per table,
/// whether one contact is written or a thousand. The stages and owners must have been
/// checked. The unique indexes on phones and identities still decide: a taken phone fails
/// the write with a unique violation, which the caller maps.
pub async fn write_new(
    conn: &impl ConnectionTrait,
    org: Uuid,
    author: Author<'_>,
    items: &[Planned],
    l: &OrgLookups,
    now: i64,
) -> Result<Vec<(contact::Model, Vec<IdentityRef>)>, sea_orm::DbErr> {
    let channel = l.active_channel(ChannelType::MessagingAppA);
    let planned: Vec<(Uuid, Vec<IdentityRef>)> = items
        .iter()
        .map(|item| {
            let identities = item
                .fields
                .primary_phone
                .as_ref()
                .zip(channel)
                .map(|(p, _)| IdentityRef {
                    id: Uuid::now_v7(),
                    channel_type: ChannelType::MessagingAppA,
                    external_id: p.digits().to_owned(),
                    username: None,
                    scoped_id: None,
                })
                .into_iter()
                .collect();
            (Uuid::now_v7(), identities)
        })
        .collect();
    let rows: Vec<NewRow<'_>> = items
        .iter()
        .zip(&planned)
        .map(|(item, (id, identities))| NewRow {
            id: *id,
            fields: &item.fields,
            identities,
        })
        .collect();
    let models = db::contacts::insert_many(conn, org, &rows, now).await?;
    if let Some(channel) = channel {
        let identities: Vec<identity::Model> = planned
            .iter()
            .zip(&models)
            .flat_map(|((_, refs), contact)| {
                let mirror = db::contacts::Mirror::of(contact);
                refs.iter().map(move |r| identity::Model {
                    id: r.id,
                    organization_id: org,
                    contact_id: contact.id,
                    channel_id: channel.id,
                    channel_type: r.channel_type,
                    external_id: r.external_id.clone(),
                    created_at: now,
                    contact_created_at: mirror.created_at,
                    contact_stage_id: mirror.stage,
                    contact_consent: mirror.consent,
                    username: None,
                    parent_id: None,
                    profile_due_at: None,
                    profile_checked_at: None,
                    profile_attempts: 0,
                })
            })
            .collect();
        db::identities::insert_many(conn, identities).await?;
    }
    let created: Vec<TimelineKind> = items
        .iter()
        .map(|item| TimelineKind::Created {
            source: item.fields.source,
        })
        .collect();
    let notes: Vec<(Uuid, TimelineKind)> = items
        .iter()
        .zip(&planned)
        .filter_map(|(item, (id, _))| {
            item.note.as_ref().map(|body| {
                let entry = TimelineKind::Note {
                    author: author.user_name.to_owned(),
                    body: body.clone(),
                };
                (*id, entry)
            })
        })
        .collect();
    let entries: Vec<(Uuid, &TimelineKind)> = planned
        .iter()
        .map(|(id, _)| *id)
        .zip(&created)
        .chain(notes.iter().map(|(id, entry)| (*id, entry)))
        .collect();
    db::timeline::add_many(conn, org, now, &entries).await?;
    let note_rows: Vec<(Uuid, &str)> = items
        .iter()
        .zip(&planned)
        .filter_map(|(item, (id, _))| item.note.as_deref().map(|n| (*id, n)))
        .collect();
    if !note_rows.is_empty() {
        db::notes::insert_many(conn, org, author.user_id, &note_rows, now).await?;
    }
    let events: Vec<_> = models.iter().map(|m| event_data(m, l)).collect();
    db::outbox::push_many(conn, org, EventKind::ContactCreated, &events, now).await?;
    Ok(models
        .into_iter()
        .zip(planned)
        .map(|(m, (_, identities))| (m, identities))
        .collect())
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
    let after = match save_change(
        &*txn,
        state,
        &l,
        &auth.user_name,
        &before,
        &fields,
        &changed,
        now,
    )
    .await
    {
        Err(e) if e.is_unique_violation() => {
            drop(txn);
            let phone = fields.primary_phone.as_ref();
            return Err(phone_conflict(state, org, phone).await);
        }
        other => other?,
    };
    txn.commit().await?;
    detail(state, org, &after).await
}

/// Saves new fields over a contact in the caller's transaction, as a PATCH does: checks a
/// new stage or owner (400) and a new phone (409 when another contact holds it), links the
/// new phone's MESSAGING_APP_A identity, and records the change (`contact.updated`, stage
/// entry and automations). Returns the saved row. `changed` must not be empty.
#[allow(clippy::too_many_arguments)]
pub async fn save_change(
    conn: &impl ConnectionTrait,
    state: &AppState,
    l: &OrgLookups,
    by: &str,
    before: &contact::Model,
    fields: &ContactFields,
    changed: &[&'static str],
    now: i64,
) -> ApiResult<contact::Model> {
    let (org, id) = (before.organization_id, before.id);
    check_refs(
        conn,
        l,
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
        match phone_holder(conn, org, phone).await? {
            Some(holder) if holder.id != id => return Err(phone_exists(&holder)),
            Some(_) => {}
            None => {
                add_identity = l
                    .active_channel(ChannelType::MessagingAppA)
                    .map(|c| (c.id, phone))
            }
        }
    }
    let after = db::contacts::save(conn, before, fields, now).await?;
    if let Some((channel, phone)) = add_identity {
        let kind = ChannelType::MessagingAppA;
        db::identities::insert(
            conn,
            Uuid::now_v7(),
            org,
            &after,
            channel,
            kind,
            phone.digits(),
            now,
        )
        .await?;
        db::identities::refresh_mirror(conn, org, id).await?;
    }
    let change = Change {
        before,
        after: &after,
        changed,
        bulk: false,
        triggers: true,
    };
    record_saved(conn, state, by, change, now).await?;
    Ok(if add_identity.is_some() {
        load(conn, org, id).await?
    } else {
        after
    })
}
