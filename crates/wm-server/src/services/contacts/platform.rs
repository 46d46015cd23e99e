//! What the messaging platform knows of a contact: which contact a person's platform id
//! names (through every form of their number, [`wm_core::wa_id`]), the ids it remembers for
//! them, and the changes the person makes from the chat (stopping or resuming marketing
//! messages, moving to a new number). Each change is saved like a PATCH and recorded the
//! same way (`contact.updated`, a timeline entry), in the caller's transaction.

use sea_orm::{ConnectionTrait, DbErr};
use uuid::Uuid;
use wm_core::phone::Phone;
use wm_types::contacts::TimelineKind;
use wm_types::enums::ChannelType;

use super::{Change, record_change};
use crate::db;
use crate::db::entities::contact;
use crate::db::lookups::OrgLookups;
use crate::error::ApiError;

/// The name changes made on the platform are recorded under.
pub const BY: &str = "Messaging platform";

const KIND: ChannelType = ChannelType::MessagingAppA;

/// A contact found for a platform id.
pub struct Resolved {
    /// The contact.
    pub contact: contact::Model,
    /// Whether that exact id is already one of its identities (nothing to remember).
    pub known: bool,
}

/// The contact a person's platform id (`wa_id`) names: the one holding that id as an
/// identity, else one holding another form of the number as identity or primary phone
/// (the form nearest the id's own wins).
pub async fn resolve(
    conn: &impl ConnectionTrait,
    org: Uuid,
    wa_id: &str,
) -> Result<Option<Resolved>, DbErr> {
    let forms = wm_core::wa_id::forms(wa_id);
    let rank = |s: &str| forms.iter().position(|f| f == s).unwrap_or(usize::MAX);
    let refs: Vec<&str> = forms.iter().map(String::as_str).collect();
    let identities = db::identities::with_external_ids(conn, org, KIND, &refs).await?;
    if let Some(i) = identities.iter().min_by_key(|i| rank(&i.external_id))
        && let Some(contact) = db::contacts::find(conn, org, i.contact_id).await?
    {
        let known = i.external_id == wa_id;
        return Ok(Some(Resolved { contact, known }));
    }
    let phones: Vec<String> = forms.iter().map(|f| format!("+{f}")).collect();
    let refs: Vec<&str> = phones.iter().map(String::as_str).collect();
    let found = db::contacts::with_phones(conn, org, &refs).await?;
    Ok(found
        .into_iter()
        .min_by_key(|c| rank(c.primary_phone.as_deref().map_or("", |p| &p[1..])))
        .map(|contact| Resolved {
            contact,
            known: false,
        }))
}

/// Remembers `wa_id` as the contact's identity on the platform (when the organisation has
/// the channel and nobody holds that id yet); `true` when it was added.
pub async fn remember(
    conn: &impl ConnectionTrait,
    contact: &contact::Model,
    wa_id: &str,
    now: i64,
) -> Result<bool, DbErr> {
    let org = contact.organization_id;
    let Some(channel) = db::lookups::active_channel(conn, org, KIND).await? else {
        return Ok(false);
    };
    let added =
        db::identities::insert_if_absent(conn, contact, channel.id, KIND, wa_id, now).await?;
    if added {
        db::contacts::refresh_identities(conn, org, contact.id).await?;
    }
    Ok(added)
}

/// Remembers the id the platform used for a message sent to `phone` (its send answer's
/// `wa_id`, a status's `recipient_id`) when it is another spelling of the number.
pub async fn remember_reported(
    conn: &impl ConnectionTrait,
    org: Uuid,
    contact_id: Uuid,
    phone: &str,
    wa_id: Option<&str>,
    now: i64,
) -> Result<(), DbErr> {
    let Some(wa_id) = wa_id.filter(|w| !w.is_empty() && Some(*w) != phone.strip_prefix('+')) else {
        return Ok(());
    };
    if db::identities::find(conn, org, KIND, wa_id)
        .await?
        .is_some()
    {
        return Ok(());
    }
    if let Some(contact) = db::contacts::find(conn, org, contact_id).await? {
        remember(conn, &contact, wa_id, now).await?;
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

/// The person moved their account from `from` to `to` (platform ids): the contact's
/// identity moves, and so does its primary phone when it was that number (unless another
/// contact holds the new one), with a phone timeline entry and `contact.updated`. `false`
/// when no contact has the old number.
pub async fn change_number(
    conn: &impl ConnectionTrait,
    org: Uuid,
    from: &str,
    to: &str,
    now: i64,
) -> Result<bool, DbErr> {
    let Ok(new_phone) = Phone::parse(&format!("+{to}")) else {
        tracing::warn!(%org, "a number change to an invalid number was ignored");
        return Ok(false);
    };
    let Some(Resolved {
        contact: before, ..
    }) = resolve(conn, org, from).await?
    else {
        return Ok(false);
    };
    let old_forms = wm_core::wa_id::forms(from);
    let dropped = db::identities::delete_of_contact(conn, before.id, KIND, &old_forms).await?;
    if !remember(conn, &before, new_phone.digits(), now).await? && dropped > 0 {
        db::contacts::refresh_identities(conn, org, before.id).await?;
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
