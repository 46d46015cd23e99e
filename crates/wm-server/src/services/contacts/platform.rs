//! What the messaging platform knows of a contact: which contact a person names (their
//! business-scoped user id, else every form of their number, [`wm_core::wa_id`]), the ids,
//! username and parent id it remembers for them, and the changes the person makes from the
//! chat (stopping or resuming marketing messages, moving to a new number, a new scoped id). Each change is saved like a PATCH and recorded the
//! same way (`contact.updated`, a timeline entry), in the caller's transaction.

use sea_orm::{ConnectionTrait, DbErr};
use uuid::Uuid;
use wm_core::address::is_user_id;
use wm_core::phone::Phone;
use wm_core::platform::{Descriptor, Identity, Person};
use wm_types::contacts::TimelineKind;
use wm_types::enums::ChannelType;

use super::rows::{Change, record_change};
use crate::db;
use crate::db::entities::contact;
use crate::db::identities::Shown;
use crate::db::lookups::OrgLookups;
use crate::error::ApiError;

/// The name changes made on the platform are recorded under.
pub const BY: &str = "Messaging platform";

/// The channel a person is known on: its type, and whether people are known there by
/// phone (and so also by every other spelling of their number, [`wm_core::wa_id`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct On {
    /// The channel type.
    pub kind: ChannelType,
    /// Whether a person's phone names them there.
    pub by_phone: bool,
    /// The channel row new identities join (a connected Page or Instagram account); `None`:
    /// the organisation's first active channel of the type.
    pub channel: Option<Uuid>,
}

impl On {
    /// The channel a descriptor describes.
    pub fn of(d: &Descriptor) -> On {
        On {
            kind: d.channel_type,
            by_phone: d.identity == Identity::Phone,
            channel: None,
        }
    }
}

/// The channel row a new identity of `on` joins.
async fn channel_of(
    conn: &impl ConnectionTrait,
    org: Uuid,
    on: On,
) -> Result<Option<crate::db::entities::channel::Model>, DbErr> {
    use sea_orm::EntityTrait;
    match on.channel {
        Some(id) => {
            crate::db::entities::channel::Entity::find_by_id(id)
                .one(conn)
                .await
        }
        None => db::lookups::active_channel(conn, org, on.kind).await,
    }
}

/// A contact found for a person the platform names.
pub struct Resolved {
    /// The contact.
    pub contact: contact::Model,
    /// Whether the person's exact phone id is already one of its identities (nothing to
    /// remember); true when the platform gave no phone.
    pub known_phone: bool,
    /// Whether the person's scoped id is already one of its identities; true when the
    /// platform gave none.
    pub known_user: bool,
}

/// The contact a person's platform id (`wa_id`) names: the one holding that id as an
/// identity, else one holding another form of the number as identity or primary phone
/// (the form nearest the id's own wins).
pub async fn resolve(
    conn: &impl ConnectionTrait,
    org: Uuid,
    on: On,
    wa_id: &str,
) -> Result<Option<Resolved>, DbErr> {
    let forms = wm_core::wa_id::forms(wa_id);
    let rank = |s: &str| forms.iter().position(|f| f == s).unwrap_or(usize::MAX);
    let refs: Vec<&str> = forms.iter().map(String::as_str).collect();
    let identities = db::identities::with_external_ids(conn, org, on.kind, &refs).await?;
    if let Some(i) = identities.iter().min_by_key(|i| rank(&i.external_id))
        && let Some(contact) = db::contacts::find(conn, org, i.contact_id).await?
    {
        let known_phone = i.external_id == wa_id;
        return Ok(Some(Resolved {
            contact,
            known_phone,
            known_user: true,
        }));
    }
    let phones: Vec<String> = forms.iter().map(|f| format!("+{f}")).collect();
    let refs: Vec<&str> = phones.iter().map(String::as_str).collect();
    let found = db::contacts::with_phones(conn, org, &refs).await?;
    Ok(found
        .into_iter()
        .min_by_key(|c| rank(c.primary_phone.as_deref().map_or("", |p| &p[1..])))
        .map(|contact| Resolved {
            contact,
            known_phone: false,
            known_user: true,
        }))
}

/// The contact a person names: the one holding their scoped id (WhatsApp's business-scoped
/// user id, the exact key of the person), else the one their phone names ([`resolve`]).
/// Nothing is guessed: a person with neither is nobody's.
pub async fn resolve_person(
    conn: &impl ConnectionTrait,
    org: Uuid,
    on: On,
    person: &Person,
) -> Result<Option<Resolved>, DbErr> {
    if let Some(user_id) = person.user_id.as_deref()
        && let Some(i) = db::identities::find(conn, org, on.kind, user_id).await?
        && let Some(contact) = db::contacts::find(conn, org, i.contact_id).await?
    {
        let known_phone = match person.phone.as_deref() {
            Some(phone) => db::identities::find(conn, org, on.kind, phone)
                .await?
                .is_some(),
            None => true,
        };
        return Ok(Some(Resolved {
            contact,
            known_phone,
            known_user: true,
        }));
    }
    let Some(phone) = person.phone.as_deref().filter(|_| on.by_phone) else {
        return Ok(None);
    };
    Ok(resolve(conn, org, on, phone).await?.map(|r| Resolved {
        known_user: person.user_id.is_none(),
        ..r
    }))
}

/// Remembers what the platform told of a person on the contact it resolved to: their
/// phone's exact form and their scoped id as identities (when nobody holds them yet), and
/// the username and parent id they show. `false` when the scoped id is another contact's
/// (the person then stays with the contact that holds it next time).
pub async fn remember_person(
    conn: &impl ConnectionTrait,
    on: On,
    resolved: &Resolved,
    person: &Person,
    now: i64,
) -> Result<bool, DbErr> {
    let contact = &resolved.contact;
    let org = contact.organization_id;
    let Some(channel) = channel_of(conn, org, on).await? else {
        return Ok(true);
    };
    let mut changed = false;
    if let Some(phone) = person
        .phone
        .as_deref()
        .filter(|_| on.by_phone && !resolved.known_phone)
    {
        changed |= db::identities::insert_if_absent(
            conn,
            contact,
            channel.id,
            on.kind,
            phone,
            Shown::default(),
            now,
        )
        .await?;
    }
    let mut mine = true;
    if let Some(user_id) = person.user_id.as_deref() {
        let shown = Shown {
            username: person.username.as_deref(),
            parent_id: person.parent_user_id.as_deref(),
        };
        if resolved.known_user {
            if let Some(i) = db::identities::find(conn, org, on.kind, user_id).await? {
                mine = i.contact_id == contact.id;
                if mine {
                    changed |= db::identities::set_shown(conn, i.id, shown).await?;
                }
            }
        } else {
            let added = db::identities::insert_if_absent(
                conn, contact, channel.id, on.kind, user_id, shown, now,
            )
            .await?;
            changed |= added;
            mine = added;
        }
    }
    if changed {
        db::identities::refresh_mirror(conn, org, contact.id).await?;
    }
    Ok(mine)
}

/// Remembers `wa_id` as the contact's identity on the platform (when the organisation has
/// the channel and nobody holds that id yet); `true` when it was added.
pub async fn remember(
    conn: &impl ConnectionTrait,
    on: On,
    contact: &contact::Model,
    wa_id: &str,
    now: i64,
) -> Result<bool, DbErr> {
    let org = contact.organization_id;
    let Some(channel) = channel_of(conn, org, on).await? else {
        return Ok(false);
    };
    let added = db::identities::insert_if_absent(
        conn,
        contact,
        channel.id,
        on.kind,
        wa_id,
        Shown::default(),
        now,
    )
    .await?;
    if added {
        db::identities::refresh_mirror(conn, org, contact.id).await?;
    }
    Ok(added)
}

/// The ids a send answer or a status reported for the person a message went to.
#[derive(Debug, Clone, Copy, Default)]
pub struct Reported<'a> {
    /// The platform's own spelling of their number (WhatsApp's `wa_id`).
    pub wa_id: Option<&'a str>,
    /// Their scoped user id (WhatsApp's BSUID).
    pub user_id: Option<&'a str>,
}

/// A person's scoped id changing, as the platform tells it.
#[derive(Debug, Clone, Copy)]
pub struct IdChange<'a> {
    /// The id they had.
    pub previous: &'a str,
    /// The id they have now.
    pub current: &'a str,
    /// Their new parent id, when the platform gives one.
    pub parent: Option<&'a str>,
}

/// Remembers the ids the platform reported for a message sent to the contact at
/// `address`: its send answer's or status's `wa_id` when it is another spelling of the
/// number, and the person's business-scoped user id (so a message they send with no phone
/// finds them).
pub async fn remember_reported(
    conn: &impl ConnectionTrait,
    on: On,
    org: Uuid,
    contact_id: Uuid,
    address: &str,
    reported: Reported<'_>,
    now: i64,
) -> Result<(), DbErr> {
    let wa_id = reported
        .wa_id
        .filter(|w| !w.is_empty() && Some(*w) != address.strip_prefix('+'));
    let user_id = reported.user_id.filter(|u| !u.is_empty() && *u != address);
    let mut new = Vec::new();
    for id in [wa_id, user_id].into_iter().flatten() {
        if db::identities::find(conn, org, on.kind, id)
            .await?
            .is_none()
        {
            new.push(id);
        }
    }
    if new.is_empty() {
        return Ok(());
    }
    if let Some(contact) = db::contacts::find(conn, org, contact_id).await? {
        for id in new {
            remember(conn, on, &contact, id, now).await?;
        }
    }
    Ok(())
}

/// [`remember_reported`]'s business-scoped user ids for many statuses at once (`(org,
/// contact, user id)`): the ids held already are read in one query per organisation, and
/// only new ones are written, so a burst of statuses whose people are known costs a read.
pub async fn remember_user_ids(
    conn: &impl ConnectionTrait,
    on: On,
    reported: &[(Uuid, Uuid, &str)],
    now: i64,
) -> Result<(), DbErr> {
    let mut orgs: Vec<Uuid> = reported.iter().map(|(org, _, _)| *org).collect();
    orgs.sort_unstable();
    orgs.dedup();
    for org in orgs {
        let mut ids: Vec<&str> = reported
            .iter()
            .filter(|(o, _, _)| *o == org)
            .map(|(_, _, id)| *id)
            .collect();
        ids.sort_unstable();
        ids.dedup();
        let held: std::collections::HashSet<String> =
            db::identities::with_external_ids(conn, org, on.kind, &ids)
                .await?
                .into_iter()
                .map(|i| i.external_id)
                .collect();
        let mut new: Vec<(Uuid, &str)> = Vec::new();
        for (o, contact, id) in reported {
            if *o == org && !held.contains(*id) && !new.iter().any(|(_, n)| n == id) {
                new.push((*contact, id));
            }
        }
        if new.is_empty() {
            continue;
        }
        let contacts =
            db::contacts::find_many(conn, org, new.iter().map(|(c, _)| *c).collect()).await?;
        for (contact, id) in new {
            if let Some(contact) = contacts.iter().find(|c| c.id == contact) {
                remember(conn, on, contact, id, now).await?;
            }
        }
    }
    Ok(())
}

/// The person stopped (`opted_out`) or resumed marketing messages on the platform: the
/// contact's `optedOut` follows, with a consent timeline entry and `contact.updated`.
/// `false` when it already said so (nothing is recorded twice).
pub async fn set_opted_out(
    conn: &impl ConnectionTrait,
    org: Uuid,
    contact_id: Uuid,
    opted_out: bool,
    reason: &str,
    now: i64,
) -> Result<bool, DbErr> {
    let Some(before) = db::contacts::find(conn, org, contact_id).await? else {
        return Ok(false);
    };
    if before.opted_out == opted_out {
        return Ok(false);
    }
    let mut fields = db::contacts::fields_of(&before);
    fields.opted_out = opted_out;
    let entry = TimelineKind::Consent {
        by: BY.to_owned(),
        opted_out,
        reason: reason.to_owned(),
    };
    save(conn, &before, &fields, &entry, &["optedOut"], now).await?;
    Ok(true)
}

/// The person moved their account to the number `to` (its digits): the contact's
/// identity moves, and so does its primary phone when it was that number (unless another
/// contact holds the new one), with a phone timeline entry and `contact.updated`; their old
/// scoped id gives way to `new_user_id`, which the platform makes with a new number. `false`
/// when the person is no contact.
pub async fn change_number(
    conn: &impl ConnectionTrait,
    org: Uuid,
    on: On,
    from: &Person,
    to: &str,
    new_user_id: Option<&str>,
    now: i64,
) -> Result<bool, DbErr> {
    let Ok(new_phone) = Phone::parse(&format!("+{to}")) else {
        tracing::warn!(%org, "a number change to an invalid number was ignored");
        return Ok(false);
    };
    let Some(Resolved {
        contact: before, ..
    }) = resolve_person(conn, org, on, from).await?
    else {
        return Ok(false);
    };
    let old_forms = from
        .phone
        .as_deref()
        .map(wm_core::wa_id::forms)
        .unwrap_or_default();
    let mut dropped =
        db::identities::delete_of_contact(conn, before.id, on.kind, &old_forms).await?;
    if let Some(user_id) = new_user_id {
        let old_ids: Vec<String> =
            db::identities::of_contact_where(conn, before.id, on.kind, is_user_id)
                .await?
                .into_iter()
                .map(|i| i.external_id)
                .filter(|id| id != user_id)
                .collect();
        dropped += db::identities::delete_of_contact(conn, before.id, on.kind, &old_ids).await?;
        remember(conn, on, &before, user_id, now).await?;
    }
    if !remember(conn, on, &before, new_phone.digits(), now).await? && dropped > 0 {
        db::identities::refresh_mirror(conn, org, before.id).await?;
    }
    let was_platform_number = before
        .primary_phone
        .as_deref()
        .and_then(|p| p.strip_prefix('+'))
        .is_some_and(|d| old_forms.iter().any(|f| f == d));
    if !was_platform_number {
        return Ok(true);
    }
    if let Some(holder) = db::contacts::find_by_phone(conn, org, &new_phone).await?
        && holder.id != before.id
    {
        tracing::warn!(%org, contact = %before.id, holder = %holder.id,
            "a number change left the primary phone: another contact has the new number");
        return Ok(true);
    }
    let mut fields = db::contacts::fields_of(&before);
    fields.primary_phone = Some(new_phone.clone());
    let entry = TimelineKind::Phone {
        by: BY.to_owned(),
        from: before.primary_phone.clone(),
        to: new_phone.as_str().to_owned(),
    };
    save(conn, &before, &fields, &entry, &["primaryPhone"], now).await?;
    Ok(true)
}

/// The person's scoped id changed from `previous` to `current` (WhatsApp's `user_id_update`
/// or `user_changed_user_id`): the identity follows, the same contact keeps them. A person
/// the old id names nobody is found by their phone and gains the new id. `false` when
/// they are no contact.
pub async fn change_user_id(
    conn: &impl ConnectionTrait,
    org: Uuid,
    on: On,
    person: &Person,
    change: IdChange<'_>,
    now: i64,
) -> Result<bool, DbErr> {
    let IdChange {
        previous,
        current,
        parent,
    } = change;
    if let Some(contact) =
        db::identities::rename(conn, org, on.kind, previous, current, parent).await?
    {
        db::identities::refresh_mirror(conn, org, contact).await?;
        return Ok(true);
    }
    let by_phone = Person {
        user_id: None,
        ..person.clone()
    };
    let Some(resolved) = resolve_person(conn, org, on, &by_phone).await? else {
        return Ok(false);
    };
    let now_known = Person {
        user_id: Some(current.to_owned()),
        parent_user_id: parent.map(str::to_owned),
        ..by_phone
    };
    let resolved = Resolved {
        known_user: false,
        ..resolved
    };
    remember_person(conn, on, &resolved, &now_known, now).await
}

/// Saves a platform change of `before` (`fields`, naming `changed`): the row, its timeline
/// `entry` and `contact.updated` (stages are not touched, so no automation starts).
async fn save(
    conn: &impl ConnectionTrait,
    before: &contact::Model,
    fields: &wm_core::contacts::ContactFields,
    entry: &TimelineKind,
    changed: &[&'static str],
    now: i64,
) -> Result<(), DbErr> {
    let org = before.organization_id;
    let after = db::contacts::save(conn, before, fields, now).await?;
    db::timeline::add(conn, org, before.id, now, entry).await?;
    let l = OrgLookups::load(conn, org).await?;
    let change = Change {
        before,
        after: &after,
        changed,
        bulk: false,
        triggers: false,
    };
    record_change(conn, BY, change, &l, now)
        .await
        .map_err(into_db)
}

/// A recording error as the database error it is (recording only reads and writes rows).
fn into_db(e: ApiError) -> DbErr {
    match e {
        ApiError::Internal(e) => e
            .downcast::<DbErr>()
            .unwrap_or_else(|e| DbErr::Custom(format!("{e:#}"))),
        other => DbErr::Custom(other.to_string()),
    }
}
