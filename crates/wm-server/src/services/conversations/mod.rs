//! Conversations: the detail, the operator's status and assignee changes, and opening one
//! when a contact writes; `list` holds the list with its tabs and summary.

use crate::db::Unique;

use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect,
};
use uuid::Uuid;
use wm_core::platform::Window;
use wm_types::conversations::{Conversation, InitiatedBy, UpdateConversation};
use wm_types::enums::{ChannelType, ConversationStatus};
use wm_types::events::EventKind;

use crate::db::entities::conversation;
use crate::db::tenant::{find_in_org, in_org_by};
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;

mod list;

pub use list::list;

const NOT_FOUND: &str = "Conversation";

/// One conversation as the API shows it.
async fn view(conn: &impl ConnectionTrait, row: conversation::Model) -> ApiResult<Conversation> {
    crate::views::conversations::load(conn, vec![row])
        .await?
        .pop()
        .ok_or_else(|| ApiError::not_found(NOT_FOUND))
}

/// `PATCH /conversations/{id}`: [`update`] of a conversation the key can read.
pub async fn update_by_key(
    state: &AppState,
    org: Uuid,
    id: Uuid,
    body: UpdateConversation,
) -> ApiResult<Conversation> {
    get(state, org, id).await?;
    update(state, org, id, body).await
}

/// `GET /conversations/{id}`.
pub async fn get(state: &AppState, org: Uuid, id: Uuid) -> ApiResult<Conversation> {
    let types = state.lookups.get(&state.db.conn, org).await?.active_types();
    let row = conversation::Entity::find()
        .filter(crate::db::conversations::list::on_types(
            state.db.backend(),
            org,
            Some(&types),
            false,
        ))
        .filter(conversation::Column::Id.eq(id))
        .one(&state.db.conn)
        .await?
        .ok_or_else(|| ApiError::not_found(NOT_FOUND))?;
    view(&state.db.conn, row).await
}

/// A change of status or assignee (the operator's, or an API key's with
/// `conversations:write`), announced in the same transaction: `conversation.closed` when it
/// is resolved, `conversation.opened` when a resolved one is opened again,
/// `conversation.assigned` when it gets a (new) assignee.
pub async fn update(
    state: &AppState,
    org: Uuid,
    id: Uuid,
    body: UpdateConversation,
) -> ApiResult<Conversation> {
    let now = state.now_ms();
    let txn = state.db.write().await?;
    let row = find_in_org::<conversation::Entity>(org, id)
        .unique(&*txn)
        .await?
        .ok_or_else(|| ApiError::not_found(NOT_FOUND))?;
    let mut q = conversation::Entity::update_many()
        .col_expr(conversation::Column::UpdatedAt, Expr::val(now))
        .filter(conversation::Column::Id.eq(row.id));
    if let Some(s) = body.status {
        let resolved = (s == ConversationStatus::Resolved).then_some(now);
        q = q
            .col_expr(conversation::Column::Status, Expr::val(s))
            .col_expr(conversation::Column::ResolvedAt, Expr::val(resolved));
    }
    if let Some(assignee) = body.assigned_to_user_id {
        if let Some(u) = assignee
            && crate::db::lookups::user(&*txn, org, u).await?.is_none()
        {
            return Err(ApiError::invalid(
                "assignedToUserId must be a user of this organization",
            ));
        }
        q = q.col_expr(conversation::Column::AssignedToUserId, Expr::val(assignee));
    }
    q.exec(&*txn).await?;
    let was_resolved = row.status == ConversationStatus::Resolved;
    let mut events = Vec::new();
    match body.status {
        Some(ConversationStatus::Resolved) if !was_resolved => {
            events.push(EventKind::ConversationClosed);
        }
        Some(s) if s != ConversationStatus::Resolved && was_resolved => {
            events.push(EventKind::ConversationOpened);
        }
        _ => {}
    }
    if let Some(Some(u)) = body.assigned_to_user_id
        && row.assigned_to_user_id != Some(u)
    {
        events.push(EventKind::ConversationAssigned);
    }
    for kind in events {
        crate::services::announce::conversation(&*txn, org, id, kind, now).await?;
    }
    txn.commit().await?;
    let row = find_in_org::<conversation::Entity>(org, id)
        .unique(&state.db.conn)
        .await?
        .ok_or_else(|| ApiError::not_found(NOT_FOUND))?;
    view(&state.db.conn, row).await
}

/// A contact wrote on a channel: continues their conversation there that is not resolved
/// (a PENDING one, waiting on them, is OPEN again) or opens one.
pub async fn touch_from_contact(
    conn: &impl ConnectionTrait,
    org: Uuid,
    contact: Uuid,
    on: Via,
    written_at: i64,
    now: i64,
) -> ApiResult<Touched> {
    let Via {
        channel,
        kind,
        window,
    } = on;
    // Two messages of one contact applied at once (platform webhooks, replicas) must land
    // in one conversation: on PostgreSQL the contact's row is locked for this transaction
    // (SQLite has one writer at a time already).
    if conn.get_database_backend() == sea_orm::DbBackend::Postgres {
        crate::db::entities::contact::Entity::find_by_id(contact)
            .lock_exclusive()
            .unique(conn)
            .await?;
    }
    let open = in_org_by::<conversation::Entity>(conn.get_database_backend(), org)
        .filter(conversation::Column::ContactId.eq(contact))
        .filter(conversation::Column::ChannelId.eq(channel))
        .filter(conversation::Column::Status.ne(ConversationStatus::Resolved))
        .order_by_desc(conversation::Column::UpdatedAt)
        .one(conn)
        .await?;
    if let Some(c) = open {
        // The window runs from the customer's latest message, whatever order they arrive in.
        let last = c.last_inbound_at.map_or(written_at, |l| l.max(written_at));
        conversation::Entity::update_many()
            .col_expr(conversation::Column::UpdatedAt, Expr::val(now))
            .col_expr(conversation::Column::LastInboundAt, Expr::val(last))
            .col_expr(
                conversation::Column::WindowClosesAt,
                Expr::val(window.closes_at(Some(last))),
            )
            .col_expr(
                conversation::Column::Status,
                Expr::val(ConversationStatus::Open),
            )
            .filter(conversation::Column::Id.eq(c.id))
            .exec(conn)
            .await?;
        crate::db::messages::adopt(conn, contact, c.id).await?;
        return Ok(Touched {
            id: c.id,
            opened: false,
        });
    }
    let id = Uuid::now_v7();
    conversation::Entity::insert(conversation::ActiveModel {
        id: Set(id),
        organization_id: Set(org),
        contact_id: Set(contact),
        channel_id: Set(channel),
        channel_type: Set(kind),
        external_conversation_id: Set(format!("cnv_{}", Uuid::new_v4().simple())),
        status: Set(ConversationStatus::Open),
        initiated_by: Set(InitiatedBy::Contact),
        assigned_to_user_id: Set(None),
        resolved_at: Set(None),
        last_inbound_at: Set(Some(written_at)),
        window_closes_at: Set(window.closes_at(Some(written_at))),
        created_at: Set(now),
        updated_at: Set(now),
        last_seq: Set(0),
    })
    .exec_without_returning(conn)
    .await?;
    // Campaign messages sent while they had no conversation open are its first messages.
    crate::db::messages::adopt(conn, contact, id).await?;
    Ok(Touched { id, opened: true })
}

/// The channel a contact wrote on, and its messaging window.
#[derive(Debug, Clone, Copy)]
pub struct Via {
    /// The channel's id.
    pub channel: Uuid,
    /// Its type.
    pub kind: ChannelType,
    /// When the business may answer freely after the contact writes.
    pub window: Window,
}

/// The conversation a contact's message landed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Touched {
    /// Its id.
    pub id: Uuid,
    /// Whether it was opened by this message.
    pub opened: bool,
}
