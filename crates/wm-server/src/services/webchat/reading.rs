//! What a visitor reads: their history on the chat, the messages after a stream's cursor
//! (each conversation's sequence numbers, in commit order, so a reconnect resumes with
//! every message once), and the files of their own chat.

use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};
use uuid::Uuid;
use wm_types::Timestamp;
use wm_types::enums::ChannelType;
use wm_types::messages::{MessageDirection, SenderKind};
use wm_types::webchat::{WidgetButton, WidgetMedia, WidgetMessage, WidgetMessages};

use super::Site;
use crate::db::Unique;
use crate::db::entities::{conversation, media, message, user};
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;

/// The contact a visitor's person is, once they wrote.
pub async fn contact_of(state: &AppState, site: &Site, person: &str) -> ApiResult<Option<Uuid>> {
    Ok(crate::db::identities::find(
        &state.db.conn,
        site.channel.organization_id,
        ChannelType::Webchat,
        person,
    )
    .await?
    .map(|i| i.contact_id))
}

/// The contact's conversations on the chat, oldest first.
async fn conversations(
    state: &AppState,
    site: &Site,
    contact: Uuid,
) -> ApiResult<Vec<conversation::Model>> {
    Ok(conversation::Entity::find()
        .filter(conversation::Column::ContactId.eq(contact))
        .filter(conversation::Column::ChannelId.eq(site.channel.id))
        .order_by_asc(conversation::Column::CreatedAt)
        .order_by_asc(conversation::Column::Id)
        .all(&state.db.conn)
        .await?)
}

/// A message as the widget shows it.
pub async fn widget_message(
    state: &AppState,
    site: &Site,
    m: &message::Model,
) -> ApiResult<WidgetMessage> {
    let stored = crate::db::messages::stored_of(m);
    let media = match m.media_id {
        Some(id) => media::Entity::find_by_id(id)
            .unique(&state.db.conn)
            .await?
            .map(|f| WidgetMedia {
                url: format!(
                    "/webchat/v1/{}/media/{}",
                    site.channel.public_token.as_deref().unwrap_or_default(),
                    f.id
                ),
                mime_type: f.mime_type,
                filename: f.filename,
            }),
        None => None,
    };
    let author = match (m.sent_by_kind, m.sent_by_id) {
        (Some(SenderKind::User), Some(id)) => user::Entity::find_by_id(id)
            .unique(&state.db.conn)
            .await?
            .map(|u| u.full_name),
        _ => None,
    };
    let buttons = stored
        .interactive
        .as_ref()
        .filter(|i| i.kind == "buttons")
        .map(|i| {
            i.buttons
                .iter()
                .map(|b| WidgetButton {
                    id: b.id.clone(),
                    title: b.title.clone(),
                })
                .collect()
        });
    // A visitor's message is kept under `person:key`: the key is the widget's own id.
    let client_id = (m.direction == MessageDirection::Inbound)
        .then_some(m.platform_message_id.as_deref())
        .flatten()
        .and_then(|p| p.split_once(':'))
        .map(|(_, key)| key.to_owned());
    Ok(WidgetMessage {
        id: m.id,
        direction: m.direction,
        message_type: m.message_type,
        text: m.body.clone(),
        media,
        buttons,
        author,
        status: m.status,
        client_id,
        created_at: Timestamp::from_millis(m.created_at),
    })
}

/// `GET /messages`: the visitor's history on the chat, `limit` before `before`, oldest
/// first.
pub async fn history(
    state: &AppState,
    site: &Site,
    person: &str,
    before: Option<Uuid>,
    limit: u64,
) -> ApiResult<WidgetMessages> {
    let Some(contact) = super::reading::contact_of(state, site, person).await? else {
        return Ok(WidgetMessages {
            data: Vec::new(),
            has_more: false,
        });
    };
    let ids: Vec<Uuid> = conversations(state, site, contact)
        .await?
        .into_iter()
        .map(|c| c.id)
        .collect();
    let mut q = message::Entity::find().filter(message::Column::ConversationId.is_in(ids));
    if let Some(before) = before {
        let pivot = message::Entity::find_by_id(before)
            .unique(&state.db.conn)
            .await?
            .filter(|m| m.contact_id == contact)
            .ok_or_else(|| ApiError::invalid("before must be a message of this chat"))?;
        q = q.filter(
            sea_orm::Condition::any()
                .add(message::Column::CreatedAt.lt(pivot.created_at))
                .add(
                    sea_orm::Condition::all()
                        .add(message::Column::CreatedAt.eq(pivot.created_at))
                        .add(message::Column::Id.lt(pivot.id)),
                ),
        );
    }
    let mut rows = q
        .order_by_desc(message::Column::CreatedAt)
        .order_by_desc(message::Column::Id)
        .limit(limit + 1)
        .all(&state.db.conn)
        .await?;
    let has_more = rows.len() as u64 > limit;
    rows.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
    rows.reverse();
    let mut data = Vec::with_capacity(rows.len());
    for m in &rows {
        data.push(widget_message(state, site, m).await?);
    }
    Ok(WidgetMessages { data, has_more })
}

/// Where a stream stands: the conversation and the sequence number of the last message it
/// delivered (`c<uuid>.<seq>`, the SSE event id).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cursor {
    /// The conversation.
    pub conversation: Uuid,
    /// Its last message delivered.
    pub seq: i64,
}

impl Cursor {
    /// `c<uuid>.<seq>`.
    pub fn encode(&self) -> String {
        format!("c{}.{}", self.conversation.simple(), self.seq)
    }

    /// Reads an event id; `None` when it is not one.
    pub fn decode(s: &str) -> Option<Cursor> {
        let (c, seq) = s.strip_prefix('c')?.split_once('.')?;
        Some(Cursor {
            conversation: Uuid::parse_str(c).ok()?,
            seq: seq.parse().ok()?,
        })
    }
}

/// Where a stream that brings no cursor starts: after everything there is now.
pub async fn now_cursor(state: &AppState, site: &Site, contact: Uuid) -> ApiResult<Option<Cursor>> {
    Ok(conversations(state, site, contact)
        .await?
        .last()
        .map(|c| Cursor {
            conversation: c.id,
            seq: c.last_seq,
        }))
}

/// The messages after `cursor` (all of a conversation newer than the cursor's), in order,
/// each with the cursor that follows it.
pub async fn after(
    state: &AppState,
    site: &Site,
    contact: Uuid,
    cursor: Option<Cursor>,
) -> ApiResult<Vec<(Cursor, WidgetMessage)>> {
    let all = conversations(state, site, contact).await?;
    let from = cursor.and_then(|c| {
        all.iter()
            .position(|x| x.id == c.conversation)
            .map(|i| (i, c.seq))
    });
    let mut out = Vec::new();
    for (i, c) in all.iter().enumerate() {
        let since = match from {
            Some((at, _)) if i < at => continue,
            Some((at, seq)) if i == at => seq,
            _ => 0,
        };
        if c.last_seq <= since {
            continue;
        }
        let rows = message::Entity::find()
            .filter(message::Column::ConversationId.eq(c.id))
            .filter(message::Column::Seq.gt(since))
            .order_by_asc(message::Column::Seq)
            .limit(200)
            .all(&state.db.conn)
            .await?;
        for m in &rows {
            let at = Cursor {
                conversation: c.id,
                seq: m.seq.unwrap_or(since),
            };
            out.push((at, widget_message(state, site, m).await?));
        }
    }
    Ok(out)
}

/// Message `id`, when it is one of `contact`'s in a conversation of this chat (any other is
/// none of the visitor's business, so `None` as if it did not exist).
pub async fn message_of(
    state: &AppState,
    site: &Site,
    contact: Uuid,
    id: Uuid,
) -> ApiResult<Option<message::Model>> {
    let Some(m) = message::Entity::find_by_id(id)
        .unique(&state.db.conn)
        .await?
        .filter(|m| m.contact_id == contact)
    else {
        return Ok(None);
    };
    let on_site = match m.conversation_id {
        Some(c) => conversation::Entity::find_by_id(c)
            .unique(&state.db.conn)
            .await?
            .is_some_and(|c| c.channel_id == site.channel.id),
        None => false,
    };
    Ok(on_site.then_some(m))
}

/// A file of the visitor's own chat.
pub async fn file(
    state: &AppState,
    site: &Site,
    person: &str,
    id: Uuid,
) -> ApiResult<crate::services::media::File> {
    let not_found = || ApiError::not_found("Media");
    let contact = contact_of(state, site, person)
        .await?
        .ok_or_else(not_found)?;
    let f = media::Entity::find_by_id(id)
        .unique(&state.db.conn)
        .await?
        .ok_or_else(not_found)?;
    let Some(m) = f.message_id else {
        return Err(not_found());
    };
    message_of(state, site, contact, m)
        .await?
        .ok_or_else(not_found)?;
    crate::services::media::get(state, site.channel.organization_id, id).await
}
