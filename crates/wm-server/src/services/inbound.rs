//! Messages from contacts and status callbacks from the messaging platform (operator routes
//! that stand in for the platform's webhooks).

use crate::db::Unique;
use sea_orm::sea_query::OnConflict;
use sea_orm::{ActiveValue::Set, ConnectionTrait, DbErr, EntityTrait};
use uuid::Uuid;
use wm_core::platform::{Content, InboundMessage};
use wm_core::provider::StatusUpdate;
use wm_types::campaigns::{Inbound, ProviderEvent};
use wm_types::contacts::CreateContact;
use wm_types::enums::ErrorCode;
use wm_types::enums::{ChannelType, ContactSource};
use wm_types::messages::MessageType;

use crate::auth::AuthContext;
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
    let arrival = Arrival {
        sender: body,
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
    sender: Inbound,
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
        sender: Inbound {
            channel_type: ChannelType::MessagingAppA,
            external_id: m.from,
            full_name: m.name,
            text: None,
        },
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

async fn apply(state: &AppState, org: Uuid, arrival: Arrival) -> ApiResult<Option<InboundResult>> {
    let Arrival {
        sender: body,
        content,
        context_id,
        platform: source,
        at_ms,
    } = arrival;
    let message_id = source.as_ref().map(|s| s.message_id.as_str());
    let replied_to = context_id.as_deref();
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
    let external = wm_core::contacts::normalize_external_id(body.channel_type, &body.external_id)
        .map_err(ApiError::invalid)?;
    // The platform's id may be another spelling of the number the contact was stored with.
    let contact = if body.channel_type == ChannelType::MessagingAppA {
        platform::resolve(conn, org, &external).await?
    } else {
        match db::identities::find(conn, org, body.channel_type, &external).await? {
            Some(i) => db::contacts::find(conn, org, i.contact_id)
                .await?
                .map(|contact| Resolved {
                    contact,
                    known: true,
                }),
            None => None,
        }
    };
    let (contact_id, created, unknown_form) = match contact {
        Some(Resolved { contact, known }) => (contact.id, false, (!known).then_some(contact)),
        None => {
            if body.channel_type != ChannelType::MessagingAppA {
                return Err(ApiError::invalid(
                    "a new contact can only come from MESSAGING_APP_A",
                ));
            }
            let actor = AuthContext {
                key_id: Uuid::nil(),
                org_id: org,
                user_id: Uuid::nil(),
                user_name: "Messaging platform".into(),
                scopes: Vec::new(),
                expires_at: None,
            };
            let created = contacts::create(
                state,
                &actor,
                CreateContact {
                    full_name: body.full_name.clone(),
                    primary_phone: Some(format!("+{external}")),
                    source: Some(ContactSource::MessagingAppAInbound),
                    ..Default::default()
                },
            )
            .await;
            match created {
                Ok(c) => (c.id, true, None),
                // Another message of the same new person created them just now.
                Err(e) => (existing_contact(&e).ok_or(e)?, false, None),
            }
        }
    };
    let now = state.now_ms();
    let channel = db::lookups::active_channel(conn, org, body.channel_type)
        .await?
        .ok_or_else(|| {
            ApiError::invalid(format!(
                "channelType {} is not active in this organization",
                body.channel_type
            ))
        })?;
    let txn = state.db.write().await?;
    if let Some(id) = message_id
        && !first_sight(&*txn, id, now).await?
    {
        // Applied meanwhile by another worker: dropping the transaction undoes nothing.
        return Ok(None);
    }
    if let Some(contact) = &unknown_form {
        // Their platform id from now on, so the next message finds them at once.
        platform::remember(&*txn, contact, &external, now).await?;
    }
    // When the customer wrote, as the platform says (never in the future).
    let written_at = at_ms.map_or(now, |at| at.min(now));
    let touched = crate::services::conversations::touch_from_contact(
        &*txn,
        org,
        contact_id,
        channel.id,
        body.channel_type,
        written_at,
        now,
    )
    .await?;
    let received = messages::Received {
        org,
        conversation: touched,
        contact: contact_id,
        content,
        context_id: replied_to,
        platform: source.as_ref().map(|s| messages::Platform {
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
        created,
        replied_campaign,
    }))
}

/// The person moved their account to a new number (a platform notice with its id): the
/// contact's identity and phone follow ([`platform::change_number`]), once per notice.
pub async fn number_changed(
    state: &AppState,
    org: Uuid,
    message_id: &str,
    from: &str,
    to: &str,
) -> ApiResult<bool> {
    let now = state.now_ms();
    let txn = state.db.write().await?;
    if !first_sight(&*txn, message_id, now).await? {
        return Ok(false);
    }
    let changed = platform::change_number(&*txn, org, from, to, now).await?;
    txn.commit().await?;
    Ok(changed)
}

/// The person stopped (`stop`) or resumed marketing messages from the chat: the contact
/// their platform id names follows ([`platform::set_opted_out`]); a person who is no
/// contact changes nothing.
pub async fn marketing_preference(
    state: &AppState,
    org: Uuid,
    wa_id: &str,
    stop: bool,
) -> ApiResult<bool> {
    let now = state.now_ms();
    let txn = state.db.write().await?;
    let Some(Resolved { contact, known }) = platform::resolve(&*txn, org, wa_id).await? else {
        return Ok(false);
    };
    if !known {
        platform::remember(&*txn, &contact, wa_id, now).await?;
    }
    let reason = if stop {
        "The person stopped marketing messages from the chat"
    } else {
        "The person resumed marketing messages from the chat"
    };
    let changed = platform::set_opted_out(&*txn, org, contact.id, stop, reason, now).await?;
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

/// The contact a `CONTACT_PHONE_EXISTS` conflict names.
fn existing_contact(e: &ApiError) -> Option<Uuid> {
    match e {
        ApiError::Business {
            code: Some(ErrorCode::ContactPhoneExists),
            extra,
            ..
        } => extra.get("contactId")?.as_str()?.parse().ok(),
        _ => None,
    }
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
    };
    let applied = crate::services::sending::receipts::apply(&*txn, Some(org), &update, now).await?
        == crate::services::sending::receipts::Applied::Moved;
    txn.commit().await?;
    Ok(applied)
}
