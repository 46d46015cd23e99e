//! Messages (`wm_types::messages`): a row with its stored parts and its media, the media
//! rows read once for the whole batch.

use sea_orm::{ConnectionTrait, DbErr};
use wm_types::messages::{Message, MessageMedia, MessageReaction, SentBy};
use wm_types::{Money, Timestamp};

use crate::db::entities::{media, message};
use crate::db::messages::{MEDIA_STORED, stored_of};

/// Builds wire messages, in the order given.
pub async fn load(
    conn: &impl ConnectionTrait,
    rows: Vec<message::Model>,
) -> Result<Vec<Message>, DbErr> {
    let ids = rows.iter().filter_map(|m| m.media_id).collect();
    let media = crate::db::by_id::<media::Entity>(conn, ids, |m| m.id).await?;
    Ok(rows
        .into_iter()
        .map(|m| {
            let file = m.media_id.and_then(|id| media.get(&id));
            view(m, file)
        })
        .collect())
}

fn view(m: message::Model, file: Option<&media::Model>) -> Message {
    let stored = stored_of(&m);
    let media = file.map(|f| MessageMedia {
        id: f.id,
        mime_type: f.mime_type.clone(),
        size: f.size.and_then(|n| u64::try_from(n).ok()),
        filename: f.filename.clone(),
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
