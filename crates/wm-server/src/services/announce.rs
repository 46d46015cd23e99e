//! The message and conversation events (`message.received`, `message.sent`,
//! `conversation.*`), announced from one place with the row as the API shows it now, and
//! only when a webhook of the organisation takes them.

use sea_orm::{ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter};
use uuid::Uuid;
use wm_types::events::{ConversationEventData, EventKind};
use wm_types::messages::{MessageDirection, MessageEventData};

use crate::db::Unique;
use crate::db::entities::{conversation, message};
use crate::db::outbox;
use crate::views;

/// `message.sent` again for a campaign recipient's message whose status moved, if a webhook
/// takes it.
pub async fn recipient(
    conn: &impl ConnectionTrait,
    org: Uuid,
    recipient: Uuid,
    now: i64,
) -> Result<(), DbErr> {
    if !outbox::wanted(conn, org, EventKind::MessageSent).await? {
        return Ok(());
    }
    let row = message::Entity::find()
        .filter(message::Column::RecipientId.eq(recipient))
        .one(conn)
        .await?;
    match row {
        Some(row) => message(conn, org, row, now).await,
        None => Ok(()),
    }
}

/// `message.sent` for the campaign messages of `recipients` (in that order), if a webhook
/// takes it: what a batch of statuses moved, announced with a few queries rather than a few
/// per message.
pub async fn recipients(
    conn: &impl ConnectionTrait,
    org: Uuid,
    recipients: &[Uuid],
    now: i64,
) -> Result<(), DbErr> {
    if recipients.is_empty() || !outbox::wanted(conn, org, EventKind::MessageSent).await? {
        return Ok(());
    }
    let rows = message::Entity::find()
        .filter(message::Column::RecipientId.is_in(recipients.to_vec()))
        .all(conn)
        .await?;
    let mut by_recipient: std::collections::HashMap<Uuid, message::Model> = rows
        .into_iter()
        .filter_map(|m| Some((m.recipient_id?, m)))
        .collect();
    let ordered: Vec<message::Model> = recipients
        .iter()
        .filter_map(|r| by_recipient.remove(r))
        .collect();
    let data: Vec<MessageEventData> = views::messages::load(conn, ordered)
        .await?
        .into_iter()
        .map(|message| MessageEventData {
            organization_id: org,
            message,
        })
        .collect();
    outbox::push_many(conn, org, EventKind::MessageSent, &data, now).await?;
    Ok(())
}

/// `message.received` or `message.sent` of a message row (its current status), if a webhook
/// takes it.
pub async fn message(
    conn: &impl ConnectionTrait,
    org: Uuid,
    row: message::Model,
    now: i64,
) -> Result<(), DbErr> {
    let kind = if row.direction == MessageDirection::Inbound {
        EventKind::MessageReceived
    } else {
        EventKind::MessageSent
    };
    if !outbox::wanted(conn, org, kind).await? {
        return Ok(());
    }
    let Some(message) = views::messages::load(conn, vec![row]).await?.pop() else {
        return Ok(());
    };
    let data = MessageEventData {
        organization_id: org,
        message,
    };
    outbox::push(conn, org, kind, &data, now).await?;
    Ok(())
}

/// A `conversation.*` event with the conversation as it is now, if a webhook takes it.
pub async fn conversation(
    conn: &impl ConnectionTrait,
    org: Uuid,
    id: Uuid,
    kind: EventKind,
    now: i64,
) -> Result<(), DbErr> {
    if !outbox::wanted(conn, org, kind).await? {
        return Ok(());
    }
    let Some(row) = conversation::Entity::find_by_id(id).unique(conn).await? else {
        return Ok(());
    };
    let Some(conversation) = views::conversations::load(conn, vec![row]).await?.pop() else {
        return Ok(());
    };
    let data = ConversationEventData {
        organization_id: org,
        conversation,
    };
    outbox::push(conn, org, kind, &data, now).await?;
    Ok(())
}
