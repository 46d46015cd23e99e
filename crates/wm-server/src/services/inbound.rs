//! Messages from contacts and status callbacks from the messaging platform (operator routes
//! that stand in for the platform's webhooks).

use crate::db::Unique;
use sea_orm::sea_query::OnConflict;
use sea_orm::{ActiveValue::Set, ConnectionTrait, DbErr, EntityTrait};
use uuid::Uuid;
use wm_core::provider::StatusUpdate;
use wm_types::campaigns::{Inbound, ProviderEvent};
use wm_types::contacts::CreateContact;
use wm_types::enums::ErrorCode;
use wm_types::enums::{ChannelType, ContactSource};

use crate::auth::AuthContext;
use crate::db;
use crate::db::entities::platform_inbound_seen;
use crate::error::{ApiError, ApiResult};
use crate::services::contacts::platform::{self, Resolved};
use crate::services::{contacts, sending};
use crate::state::AppState;

/// What an inbound message did.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InboundResult {
    /// The contact it came from.
    pub contact_id: Uuid,
    /// The OPEN conversation it landed in.
    pub conversation_id: Uuid,
    /// Whether that contact was created now.
    pub created: bool,
    /// Whether a campaign message of theirs was marked REPLIED.
    pub replied_campaign: bool,
}

/// A message from a contact: finds or creates the contact (source
/// MESSAGING_APP_A_INBOUND) and marks their latest SENT/DELIVERED/READ campaign message
/// REPLIED. It lands in the contact's OPEN conversation on that channel (opened if needed).
pub async fn inbound(state: &AppState, org: Uuid, body: Inbound) -> ApiResult<InboundResult> {
    let applied = apply(state, org, body, None, None).await?;
    // Only a platform message id is ever found seen.
    applied.ok_or_else(|| ApiError::Internal(anyhow::anyhow!("an unnamed message was seen")))
}

/// [`inbound`] for a message the platform delivered with its id (`replied_to`: the
/// platform's id of the campaign message it quotes, which is marked REPLIED rather than the
/// latest). The platform redelivers a message until acknowledged (and at times after
/// that), so the id is remembered in the transaction that applies the message: a message is
/// recognised as seen exactly when its effects are in, and a failure (or a crash) leaves it
/// to the next delivery or retry. `None`: seen before, nothing done.
pub async fn platform_message(
    state: &AppState,
    org: Uuid,
    body: Inbound,
    replied_to: Option<&str>,
    message_id: &str,
) -> ApiResult<Option<InboundResult>> {
    apply(state, org, body, replied_to, Some(message_id)).await
}

async fn apply(
    state: &AppState,
    org: Uuid,
    body: Inbound,
    replied_to: Option<&str>,
    message_id: Option<&str>,
) -> ApiResult<Option<InboundResult>> {
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
    // WhatsApp's id may be another spelling of the number the contact was stored with.
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
    let conversation_id = crate::services::conversations::touch_from_contact(
        &*txn,
        org,
        contact_id,
        channel.id,
        body.channel_type,
        now,
    )
    .await?;
    let replied_campaign = sending::mark_replied(&*txn, org, contact_id, replied_to, now).await?;
    txn.commit().await?;
    Ok(Some(InboundResult {
        contact_id,
        conversation_id,
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
        "The person stopped marketing messages on WhatsApp"
    } else {
        "The person resumed marketing messages on WhatsApp"
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
