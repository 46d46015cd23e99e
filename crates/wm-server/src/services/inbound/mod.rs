//! Messages from people, whatever channel carried them: the platform's (through its
//! provider's intake) and the operator's stand-in for one (`POST /admin/…/inbound`). Past
//! the parse nothing here knows which platform spoke: the channel's descriptor says how a
//! person is known (by phone, by a scoped id), how long the window their message opens
//! lasts, and the source of a contact their first message makes.
//!
//! A message finds or creates its contact (the one builder for every channel, keyed by the
//! person's id on it), lands in the contact's conversation on that channel (opened if
//! needed), credits the campaign message it answers, and is remembered as applied in the
//! same transaction (a redelivery changes nothing).

pub mod echo;
pub mod people;
pub mod seen;

use sea_orm::EntityTrait;
use uuid::Uuid;
use wm_core::platform::{Content, Descriptor, InboundMessage, Person};
use wm_core::provider::StatusUpdate;
use wm_types::campaigns::{Inbound, ProviderEvent};
use wm_types::contacts::CreateContact;
use wm_types::enums::ChannelType;
use wm_types::messages::MessageType;

use crate::db;
use crate::error::{ApiError, ApiResult};
use crate::provider::Provider;
use crate::services::contacts::platform::{self, On, Resolved};
use crate::services::{contacts, messages, sending};
use crate::state::AppState;
use seen::Key;

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

/// A message from a contact (the operator's stand-in for the platform): finds or creates
/// the contact, lands in their OPEN conversation on that channel, and marks their latest
/// SENT/DELIVERED/READ campaign message REPLIED.
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
    let provider = state.provider_for(body.channel_type);
    let by_phone = provider
        .as_ref()
        .is_some_and(|p| On::of(p.descriptor).by_phone);
    // The stand-in names a person as their platform does: by phone on a phone channel
    // (or, a person who hides theirs, by their business-scoped user id), by their id on
    // the others.
    let from = if by_phone && !wm_core::address::is_user_id(&external) {
        Person {
            name: body.full_name,
            ..Person::by_phone(external)
        }
    } else {
        Person {
            user_id: Some(external),
            name: body.full_name,
            ..Person::default()
        }
    };
    let arrival = Arrival {
        channel_type: body.channel_type,
        provider,
        from,
        content,
        context_id: None,
        platform: None,
        at_ms,
        stored_media: None,
    };
    let applied = apply(state, org, arrival).await?;
    // Only a platform message id is ever found seen.
    applied.ok_or_else(|| ApiError::Internal(anyhow::anyhow!("an unnamed message was seen")))
}

/// A message as it arrived: who wrote, what, on which channel, and from which platform.
struct Arrival {
    channel_type: ChannelType,
    /// The provider of its channel (none: no provider runs for it; only contacts known
    /// already can write then).
    provider: Option<std::sync::Arc<Provider>>,
    from: Person,
    content: Content,
    /// The platform's id of the message it quotes.
    context_id: Option<String>,
    platform: Option<Source>,
    at_ms: Option<i64>,
    /// A file wm keeps already (a website visitor's upload).
    stored_media: Option<Uuid>,
}

/// The platform a message came through.
struct Source {
    provider: &'static str,
    /// The platform's id of the business account written to.
    account: String,
    message_id: String,
    /// The account's row.
    at: At,
}

/// The account a platform message was written to: a business number (on the organisation's
/// channel of its type), or a connected channel (a Page, an Instagram account, a website
/// chat) that is its own channel.
#[derive(Debug, Clone, Copy)]
pub enum At {
    /// A business number's row.
    Number(Uuid),
    /// A connected channel's row.
    Channel(Uuid),
}

impl At {
    /// The row's id.
    pub fn id(self) -> Uuid {
        match self {
            At::Number(id) | At::Channel(id) => id,
        }
    }
}

impl Source {
    fn key(&self) -> Key<'_> {
        Key {
            provider: self.provider,
            account: &self.account,
            message_id: &self.message_id,
        }
    }
}

/// [`inbound`] for a message `provider`'s platform delivered to the business account `at`
/// (its `context_id`: the platform's id of a message it quotes; a campaign
/// message quoted is marked REPLIED rather than the latest). The platform redelivers a
/// message until acknowledged (and at times after that), so it is remembered in the
/// transaction that applies it: a message is recognised as seen exactly when its effects
/// are in, and a failure (or a crash) leaves it to the next delivery or retry. `None`:
/// seen before, nothing done.
pub async fn platform_message(
    state: &AppState,
    org: Uuid,
    provider: &std::sync::Arc<Provider>,
    at: At,
    m: InboundMessage,
) -> ApiResult<Option<InboundResult>> {
    channel_message(state, org, provider, at, m, None).await
}

/// [`platform_message`] for a channel wm itself carries (a website chat), whose file (if
/// any) wm keeps already as `stored_media`.
pub async fn channel_message(
    state: &AppState,
    org: Uuid,
    provider: &std::sync::Arc<Provider>,
    at: At,
    m: InboundMessage,
    stored_media: Option<Uuid>,
) -> ApiResult<Option<InboundResult>> {
    let arrival = Arrival {
        channel_type: provider.descriptor.channel_type,
        provider: Some(provider.clone()),
        from: m.from,
        content: m.content,
        context_id: m.context_id,
        platform: Some(Source {
            provider: provider.name(),
            account: m.account,
            message_id: m.message_id,
            at,
        }),
        at_ms: m.at_ms,
        stored_media,
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
    let replied_to = arrival.context_id.as_deref();
    let conn = &state.db.conn;
    // A redelivery of an applied message needs no contact lookup; the write below decides.
    if let Some(s) = source
        && seen::was_seen(conn, s.key()).await?
    {
        return Ok(None);
    }
    let kind = arrival.channel_type;
    let descriptor = arrival.provider.as_ref().map(|p| p.descriptor);
    let on = descriptor.map_or(
        On {
            kind,
            by_phone: false,
            channel: None,
        },
        On::of,
    );
    // The person's id may be another spelling of the number the contact was stored with,
    // or their scoped id.
    let resolved = platform::resolve_person(conn, org, on, &arrival.from).await?;
    let new_person = match (&resolved, descriptor) {
        (Some(_), _) => None,
        (None, Some(d)) => Some((d, state.lookups.get(conn, org).await?)),
        (None, None) => {
            return Err(Retry::Failed(ApiError::invalid(format!(
                "a new contact cannot come from {kind}: no provider runs for it"
            ))));
        }
    };
    let now = state.now_ms();
    let channel = match source.map(|s| s.at) {
        Some(At::Channel(id)) => crate::db::entities::channel::Entity::find_by_id(id)
            .one(conn)
            .await?
            .filter(|c| c.active),
        _ => db::lookups::active_channel(conn, org, kind).await?,
    }
    .ok_or_else(|| {
        ApiError::invalid(format!(
            "channelType {kind} is not active in this organization"
        ))
    })?;
    // New identities join the channel the message came through.
    let on = On {
        channel: Some(channel.id),
        ..on
    };
    let txn = state.db.write().await?;
    if let Some(s) = source
        && !seen::first_sight(&*txn, s.key(), now).await?
    {
        // Applied meanwhile by another worker: dropping the transaction undoes nothing.
        return Ok(None);
    }
    let filed = match (&resolved, new_person) {
        (Some(r), _) => {
            // What the platform tells of them from now on: the next message finds them at
            // once, by phone or by scoped id.
            if !platform::remember_person(&*txn, on, r, &arrival.from, now).await? {
                tracing::warn!(%org, contact = %r.contact.id,
                    "a person's scoped id is another contact's; their message stays with the contact their phone names");
            }
            Filed {
                id: r.contact.id,
                created: false,
            }
        }
        (None, Some((d, l))) => new_contact(&txn, org, on, d, &arrival.from, &l, now).await?,
        (None, None) => {
            return Err(Retry::Failed(ApiError::Internal(anyhow::anyhow!(
                "a new person's channel was not read"
            ))));
        }
    };
    let contact_id = filed.id;
    // A platform that shares people's profiles once they wrote: their name (and username)
    // are read after this commit, never before (the message is never held for it).
    if let (Some(p), Some(id)) = (&arrival.provider, arrival.from.user_id.as_deref())
        && p.profiles.is_some()
    {
        db::identities::profile_due(&*txn, org, kind, id, now).await?;
    }
    // When the customer wrote, as the platform says (never in the future).
    let written_at = arrival.at_ms.map_or(now, |at| at.min(now));
    let window = descriptor.map_or(wm_core::platform::Window::Always, |d| d.window);
    let touched = crate::services::conversations::touch_from_contact(
        &*txn,
        org,
        contact_id,
        crate::services::conversations::Via {
            channel: channel.id,
            kind,
            window,
        },
        written_at,
        now,
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
            number: match s.at {
                At::Number(id) => Some(id),
                At::Channel(_) => None,
            },
            account: s.at.id(),
            media_ttl_ms: descriptor.map_or(0, |d| d.inbound_media_ms),
        }),
        written_at,
        stored_media: arrival.stored_media,
    };
    let message = messages::record_inbound(&*txn, received, now).await?;
    let replied_campaign =
        sending::mark_replied(&*txn, org, contact_id, replied_to, Some(message), now).await?;
    txn.commit().await?;
    state.db.ring(contact_id).await;
    // The organisation's inbox: a list open in the console shows the message's conversation.
    state.db.ring(org).await;
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

/// A person nobody knows yet becomes a contact (its source the channel's), in the
/// message's transaction: with their phone and its identity on a phone channel when the
/// platform shares it, and their scoped id (with the username they show) as an identity of
/// the channel, so a person who hides their phone, or one known only by an id, is a contact
/// too and their next message finds them. [`Retry::Raced`] when another message of theirs
/// created them meanwhile.
async fn new_contact(
    txn: &crate::db::WriteTxn,
    org: Uuid,
    on: On,
    channel: &Descriptor,
    from: &Person,
    l: &crate::db::lookups::OrgLookups,
    now: i64,
) -> Result<Filed, Retry> {
    let phone = from
        .phone
        .as_ref()
        .filter(|_| on.by_phone)
        .map(|p| format!("+{p}"));
    let body = CreateContact {
        full_name: from.name.clone().or_else(|| from.username.clone()),
        primary_phone: phone.filter(|p| wm_core::phone::Phone::parse(p).is_ok()),
        source: Some(channel.new_contact_source),
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
        known_phone: on.by_phone,
        known_user: false,
    };
    // Their scoped id taken meanwhile by another message of theirs: this contact would be
    // a second one.
    if !platform::remember_person(&**txn, on, &resolved, from, now).await? {
        return Err(Retry::Raced);
    }
    Ok(Filed {
        id: resolved.contact.id,
        created: true,
    })
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
    let applied = crate::services::outbound::status::apply(&*txn, Some(org), &update, now).await?
        == crate::services::outbound::status::Applied::Moved;
    txn.commit().await?;
    Ok(applied)
}
