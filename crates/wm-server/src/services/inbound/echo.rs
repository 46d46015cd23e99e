//! What the platform reports of the business's own messages: an echo of a message sent
//! outside wm (a reply typed in Meta's own inbox, another app on the Page) kept in the
//! thread as the business's, once; an echo of wm's own send recognised and left alone; and a
//! delivery or read watermark moving every message sent before it forward.

use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};
use uuid::Uuid;
use wm_core::platform::{EchoMessage, Person};
use wm_core::provider::StatusUpdate;
use wm_types::enums::RecipientStatus;
use wm_types::messages::{MessageDirection, MessageStatus};

use super::At;
use super::seen::{self, Key};
use crate::db::entities::{conversation, message};
use crate::db::messages::{self as rows, NewMessage, Stored};
use crate::error::ApiResult;
use crate::provider::Provider;
use crate::services::contacts::platform::{self, On};
use crate::services::outbound::status as statuses;
use crate::state::AppState;

/// The contact's conversation on the account's channel (the newest), if any.
async fn conversation_of(
    conn: &impl sea_orm::ConnectionTrait,
    org: Uuid,
    contact: Uuid,
    at: At,
    on: On,
) -> Result<Option<conversation::Model>, sea_orm::DbErr> {
    let q = conversation::Entity::find()
        .filter(conversation::Column::OrganizationId.eq(org))
        .filter(conversation::Column::ContactId.eq(contact))
        .filter(conversation::Column::ChannelType.eq(on.kind));
    let q = match at {
        At::Channel(id) => q.filter(conversation::Column::ChannelId.eq(id)),
        At::Number(_) => q,
    };
    q.order_by_desc(conversation::Column::UpdatedAt)
        .one(conn)
        .await
}

/// An echo: wm's own send (its platform id is known) changes nothing; a message the business
/// sent elsewhere joins the person's conversation as OUTBOUND, SENT, once (remembered in the
/// transaction that keeps it). A person wm does not know, or who has no conversation on the
/// channel, is not written to from wm's side of the thread: logged and dropped.
pub async fn apply(
    state: &AppState,
    org: Uuid,
    provider: &std::sync::Arc<Provider>,
    at: At,
    m: EchoMessage,
) -> ApiResult<bool> {
    let conn = &state.db.conn;
    let key = Key {
        provider: provider.name(),
        account: &m.account,
        message_id: &m.message_id,
    };
    if seen::was_seen(conn, key).await? {
        return Ok(false);
    }
    if rows::by_platform_id(conn, org, &m.message_id)
        .await?
        .is_some()
    {
        // wm sent it: the send's answer already recorded it.
        return Ok(false);
    }
    let on = On::of(provider.descriptor);
    let Some(person) = platform::resolve_person(conn, org, on, &m.to).await? else {
        tracing::info!(%org, message = %m.message_id, "an echo to a person wm does not know is not kept");
        return Ok(false);
    };
    let Some(c) = conversation_of(conn, org, person.contact.id, at, on).await? else {
        tracing::info!(%org, message = %m.message_id, "an echo outside any conversation is not kept");
        return Ok(false);
    };
    let now = state.now_ms();
    let txn = state.db.write().await?;
    if !seen::first_sight(&*txn, key, now).await? {
        return Ok(false);
    }
    let content = m.content;
    let stored = Stored {
        interactive: content.interactive,
        location: content.location,
        contacts: content.contacts,
        order: content.order,
        ..Stored::default()
    };
    let row = rows::insert(
        &*txn,
        NewMessage {
            organization_id: org,
            conversation_id: Some(c.id),
            contact_id: person.contact.id,
            direction: MessageDirection::Outbound,
            message_type: content.kind,
            body: content.text,
            stored,
            media_id: None,
            reply_to_id: None,
            platform_message_id: Some(m.message_id.clone()),
            status: MessageStatus::Sent,
            cost_micros: None,
            sent_by: None,
            recipient_id: None,
            phone_number_id: match at {
                At::Number(id) => Some(id),
                At::Channel(_) => None,
            },
            created_at: now,
        },
    )
    .await?;
    crate::services::announce::message(&*txn, org, row, now).await?;
    txn.commit().await?;
    state.db.ring(person.contact.id).await;
    Ok(true)
}

/// A delivery or read watermark.
pub struct Watermark<'a> {
    /// DELIVERED or READ.
    pub status: RecipientStatus,
    /// Every message sent at or before this instant.
    pub upto_ms: Option<i64>,
    /// Messages named: these and every earlier one of the conversation.
    pub message_ids: &'a [String],
}

/// Moves the business's messages to the person forward: every one of their conversation on
/// the channel sent at or before the watermark (or before the last message it names) that
/// is behind it, through the one status applier (events included). Statuses never move
/// back, so a late or repeated watermark changes nothing.
pub async fn watermark(
    state: &AppState,
    org: Uuid,
    on: On,
    at: At,
    person: &Person,
    mark: Watermark<'_>,
) -> ApiResult<usize> {
    let conn = &state.db.conn;
    let Some(found) = platform::resolve_person(conn, org, on, person).await? else {
        return Ok(0);
    };
    let Some(c) = conversation_of(conn, org, found.contact.id, at, on).await? else {
        return Ok(0);
    };
    let mut upto = mark.upto_ms;
    for id in mark.message_ids {
        if let Some(m) = rows::by_platform_id(conn, org, id).await? {
            upto = Some(upto.map_or(m.created_at, |u| u.max(m.created_at)));
        }
    }
    let Some(upto) = upto else { return Ok(0) };
    let behind: &[MessageStatus] = match mark.status {
        RecipientStatus::Read => &[MessageStatus::Sent, MessageStatus::Delivered],
        _ => &[MessageStatus::Sent],
    };
    let due = message::Entity::find()
        .filter(message::Column::ConversationId.eq(c.id))
        .filter(message::Column::Direction.eq(MessageDirection::Outbound))
        .filter(message::Column::Status.is_in(behind.iter().copied()))
        .filter(message::Column::PlatformMessageId.is_not_null())
        .filter(message::Column::CreatedAt.lte(upto))
        .all(conn)
        .await?;
    if due.is_empty() {
        return Ok(0);
    }
    let now = state.now_ms();
    let txn = state.db.write().await?;
    for m in &due {
        let update = StatusUpdate {
            provider_message_id: m.platform_message_id.clone().unwrap_or_default(),
            correlation_id: Some(m.id.to_string()),
            status: mark.status,
            at_ms: mark.upto_ms,
            error: None,
            opt_out: false,
            recipient: None,
            recipient_user_id: None,
        };
        statuses::apply(&*txn, Some(org), &update, now).await?;
    }
    txn.commit().await?;
    state.db.ring(found.contact.id).await;
    Ok(due.len())
}
