//! Messages (`wm_types::messages`): a row with its stored parts and its media; a campaign
//! message shows its recipient's status, error and cost (the recipient row is the one
//! record of a campaign send's progress). Media and recipients are read once per batch.

use sea_orm::{ConnectionTrait, DbErr};
use wm_types::enums::RecipientStatus;
use wm_types::messages::{Message, MessageMedia, MessageReaction, MessageStatus, SentBy};
use wm_types::{Money, Timestamp};

use crate::db::entities::{media, message, recipient};
use crate::db::messages::{MEDIA_STORED, stored_of};

/// Builds wire messages, in the order given.
pub async fn load(
    conn: &impl ConnectionTrait,
    rows: Vec<message::Model>,
) -> Result<Vec<Message>, DbErr> {
    let ids = rows.iter().filter_map(|m| m.media_id).collect();
    let media = crate::db::by_id::<media::Entity>(conn, ids, |m| m.id).await?;
    let ids = rows.iter().filter_map(|m| m.recipient_id).collect();
    let recipients = crate::db::by_id::<recipient::Entity>(conn, ids, |r| r.id).await?;
    Ok(rows
        .into_iter()
        .map(|m| {
            let file = m.media_id.and_then(|id| media.get(&id));
            let sent_to = m.recipient_id.and_then(|id| recipients.get(&id));
            view(m, file, sent_to)
        })
        .collect())
}

/// A campaign recipient's status as its message's.
pub fn status_of(r: &recipient::Model) -> MessageStatus {
    match r.status {
        RecipientStatus::Sent => MessageStatus::Sent,
        RecipientStatus::Delivered => MessageStatus::Delivered,
        RecipientStatus::Read | RecipientStatus::Replied => MessageStatus::Read,
        RecipientStatus::Failed => MessageStatus::Failed,
        _ => MessageStatus::Pending,
    }
}

fn view(
    mut m: message::Model,
    file: Option<&media::Model>,
    sent_to: Option<&recipient::Model>,
) -> Message {
    if let Some(r) = sent_to {
        m.status = status_of(r);
        m.error_message = r.error_message.clone();
        m.cost_micros = Some(r.cost_micros);
    }
    let stored = stored_of(&m);
    let media = file.map(|f| MessageMedia {
        id: f.id,
        mime_type: f.mime_type.clone(),
        size: f.size.and_then(|n| u64::try_from(n).ok()),
        filename: stored.filename.clone().or_else(|| f.filename.clone()),
        caption: m.body.clone(),
        stored: f.status == MEDIA_STORED,
    });
    Message {
        id: m.id,
        conversation_id: m.conversation_id,
        contact_id: m.contact_id,
        direction: m.direction,
        message_type: m.message_type,
        text: m.body,
        media,
        template: stored.template,
        interactive: stored.interactive,
        location: stored.location,
        contacts: stored.contacts,
        reaction: stored.reaction.map(|r| MessageReaction {
            message_id: r.message_id,
            emoji: r.emoji,
        }),
        story: stored.story,
        order: stored.order,
        reply_to_message_id: m.reply_to_id,
        status: m.status,
        error_message: m.error_message,
        cost: m.cost_micros.map(Money),
        sent_by: m
            .sent_by_kind
            .zip(m.sent_by_id)
            .map(|(kind, id)| SentBy { kind, id }),
        created_at: Timestamp::from_millis(m.created_at),
    }
}
