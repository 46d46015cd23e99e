//! Message queries: a thread's or a contact's page newest first by keyset (`(created_at, id)`
//! through `ix_messages_thread` or `ix_messages_contact_history`, so the thousandth page
//! costs what the first does), a message by
//! the platform's id, and the writes of a new message with its media row.

use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveValue::Set, ColumnTrait, Condition, ConnectionTrait, DbErr, EntityTrait, QueryFilter,
    QueryOrder, QuerySelect,
};
use serde::{Deserialize, Serialize};
use uuid::Uuid;
use wm_types::messages::{
    MessageDirection, MessageInteractive, MessageLocation, MessageStatus, MessageTemplate,
    MessageType, SenderKind,
};

use crate::db::entities::{conversation, media, message};

/// The parts of a message beyond its text, kept as JSON in `messages.content`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Stored {
    /// The platform's own name of the kind (`unsupported`, a kind added later…).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform_type: Option<String>,
    /// Location.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<MessageLocation>,
    /// Interactive reply or buttons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interactive: Option<MessageInteractive>,
    /// Contact cards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contacts: Option<Vec<serde_json::Value>>,
    /// Reaction: the message reacted to (when wm has it) and the emoji.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reaction: Option<StoredReaction>,
    /// The story it answers or that mentions the business.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub story: Option<wm_types::messages::MessageStory>,
    /// Order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<serde_json::Value>,
    /// Template of a template message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<MessageTemplate>,
    /// The file name a sent document shows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
}

/// A stored reaction.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredReaction {
    /// The message reacted to, when wm has it.
    pub message_id: Option<Uuid>,
    /// The emoji (`None`: removed).
    pub emoji: Option<String>,
}

impl Stored {
    /// Whether there is nothing to keep.
    pub fn is_empty(&self) -> bool {
        *self == Stored::default()
    }
}

/// The stored parts of a message row (empty when none; a corrupt value is logged and counted).
pub fn stored_of(m: &message::Model) -> Stored {
    crate::db::stored::json_opt("messages.content", m.id, m.content.as_deref())
}

/// A message to write.
#[derive(Debug, Clone)]
pub struct NewMessage {
    /// Organisation.
    pub organization_id: Uuid,
    /// Conversation (none yet: a campaign message to someone with no open conversation).
    pub conversation_id: Option<Uuid>,
    /// Contact.
    pub contact_id: Uuid,
    /// Direction.
    pub direction: MessageDirection,
    /// Kind.
    pub message_type: MessageType,
    /// Text.
    pub body: Option<String>,
    /// Other parts.
    pub stored: Stored,
    /// Its media row, written by the caller.
    pub media_id: Option<Uuid>,
    /// The message it quotes.
    pub reply_to_id: Option<Uuid>,
    /// The platform's id.
    pub platform_message_id: Option<String>,
    /// Status.
    pub status: MessageStatus,
    /// Cost (outbound).
    pub cost_micros: Option<i64>,
    /// Sender (outbound).
    pub sent_by: Option<(SenderKind, Uuid)>,
    /// The campaign recipient it was sent to, whose status it shows.
    pub recipient_id: Option<Uuid>,
    /// The business number it came to or goes from.
    pub phone_number_id: Option<Uuid>,
    /// When it was written.
    pub created_at: i64,
}

/// Writes a message; returns its row.
pub async fn insert(conn: &impl ConnectionTrait, m: NewMessage) -> Result<message::Model, DbErr> {
    insert_with_id(conn, Uuid::now_v7(), m).await
}

/// [`insert`] under a chosen id (one the caller named already, in a ledger entry).
pub async fn insert_with_id(
    conn: &impl ConnectionTrait,
    id: Uuid,
    m: NewMessage,
) -> Result<message::Model, DbErr> {
    let content = if m.stored.is_empty() {
        None
    } else {
        Some(serde_json::to_string(&m.stored).map_err(|e| DbErr::Custom(e.to_string()))?)
    };
    let seq = match m.conversation_id {
        Some(c) => Some(next_seq(conn, c).await?),
        None => None,
    };
    let row = message::Model {
        id,
        organization_id: m.organization_id,
        conversation_id: m.conversation_id,
        contact_id: m.contact_id,
        direction: m.direction,
        message_type: m.message_type,
        body: m.body,
        content,
        media_id: m.media_id,
        reply_to_id: m.reply_to_id,
        platform_message_id: m.platform_message_id,
        status: m.status,
        error_message: None,
        cost_micros: m.cost_micros,
        sent_by_kind: m.sent_by.map(|(k, _)| k),
        sent_by_id: m.sent_by.map(|(_, id)| id),
        recipient_id: m.recipient_id,
        phone_number_id: m.phone_number_id,
        attempt_at: None,
        retry_at: None,
        retries: 0,
        created_at: m.created_at,
        updated_at: m.created_at,
        seq,
    };
    message::Entity::insert(message::ActiveModel::from(row.clone()))
        .exec_without_returning(conn)
        .await?;
    Ok(row)
}

/// The next sequence number of conversation `c`'s messages. The update holds the
/// conversation's row until the caller's transaction ends, so numbers are taken in the
/// order their messages commit (a stream that read number `n` has missed none below it).
async fn next_seq(conn: &impl ConnectionTrait, c: Uuid) -> Result<i64, DbErr> {
    use sea_orm::sea_query::{Expr, ExprTrait, Query};
    let stmt = Query::update()
        .table(conversation::Entity)
        .value(
            conversation::Column::LastSeq,
            Expr::col(conversation::Column::LastSeq).add(1),
        )
        .and_where(conversation::Column::Id.eq(c))
        .returning_col(conversation::Column::LastSeq)
        .to_owned();
    let row = conn
        .query_one(&stmt)
        .await?
        .ok_or_else(|| DbErr::RecordNotFound(format!("conversation {c}")))?;
    row.try_get_by_index::<i64>(0)
}

/// Gives the contact's messages that wait for a conversation (campaign messages sent while
/// they had none open) to `conversation`.
pub async fn adopt(
    conn: &impl ConnectionTrait,
    contact: Uuid,
    conversation: Uuid,
) -> Result<u64, DbErr> {
    Ok(message::Entity::update_many()
        .col_expr(message::Column::ConversationId, Expr::val(conversation))
        .filter(message::Column::ContactId.eq(contact))
        .filter(message::Column::ConversationId.is_null())
        .exec(conn)
        .await?
        .rows_affected)
}

/// The message of `org` the platform knows as `platform_id`, if wm has it.
pub async fn by_platform_id(
    conn: &impl ConnectionTrait,
    org: Uuid,
    platform_id: &str,
) -> Result<Option<message::Model>, DbErr> {
    message::Entity::find()
        .filter(message::Column::OrganizationId.eq(org))
        .filter(message::Column::PlatformMessageId.eq(platform_id))
        .order_by_asc(message::Column::CreatedAt)
        .one(conn)
        .await
}

/// Whose messages a page lists: one conversation's (`ix_messages_thread`), or one contact's
/// across every conversation and channel, those outside any conversation included
/// (`ix_messages_contact_history`).
#[derive(Debug, Clone, Copy)]
pub enum Thread {
    /// A conversation's thread.
    Conversation(Uuid),
    /// A contact's whole history.
    Contact(Uuid),
}

/// A page of `thread`, newest first, older than the message at `before` (its
/// `(created_at, id)`), by keyset through the thread's index.
pub async fn page(
    conn: &impl ConnectionTrait,
    thread: Thread,
    before: Option<(i64, Uuid)>,
    limit: u64,
) -> Result<Vec<message::Model>, DbErr> {
    let mut q = message::Entity::find().filter(match thread {
        Thread::Conversation(id) => message::Column::ConversationId.eq(id),
        Thread::Contact(id) => message::Column::ContactId.eq(id),
    });
    if let Some((at, id)) = before {
        // `created_at <= at` bounds the index range (the OR alone would make both databases
        // walk every newer message of the thread); the OR then drops the ties at `at`.
        q = q.filter(message::Column::CreatedAt.lte(at)).filter(
            Condition::any()
                .add(message::Column::CreatedAt.lt(at))
                .add(message::Column::Id.lt(id)),
        );
    }
    q.order_by_desc(message::Column::CreatedAt)
        .order_by_desc(message::Column::Id)
        .limit(limit)
        .all(conn)
        .await
}

/// Marks the inbound messages of a conversation up to `at` READ; how many moved.
pub async fn mark_read(
    conn: &impl ConnectionTrait,
    conversation: Uuid,
    at: i64,
    now: i64,
) -> Result<u64, DbErr> {
    Ok(message::Entity::update_many()
        .col_expr(message::Column::Status, Expr::val(MessageStatus::Read))
        .col_expr(message::Column::UpdatedAt, Expr::val(now))
        .filter(message::Column::ConversationId.eq(conversation))
        .filter(message::Column::Direction.eq(MessageDirection::Inbound))
        .filter(message::Column::Status.eq(MessageStatus::Received))
        .filter(message::Column::CreatedAt.lte(at))
        .exec(conn)
        .await?
        .rows_affected)
}

/// A media file to fetch.
#[derive(Debug, Clone)]
pub struct NewMedia {
    /// Organisation.
    pub organization_id: Uuid,
    /// The message it belongs to.
    pub message_id: Uuid,
    /// The business number it came through (whose token fetches it).
    pub phone_number_id: Option<Uuid>,
    /// The platform's name.
    pub provider: String,
    /// The platform's media id.
    pub platform_media_id: String,
    /// MIME type.
    pub mime_type: Option<String>,
    /// Reported SHA-256.
    pub sha256: Option<String>,
    /// File name.
    pub filename: Option<String>,
    /// When the platform forgets it.
    pub expires_at: i64,
    /// Now.
    pub created_at: i64,
}

/// A customer's file, fetched from the platform.
pub const MEDIA_INBOUND: &str = "INBOUND";
/// A file uploaded to send.
pub const MEDIA_UPLOAD: &str = "UPLOAD";

/// The status of a media row still to fetch.
pub const MEDIA_PENDING: &str = "PENDING";
/// The status of a media row whose bytes are in the store.
pub const MEDIA_STORED: &str = "STORED";
/// The status of a media row that will not be fetched.
pub const MEDIA_FAILED: &str = "FAILED";

/// Writes a media row, due now.
pub async fn insert_media(conn: &impl ConnectionTrait, m: NewMedia, id: Uuid) -> Result<(), DbErr> {
    media::Entity::insert(media::ActiveModel {
        id: Set(id),
        organization_id: Set(m.organization_id),
        message_id: Set(Some(m.message_id)),
        phone_number_id: Set(m.phone_number_id),
        origin: Set(MEDIA_INBOUND.to_owned()),
        provider: Set(m.provider),
        platform_media_id: Set(m.platform_media_id),
        mime_type: Set(m.mime_type),
        sha256: Set(m.sha256),
        filename: Set(m.filename),
        size: Set(None),
        storage_key: Set(None),
        status: Set(MEDIA_PENDING.to_owned()),
        attempts: Set(0),
        next_attempt_at: Set(Some(m.created_at)),
        claimed_until: Set(None),
        expires_at: Set(m.expires_at),
        error: Set(None),
        created_at: Set(m.created_at),
    })
    .exec_without_returning(conn)
    .await?;
    Ok(())
}

/// The outbound message (not a campaign's) with the correlation id the platform echoes (its own id),
/// for a status that arrives before the call's answer was recorded.
pub async fn by_correlation(
    conn: &impl ConnectionTrait,
    org: Option<Uuid>,
    correlation: Option<&str>,
) -> Result<Option<message::Model>, DbErr> {
    let Some(id) = correlation.and_then(|c| Uuid::parse_str(c).ok()) else {
        return Ok(None);
    };
    let mut q = message::Entity::find_by_id(id)
        .filter(message::Column::Direction.eq(MessageDirection::Outbound))
        .filter(message::Column::RecipientId.is_null());
    if let Some(org) = org {
        q = q.filter(message::Column::OrganizationId.eq(org));
    }
    q.one(conn).await
}
