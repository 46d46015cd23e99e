//! Messages of conversations: keeping what a customer sent (with its media to fetch and the
//! `message.received` and `conversation.opened` events), and reading a thread.

use sea_orm::{
    ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
};
use uuid::Uuid;
use wm_core::platform::Content;
use wm_core::provider::{OutboundContent, OutboundMessage};
use wm_types::enums::{ChannelType, ConversationStatus};
use wm_types::events::EventKind;
use wm_types::messages::{
    CursorMeta, ListMessagesQuery, MessageDirection, MessageList, MessageStatus, MessageTemplate,
    MessageType, SenderKind,
};

use crate::db::Unique;
use crate::db::entities::{conversation, message};
use crate::db::messages::{self, NewMedia, NewMessage, Stored, StoredReaction, Thread};
use crate::error::{ApiError, ApiResult};
use crate::services::conversations::Touched;
use crate::state::AppState;
use crate::views;

/// The platform a message came through.
#[derive(Debug, Clone, Copy)]
pub struct Platform<'a> {
    /// Its name, as its intake's.
    pub provider: &'static str,
    /// Its id of the message.
    pub message_id: &'a str,
    /// The business number written to (WhatsApp).
    pub number: Option<Uuid>,
    /// The account written to: the number's row, or the connected channel's (its files are
    /// fetched with that account).
    pub account: Uuid,
    /// How long the platform keeps a file the person sent (wm fetches it before, and gives
    /// up after).
    pub media_ttl_ms: i64,
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
    /// A file wm keeps already (a website visitor's upload): the message's, nothing to fetch.
    pub stored_media: Option<Uuid>,
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
    // A file is fetched from the platform it came through: none, no media row; one wm
    // keeps already is the message's as it is.
    let media_id = r.stored_media.or_else(|| {
        c.media
            .as_ref()
            .filter(|_| r.platform.is_some())
            .map(|_| Uuid::now_v7())
    });
    let stored = Stored {
        platform_type: (c.kind == wm_types::messages::MessageType::Unsupported)
            .then(|| c.platform_type.clone()),
        location: c.location,
        interactive: c.interactive,
        contacts: c.contacts,
        reaction,
        story: c.story.map(|s| wm_types::messages::MessageStory {
            kind: s.kind.to_owned(),
            url: s.url,
            id: s.id,
        }),
        order: c.order,
        template: None,
        filename: None,
    };
    let row = messages::insert(
        conn,
        NewMessage {
            organization_id: org,
            conversation_id: Some(r.conversation.id),
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
            recipient_id: None,
            phone_number_id: r.platform.and_then(|p| p.number),
            // The thread is in the order wm received its messages: the platform's time has
            // whole seconds, so a quick answer would sort before the message it answers.
            created_at: now,
        },
    )
    .await?;
    if let Some(id) = r.stored_media {
        use sea_orm::sea_query::Expr;
        crate::db::entities::media::Entity::update_many()
            .col_expr(
                crate::db::entities::media::Column::MessageId,
                Expr::val(row.id),
            )
            .filter(crate::db::entities::media::Column::Id.eq(id))
            .exec(conn)
            .await?;
    } else if let (Some(id), Some(media), Some(p)) = (media_id, c.media, r.platform) {
        let file = NewMedia {
            organization_id: org,
            message_id: row.id,
            phone_number_id: Some(p.account),
            provider: p.provider.to_owned(),
            platform_media_id: media.platform_id,
            mime_type: media.mime_type,
            sha256: media.sha256,
            filename: media.filename,
            expires_at: r.written_at + p.media_ttl_ms,
            created_at: now,
        };
        messages::insert_media(conn, file, id).await?;
    }
    let id = row.id;
    crate::services::announce::message(conn, org, row, now).await?;
    if r.conversation.opened {
        crate::services::announce::conversation(
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

/// An outbound template message the platform accepted.
#[derive(Debug, Clone, Copy)]
pub struct Outbound<'a> {
    /// Organisation.
    pub org: Uuid,
    /// The contact it went to.
    pub contact: Uuid,
    /// The platform's id of it.
    pub platform_message_id: &'a str,
    /// The call made.
    pub message: &'a OutboundMessage,
    /// The template in wm.
    pub template_id: Option<Uuid>,
    /// What it cost.
    pub cost_micros: i64,
    /// Who sent it.
    pub sent_by: (SenderKind, Uuid),
    /// The campaign recipient it was sent to (its status is the recipient's).
    pub recipient_id: Option<Uuid>,
    /// The business number it was sent from.
    pub phone_number_id: Uuid,
}

/// The contact's conversation on a channel that is not resolved (their newest), where a
/// message the business sends them joins; `None`: it waits for the one their next message
/// opens.
pub async fn open_conversation(
    conn: &impl ConnectionTrait,
    org: Uuid,
    contact: Uuid,
    channel: ChannelType,
) -> Result<Option<Uuid>, DbErr> {
    conversation::Entity::find()
        .select_only()
        .column(conversation::Column::Id)
        .filter(conversation::Column::OrganizationId.eq(org))
        .filter(conversation::Column::ContactId.eq(contact))
        .filter(conversation::Column::ChannelType.eq(channel))
        .filter(conversation::Column::Status.ne(ConversationStatus::Resolved))
        .order_by_desc(conversation::Column::UpdatedAt)
        .into_tuple()
        .one(conn)
        .await
}

/// The stored template of a template message.
fn template_of(m: &OutboundMessage, template_id: Option<Uuid>) -> Stored {
    let template = match &m.content {
        OutboundContent::Template {
            name,
            language,
            parameters,
        } => Some(MessageTemplate {
            template_id,
            name: name.clone(),
            language: language.clone(),
            variables: parameters.clone(),
        }),
        _ => None,
    };
    Stored {
        template,
        ..Default::default()
    }
}

/// Keeps a template message the business sent (a campaign's) in the contact's thread, in
/// the caller's transaction: in their conversation on the platform's channel when one is
/// not resolved, else waiting for the conversation their next message opens. Announced as
/// `message.sent`.
pub async fn record_outbound(
    conn: &impl ConnectionTrait,
    o: Outbound<'_>,
    now: i64,
) -> Result<(), DbErr> {
    let row = template_row(conn, &o, MessageStatus::Sent, now).await?;
    crate::services::announce::message(conn, o.org, row, now).await
}

/// A template message queued to be sent (an automation's): PENDING in the contact's thread
/// (their open conversation, else waiting for one), charged `cost_micros`, from the number
/// `phone_number_id`; the sender that makes its call settles it (its `platform_message_id`
/// and `recipient_id` are not read).
pub async fn queue_template(
    conn: &impl ConnectionTrait,
    o: Outbound<'_>,
    now: i64,
) -> Result<message::Model, DbErr> {
    template_row(conn, &o, MessageStatus::Pending, now).await
}

/// The thread's row of template message `o` at `status`: a sent one carries the platform's
/// id and the campaign recipient, a pending one neither yet.
async fn template_row(
    conn: &impl ConnectionTrait,
    o: &Outbound<'_>,
    status: MessageStatus,
    now: i64,
) -> Result<message::Model, DbErr> {
    let open = open_conversation(conn, o.org, o.contact, ChannelType::MessagingAppA).await?;
    let sent = status != MessageStatus::Pending;
    let m = o.message;
    messages::insert(
        conn,
        NewMessage {
            organization_id: o.org,
            conversation_id: open,
            contact_id: o.contact,
            direction: MessageDirection::Outbound,
            message_type: MessageType::Template,
            body: Some(m.body.clone()),
            stored: template_of(m, o.template_id),
            media_id: None,
            reply_to_id: None,
            platform_message_id: sent.then(|| o.platform_message_id.to_owned()),
            status,
            cost_micros: Some(o.cost_micros),
            sent_by: Some(o.sent_by),
            recipient_id: o.recipient_id.filter(|_| sent),
            phone_number_id: Some(o.phone_number_id),
            created_at: now,
        },
    )
    .await
}

/// `GET /conversations/{id}/messages`: newest first, `before` a message of the thread.
pub async fn list(
    state: &AppState,
    org: Uuid,
    conversation: Uuid,
    q: &ListMessagesQuery,
) -> ApiResult<MessageList> {
    // The conversation must be one the caller can read (its channel active).
    crate::services::conversations::get(state, org, conversation).await?;
    let cursor = |m: &message::Model| m.conversation_id == Some(conversation);
    let wrong = "before must be the id of a message of this conversation";
    page(
        state,
        org,
        Thread::Conversation(conversation),
        q,
        cursor,
        wrong,
    )
    .await
}

/// `GET /contacts/{id}/messages`: the contact's whole history newest first, across every
/// conversation and channel, with the campaign and automation messages sent to someone who
/// never wrote (which belong to no conversation yet).
pub async fn of_contact(
    state: &AppState,
    org: Uuid,
    contact: Uuid,
    q: &ListMessagesQuery,
) -> ApiResult<MessageList> {
    crate::db::contacts::find(&state.db.conn, org, contact)
        .await?
        .ok_or_else(|| ApiError::not_found("Contact"))?;
    let cursor = |m: &message::Model| m.contact_id == contact;
    let wrong = "before must be the id of a message of this contact";
    page(state, org, Thread::Contact(contact), q, cursor, wrong).await
}

/// A keyset page of `thread`: `before` must be one of its messages (`of_thread`).
async fn page(
    state: &AppState,
    org: Uuid,
    thread: Thread,
    q: &ListMessagesQuery,
    of_thread: impl Fn(&message::Model) -> bool,
    wrong_cursor: &str,
) -> ApiResult<MessageList> {
    let conn = &state.db.conn;
    let before = match q.before {
        Some(id) => {
            let m = message::Entity::find_by_id(id)
                .unique(conn)
                .await?
                .filter(|m| m.organization_id == org && of_thread(m))
                .ok_or_else(|| ApiError::invalid(wrong_cursor))?;
            Some((m.created_at, m.id))
        }
        None => None,
    };
    let page_size = q.page_size.unwrap_or(50);
    let mut rows = messages::page(conn, thread, before, page_size + 1).await?;
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
