//! Messages from contacts and status callbacks from the messaging platform (operator routes
//! that stand in for the platform's webhooks).

use crate::db::Unique;
use sea_orm::sea_query::OnConflict;
use sea_orm::{ActiveValue::Set, ConnectionTrait, DbErr, EntityTrait};
use uuid::Uuid;
use wm_core::platform::{Content, InboundMessage, Person};
use wm_core::provider::StatusUpdate;
use wm_types::campaigns::{Inbound, ProviderEvent};
use wm_types::contacts::CreateContact;
use wm_types::enums::{ChannelType, ContactSource};
use wm_types::messages::MessageType;

use crate::db;
use crate::db::entities::platform_inbound_seen;
use crate::error::{ApiError, ApiResult};
use crate::services::contacts::platform::{self, Resolved};
use crate::services::{contacts, messages, sending};
use crate::state::AppState;

/// What an inbound message did.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InboundResult {
    /// The contact it came from.
    pub contact_id: Uuid,
    /// The OPEN conversation it landed in.
    pub conversation_id: Uuid,
    /// The message kept in that conversation.
    pub message_id: Uuid,
    /// Whether that contact was created now.
    pub created: bool,
    /// Whether a campaign message of theirs was marked REPLIED.
    pub replied_campaign: bool,
}

/// A message from a contact: finds or creates the contact (source
/// MESSAGING_APP_A_INBOUND) and marks their latest SENT/DELIVERED/READ campaign message
/// REPLIED. It lands in the contact's OPEN conversation on that channel (opened if needed).
pub async fn inbound(state: &AppState, org: Uuid, body: Inbound) -> ApiResult<InboundResult> {
    inbound_written(state, org, body, None).await
}

/// [`inbound`] for a message written at `at_ms` (in the past: the demo's older
/// conversations, whose 24-hour window has closed).
pub async fn inbound_at(
    state: &AppState,
    org: Uuid,
    body: Inbound,
    at_ms: i64,
) -> ApiResult<InboundResult> {
    inbound_written(state, org, body, Some(at_ms)).await
}

async fn inbound_written(
    state: &AppState,
    org: Uuid,
    body: Inbound,
    at_ms: Option<i64>,
) -> ApiResult<InboundResult> {
    let mut content = Content::of(MessageType::Text, "text");
    content.text = body.text.clone();
    let external = wm_core::contacts::normalize_external_id(body.channel_type, &body.external_id)
        .map_err(ApiError::invalid)?;
    // The stand-in names a person as the platform does: by phone, or (a person who hides
    // their phone) by their business-scoped user id.
    let from = if wm_core::address::is_user_id(&external) {
        Person {
            user_id: Some(external),
            name: body.full_name,
            ..Person::default()
        }
    } else {
        Person {
            name: body.full_name,
            ..Person::by_phone(external)
        }
    };
    let arrival = Arrival {
        channel_type: body.channel_type,
        from,
        content,
        context_id: None,
        platform: None,
        at_ms,
    };
    let applied = apply(state, org, arrival).await?;
    // Only a platform message id is ever found seen.
    applied.ok_or_else(|| ApiError::Internal(anyhow::anyhow!("an unnamed message was seen")))
}

/// A message as it arrived: who wrote, what, and from which platform.
struct Arrival {
    channel_type: ChannelType,
    from: Person,
    content: Content,
    /// The platform's id of the message it quotes.
    context_id: Option<String>,
    platform: Option<Source>,
    at_ms: Option<i64>,
}

/// The platform a message came through.
struct Source {
    provider: &'static str,
    message_id: String,
    number: Uuid,
}

/// [`inbound`] for a message the platform delivered to business number `number` through
/// `provider` (its `context_id`: the platform's id of a message it quotes; a campaign
/// message quoted is marked REPLIED rather than the latest). The platform redelivers a
/// message until acknowledged (and at times after that), so the id is remembered in the
/// transaction that applies the message: a message is recognised as seen exactly when its
/// effects are in, and a failure (or a crash) leaves it to the next delivery or retry.
/// `None`: seen before, nothing done.
pub async fn platform_message(
    state: &AppState,
    org: Uuid,
    provider: &'static str,
    number: Uuid,
    m: InboundMessage,
) -> ApiResult<Option<InboundResult>> {
    let arrival = Arrival {
        channel_type: ChannelType::MessagingAppA,
        from: m.from,
        content: m.content,
        context_id: m.context_id,
        platform: Some(Source {
            provider,
            message_id: m.message_id,
            number,
        }),
        at_ms: m.at_ms,
    };
    apply(state, org, arrival).await
}

/// How many times a message is applied again when a new person's contact was created
/// meanwhile by another message of theirs (the unique indexes on phones and identities
/// decide; the next attempt finds that contact).
const ATTEMPTS: usize = 3;

async fn apply(state: &AppState, org: Uuid, arrival: Arrival) -> ApiResult<Option<InboundResult>> {
    let mut attempt = 0;
    loop {
        attempt += 1;
        match apply_once(state, org, &arrival).await {
            Err(Retry::Raced) if attempt < ATTEMPTS => continue,
            Err(Retry::Raced) => {
                return Err(ApiError::Internal(anyhow::anyhow!(
                    "a new person's contact kept being created elsewhere"
                )));
            }
            Err(Retry::Failed(e)) => return Err(e),
            Ok(done) => return Ok(done),
        }
    }
}

/// Why applying a message stopped.
enum Retry {
    /// Another message of the same new person created their contact meanwhile.
    Raced,
    /// Anything else.
    Failed(ApiError),
}

impl<E: Into<ApiError>> From<E> for Retry {
    fn from(e: E) -> Self {
        Retry::Failed(e.into())
    }
}

/// The contact a message is filed under: found, or new (in the caller's transaction).
struct Filed {
    id: Uuid,
    created: bool,
}

async fn apply_once(
    state: &AppState,
    org: Uuid,
    arrival: &Arrival,
) -> Result<Option<InboundResult>, Retry> {
    let source = arrival.platform.as_ref();
    let message_id = source.map(|s| s.message_id.as_str());
    let replied_to = arrival.context_id.as_deref();
    let conn = &state.db.conn;
    // A redelivery of an applied message needs no contact lookup; the write below decides.
    if let Some(id) = message_id
        && platform_inbound_seen::Entity::find_by_id(id.to_owned())
            .unique(conn)
            .await?
            .is_some()
    {
        return Ok(None);
    }
    let kind = arrival.channel_type;
    // The platform's id may be another spelling of the number the contact was stored with,
    // or the person's business-scoped user id.
    let resolved = if kind == ChannelType::MessagingAppA {
        platform::resolve_person(conn, org, &arrival.from).await?
    } else {
        let external = arrival.from.phone.as_deref().unwrap_or_default();
        match db::identities::find(conn, org, kind, external).await? {
            Some(i) => db::contacts::find(conn, org, i.contact_id)
                .await?
                .map(|contact| Resolved {
                    contact,
                    known_phone: true,
                    known_user: true,
                }),
            None => None,
        }
    };
    if resolved.is_none() && kind != ChannelType::MessagingAppA {
        return Err(Retry::Failed(ApiError::invalid(
            "a new contact can only come from MESSAGING_APP_A",
        )));
    }
    let now = state.now_ms();
    let channel = db::lookups::active_channel(conn, org, kind)
        .await?
        .ok_or_else(|| {
            ApiError::invalid(format!(
                "channelType {kind} is not active in this organization"
            ))
        })?;
    let lookups = match resolved {
        None => Some(state.lookups.get(conn, org).await?),
        Some(_) => None,
    };
    let txn = state.db.write().await?;
    if let Some(id) = message_id
        && !first_sight(&*txn, id, now).await?
    {
        // Applied meanwhile by another worker: dropping the transaction undoes nothing.
        return Ok(None);
    }
    let filed = match (&resolved, lookups) {
        (Some(r), _) => {
            // What the platform tells of them from now on: the next message finds them at
            // once, by phone or by scoped id.
            if !platform::remember_person(&*txn, r, &arrival.from, now).await? {
                tracing::warn!(%org, contact = %r.contact.id,
                    "a person's business-scoped user id is another contact's; their message stays with the contact their phone names");
            }
            Filed {
                id: r.contact.id,
                created: false,
            }
        }
        (None, Some(l)) => new_contact(&txn, org, &arrival.from, &l, now).await?,
        (None, None) => unreachable_lookups()?,
    };
    let contact_id = filed.id;
    // When the customer wrote, as the platform says (never in the future).
    let written_at = arrival.at_ms.map_or(now, |at| at.min(now));
    let touched = crate::services::conversations::touch_from_contact(
        &*txn, org, contact_id, channel.id, kind, written_at, now,
    )
    .await?;
    let received = messages::Received {
        org,
        conversation: touched,
        contact: contact_id,
        content: arrival.content.clone(),
        context_id: replied_to,
        platform: source.map(|s| messages::Platform {
            provider: s.provider,
            message_id: &s.message_id,
            number: s.number,
        }),
        written_at,
    };
    let message = messages::record_inbound(&*txn, received, now).await?;
    let replied_campaign =
        sending::mark_replied(&*txn, org, contact_id, replied_to, Some(message), now).await?;
    txn.commit().await?;
    // A media file to fetch now rather than at the fetcher's next look.
    state.media_wake.notify_one();
    Ok(Some(InboundResult {
        contact_id,
        conversation_id: touched.id,
        message_id: message,
        created: filed.created,
        replied_campaign,
    }))
}

/// The lookups are read for every new person; a new person without them cannot be.
fn unreachable_lookups() -> Result<Filed, Retry> {
    Err(Retry::Failed(ApiError::Internal(anyhow::anyhow!(
        "a new person's organisation lookups were not read"
    ))))
}

/// A person nobody knows yet becomes a contact (source MESSAGING_APP_A_INBOUND), in the
/// message's transaction: with their phone and its identity when the platform shares it,
/// and their business-scoped user id (with the username they show) as an identity, so a
/// person who hides their phone is a contact too and their next message finds them.
/// [`Retry::Raced`] when another message of theirs created them meanwhile.
async fn new_contact(
    txn: &crate::db::WriteTxn,
    org: Uuid,
    from: &Person,
    l: &crate::db::lookups::OrgLookups,
    now: i64,
) -> Result<Filed, Retry> {
    let phone = from.phone.as_ref().map(|p| format!("+{p}"));
    let body = CreateContact {
        full_name: from.name.clone().or_else(|| from.username.clone()),
        primary_phone: phone.filter(|p| wm_core::phone::Phone::parse(p).is_ok()),
        source: Some(ContactSource::MessagingAppAInbound),
        ..Default::default()
    };
    let planned = contacts::Planned::from_body(body).map_err(ApiError::Validation)?;
    let author = contacts::Author {
        user_id: Uuid::nil(),
        user_name: platform::BY,
    };
    let written = contacts::write_new(&**txn, org, author, &[planned], l, now).await;
    let (contact, _) = match written {
        Ok(mut w) => w
            .pop()
            .ok_or_else(|| ApiError::Internal(anyhow::anyhow!("no contact was written")))?,
        Err(e) if crate::error::is_unique_violation(&e) => return Err(Retry::Raced),
        Err(e) => return Err(e.into()),
    };
    let resolved = Resolved {
        contact,
        known_phone: true,
        known_user: false,
    };
    // Their scoped id taken meanwhile by another message of theirs: this contact would be
    // a second one.
    if !platform::remember_person(&**txn, &resolved, from, now).await? {
        return Err(Retry::Raced);
    }
    Ok(Filed {
        id: resolved.contact.id,
        created: true,
    })
}

/// The person moved their account to a new number (a platform notice with its id): the
/// contact's identity and phone follow, and their new scoped id replaces the old
/// ([`platform::change_number`]), once per notice.
pub async fn number_changed(
    state: &AppState,
    org: Uuid,
    message_id: &str,
    from: &Person,
    to: &str,
    user_id: Option<&str>,
) -> ApiResult<bool> {
    let now = state.now_ms();
    let txn = state.db.write().await?;
    if !first_sight(&*txn, message_id, now).await? {
        return Ok(false);
    }
    let changed = platform::change_number(&*txn, org, from, to, user_id, now).await?;
    txn.commit().await?;
    Ok(changed)
}

/// The person's scoped id changed ([`platform::change_user_id`]): the same contact keeps
/// them. Applying it again changes nothing.
pub async fn user_id_changed(
    state: &AppState,
    org: Uuid,
    person: &Person,
    previous: &str,
    current: &str,
    parent: Option<&str>,
) -> ApiResult<bool> {
    let now = state.now_ms();
    let txn = state.db.write().await?;
    let changed =
        platform::change_user_id(&*txn, org, person, previous, current, parent, now).await?;
    txn.commit().await?;
    Ok(changed)
}

/// The person stopped (`stop`) or resumed marketing messages from the chat: the contact
/// they name follows ([`platform::set_opted_out`]); a person who is no contact changes
/// nothing.
pub async fn marketing_preference(
    state: &AppState,
    org: Uuid,
    person: &Person,
    stop: bool,
) -> ApiResult<bool> {
    let now = state.now_ms();
    let txn = state.db.write().await?;
    let Some(resolved) = platform::resolve_person(&*txn, org, person).await? else {
        return Ok(false);
    };
    platform::remember_person(&*txn, &resolved, person, now).await?;
    let reason = if stop {
        "The person stopped marketing messages from the chat"
    } else {
        "The person resumed marketing messages from the chat"
    };
    let changed =
        platform::set_opted_out(&*txn, org, resolved.contact.id, stop, reason, now).await?;
    txn.commit().await?;
    Ok(changed)
}

/// Remembers a platform message id in the caller's transaction; `false` when it was there.
async fn first_sight(
    conn: &impl ConnectionTrait,
    message_id: &str,
    now: i64,
) -> Result<bool, DbErr> {
    let n = platform_inbound_seen::Entity::insert(platform_inbound_seen::ActiveModel {
        message_id: Set(message_id.to_owned()),
        created_at: Set(now),
    })
    .on_conflict(
        OnConflict::column(platform_inbound_seen::Column::MessageId)
            .do_nothing()
            .to_owned(),
    )
    .exec_without_returning(conn)
    .await?;
    Ok(n == 1)
}

/// A status callback: moves the recipient along the funnel (never backwards).
pub async fn provider_event(state: &AppState, org: Uuid, body: ProviderEvent) -> ApiResult<bool> {
    let now = state.now_ms();
    let txn = state.db.write().await?;
    let update = StatusUpdate {
        provider_message_id: body.provider_message_id,
        correlation_id: None,
        status: body.status,
        at_ms: None,
        error: body.error,
        opt_out: false,
        recipient: None,
        recipient_user_id: None,
    };
    let applied = crate::services::sending::receipts::apply(&*txn, Some(org), &update, now).await?
        == crate::services::sending::receipts::Applied::Moved;
    txn.commit().await?;
    Ok(applied)
}
