//! Messages of conversations: keeping what a customer sent (with its media to fetch and the
//! `message.received` and `conversation.opened` events), and reading a thread.

use sea_orm::{ConnectionTrait, EntityTrait};
use uuid::Uuid;
use wm_core::platform::Content;
use wm_types::events::{ConversationEventData, EventKind};
use wm_types::messages::{
    CursorMeta, ListMessagesQuery, MessageDirection, MessageEventData, MessageList, MessageStatus,
};

use crate::db::Unique;
use crate::db::entities::{conversation, message};
use crate::db::messages::{self, NewMedia, NewMessage, Stored, StoredReaction};
use crate::db::outbox;
use crate::error::{ApiError, ApiResult};
use crate::services::conversations::Touched;
use crate::state::AppState;
use crate::views;

/// How long a platform keeps an inbound media file (WhatsApp: 7 days); wm fetches it well
/// before, and gives up after.
pub const PLATFORM_MEDIA_TTL_MS: i64 = 7 * 24 * 3_600_000;

/// The platform a message came through.
#[derive(Debug, Clone, Copy)]
pub struct Platform<'a> {
    /// Its name (`whatsapp`).
    pub provider: &'static str,
    /// Its id of the message.
    pub message_id: &'a str,
    /// The business number written to.
    pub number: Uuid,
}

/// A customer's message, to keep.
#[derive(Debug, Clone)]
pub struct Received<'a> {
    /// Organisation.
    pub org: Uuid,
    /// The conversation it landed in.
    pub conversation: Touched,
    /// Its contact.
    pub contact: Uuid,
    /// What it holds.
    pub content: Content,
    /// The platform's id of the message it quotes.
    pub context_id: Option<&'a str>,
    /// Where it came from (none: the operator's stand-in).
    pub platform: Option<Platform<'a>>,
    /// When the customer wrote it.
    pub written_at: i64,
}

/// Keeps a customer's message in its conversation, in the caller's transaction, with a
/// media row to fetch and its events; returns its id.
pub async fn record_inbound(
    conn: &impl ConnectionTrait,
    r: Received<'_>,
    now: i64,
) -> ApiResult<Uuid> {
    let org = r.org;
    let quoted = |id: Option<String>| async move {
        match id {
            Some(id) => Ok::<_, ApiError>(
                messages::by_platform_id(conn, org, &id)
                    .await?
                    .map(|m| m.id),
            ),
            None => Ok(None),
        }
    };
    let reply_to_id = quoted(r.context_id.map(str::to_owned)).await?;
    let c = r.content;
    let reaction = match c.reaction {
        Some((target, emoji)) => Some(StoredReaction {
            message_id: quoted(Some(target)).await?,
            emoji,
        }),
        None => None,
    };
    let media_id = c.media.as_ref().map(|_| Uuid::now_v7());
    let stored = Stored {
        platform_type: (c.kind == wm_types::messages::MessageType::Unsupported)
            .then(|| c.platform_type.clone()),
        location: c.location,
        interactive: c.interactive,
        contacts: c.contacts,
        reaction,
        order: c.order,
        template: None,
    };
    let row = messages::insert(
        conn,
        NewMessage {
            organization_id: org,
            conversation_id: r.conversation.id,
            contact_id: r.contact,
            direction: MessageDirection::Inbound,
            message_type: c.kind,
            body: c.text,
            stored,
            media_id,
            reply_to_id,
            platform_message_id: r.platform.map(|p| p.message_id.to_owned()),
            status: MessageStatus::Received,
            cost_micros: None,
            sent_by: None,
            created_at: r.written_at,
        },
    )
    .await?;
    if let (Some(id), Some(media), Some(p)) = (media_id, c.media, r.platform) {
        let file = NewMedia {
            organization_id: org,
            message_id: row.id,
            phone_number_id: Some(p.number),
            provider: p.provider.to_owned(),
            platform_media_id: media.platform_id,
            mime_type: media.mime_type,
            sha256: media.sha256,
            filename: media.filename,
            expires_at: r.written_at + PLATFORM_MEDIA_TTL_MS,
            created_at: now,
        };
        messages::insert_media(conn, file, id).await?;
    }
    let id = row.id;
    announce(conn, org, row, now).await?;
    if r.conversation.opened {
        announce_conversation(
            conn,
            org,
            r.conversation.id,
            EventKind::ConversationOpened,
            now,
        )
        .await?;
    }
    Ok(id)
}

/// `message.received` or `message.sent` of a message row (its current status), if a webhook
/// takes it.
pub async fn announce(
    conn: &impl ConnectionTrait,
    org: Uuid,
    row: message::Model,
    now: i64,
) -> ApiResult<()> {
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
pub async fn announce_conversation(
    conn: &impl ConnectionTrait,
    org: Uuid,
    id: Uuid,
    kind: EventKind,
    now: i64,
) -> ApiResult<()> {
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

/// `GET /conversations/{id}/messages`: newest first, `before` a message of the thread.
pub async fn list(
    state: &AppState,
    org: Uuid,
    conversation: Uuid,
    q: &ListMessagesQuery,
) -> ApiResult<MessageList> {
    let conn = &state.db.conn;
    // The conversation must be one the caller can read (its channel active).
    crate::services::conversations::get(state, org, conversation).await?;
    let before = match q.before {
        Some(id) => {
            let m = message::Entity::find_by_id(id)
                .unique(conn)
                .await?
                .filter(|m| m.conversation_id == conversation && m.organization_id == org)
                .ok_or_else(|| {
                    ApiError::invalid("before must be the id of a message of this conversation")
                })?;
            Some((m.created_at, m.id))
        }
        None => None,
    };
    let page_size = q.page_size.unwrap_or(50);
    let mut rows = messages::page(conn, conversation, before, page_size + 1).await?;
    let has_more = rows.len() as u64 > page_size;
    rows.truncate(usize::try_from(page_size).unwrap_or(usize::MAX));
    Ok(MessageList {
        data: views::messages::load(conn, rows).await?,
        meta: CursorMeta {
            page_size,
            has_more,
        },
    })
}
