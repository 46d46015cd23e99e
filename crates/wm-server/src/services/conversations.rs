//! Conversations: the list with its tabs and summary, the detail, the operator's status and
//! assignee changes, and opening one when a contact writes.

use crate::db::Unique;
use std::collections::HashMap;

use sea_orm::sea_query::{Expr, Query};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, Condition, ConnectionTrait, EntityTrait, PaginatorTrait,
    QueryFilter, QueryOrder, QuerySelect,
};
use uuid::Uuid;
use wm_types::Timestamp;
use wm_types::common::PageMeta;
use wm_types::contacts::{ChannelRef, UserRef};
use wm_types::conversations::{
    Conversation, ConversationContact, ConversationFilter, ConversationList, ConversationSummary,
    ConversationTabs, InitiatedBy, ListConversationsQuery, UpdateConversation,
};
use wm_types::enums::{ChannelType, ConversationStatus};

use crate::auth::AuthContext;
use crate::db::entities::{contact, conversation, organization, user};
use crate::db::tenant::{find_in_org, in_org};
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;

const NOT_FOUND: &str = "Conversation";

async fn views(
    conn: &impl ConnectionTrait,
    rows: Vec<conversation::Model>,
) -> ApiResult<Vec<Conversation>> {
    let contact_ids: Vec<Uuid> = rows.iter().map(|c| c.contact_id).collect();
    let user_ids: Vec<Uuid> = rows.iter().filter_map(|c| c.assigned_to_user_id).collect();
    let contacts: HashMap<Uuid, contact::Model> = if contact_ids.is_empty() {
        HashMap::new()
    } else {
        contact::Entity::find()
            .filter(contact::Column::Id.is_in(contact_ids))
            .all(conn)
            .await?
            .into_iter()
            .map(|c| (c.id, c))
            .collect()
    };
    let users: HashMap<Uuid, user::Model> = if user_ids.is_empty() {
        HashMap::new()
    } else {
        user::Entity::find()
            .filter(user::Column::Id.is_in(user_ids))
            .all(conn)
            .await?
            .into_iter()
            .map(|u| (u.id, u))
            .collect()
    };
    Ok(rows
        .into_iter()
        .map(|c| {
            let k = contacts.get(&c.contact_id);
            Conversation {
                id: c.id,
                organization_id: c.organization_id,
                contact_id: c.contact_id,
                contact: ConversationContact {
                    id: c.contact_id,
                    full_name: k.and_then(|k| k.full_name.clone()),
                    primary_phone: k.and_then(|k| k.primary_phone.clone()),
                    primary_email: k.and_then(|k| k.primary_email.clone()),
                },
                channel_id: c.channel_id,
                channel: ChannelRef {
                    id: c.channel_id,
                    channel_type: c.channel_type,
                },
                external_conversation_id: c.external_conversation_id,
                status: c.status,
                initiated_by: c.initiated_by,
                assigned_to_user_id: c.assigned_to_user_id,
                assigned_to: c
                    .assigned_to_user_id
                    .and_then(|id| users.get(&id))
                    .map(|u| UserRef {
                        id: u.id,
                        full_name: u.full_name.clone(),
                        email: u.email.clone(),
                    }),
                created_at: Timestamp::from_millis(c.created_at),
                updated_at: Timestamp::from_millis(c.updated_at),
            }
        })
        .collect())
}

/// Conversations on channels active in the organisation (others "simply return none").
async fn active_channels(state: &AppState, org: Uuid) -> ApiResult<Condition> {
    let l = state.lookups.get(&state.db.conn, org).await?;
    let types: Vec<ChannelType> = l
        .channels
        .iter()
        .filter(|c| c.active)
        .map(|c| c.channel_type)
        .collect();
    Ok(Condition::all()
        .add(conversation::Column::OrganizationId.eq(org))
        .add(conversation::Column::ChannelType.is_in(types)))
}

fn filters(base: Condition, org: Uuid, q: &ListConversationsQuery) -> Condition {
    let mut c = base;
    if let Some(s) = q.status {
        c = c.add(conversation::Column::Status.eq(s));
    }
    if let Some(id) = q.channel_id {
        c = c.add(conversation::Column::ChannelId.eq(id));
    }
    if let Some(t) = q.channel_type {
        c = c.add(conversation::Column::ChannelType.eq(t));
    }
    if let Some(id) = q.contact_id {
        c = c.add(conversation::Column::ContactId.eq(id));
    }
    if let Some(id) = q.assigned_to_user_id {
        c = c.add(conversation::Column::AssignedToUserId.eq(id));
    }
    if let Some(text) = q.q.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
        c = c.add(
            conversation::Column::ContactId.in_subquery(
                Query::select()
                    .column(contact::Column::Id)
                    .from(contact::Entity)
                    .and_where(contact::Column::OrganizationId.eq(org))
                    .and_where(contact::Column::SearchText.like(crate::db::like_contains(text)))
                    .to_owned(),
            ),
        );
    }
    c
}

fn tab(filter: ConversationFilter, me: Uuid) -> Condition {
    let resolved = ConversationStatus::Resolved;
    match filter {
        ConversationFilter::Unassigned => Condition::all()
            .add(conversation::Column::Status.ne(resolved))
            .add(conversation::Column::AssignedToUserId.is_null()),
        ConversationFilter::Mine => {
            Condition::all().add(conversation::Column::AssignedToUserId.eq(me))
        }
        ConversationFilter::Resolved => {
            Condition::all().add(conversation::Column::Status.eq(resolved))
        }
        ConversationFilter::All => Condition::all(),
    }
}

/// `GET /conversations`: latest activity first.
pub async fn list(
    state: &AppState,
    auth: &AuthContext,
    q: &ListConversationsQuery,
) -> ApiResult<ConversationList> {
    let conn = &state.db.conn;
    let org = auth.org_id;
    let active = active_channels(state, org).await?;
    let base = filters(active.clone(), org, q);
    let count = |f: ConversationFilter| {
        let c = base.clone().add(tab(f, auth.user_id));
        async move { conversation::Entity::find().filter(c).count(conn).await }
    };
    let tabs = ConversationTabs {
        all: count(ConversationFilter::All).await?,
        unassigned: count(ConversationFilter::Unassigned).await?,
        mine: count(ConversationFilter::Mine).await?,
        resolved: count(ConversationFilter::Resolved).await?,
    };
    let filter = q.filter.unwrap_or_default();
    let total = match filter {
        ConversationFilter::All => tabs.all,
        ConversationFilter::Unassigned => tabs.unassigned,
        ConversationFilter::Mine => tabs.mine,
        ConversationFilter::Resolved => tabs.resolved,
    };
    let (page, page_size) = (q.page.unwrap_or(1), q.page_size.unwrap_or(20));
    let rows = conversation::Entity::find()
        .filter(base.add(tab(filter, auth.user_id)))
        .order_by_desc(conversation::Column::UpdatedAt)
        .order_by_desc(conversation::Column::Id)
        .offset(crate::db::offset(page, page_size))
        .limit(page_size)
        .all(conn)
        .await?;
    let data = views(conn, rows).await?;
    let summary = summary(state, org, active).await?;
    Ok(ConversationList {
        data,
        meta: PageMeta::new(page, page_size, total),
        tabs,
        summary,
    })
}

async fn summary(state: &AppState, org: Uuid, active: Condition) -> ApiResult<ConversationSummary> {
    let conn = &state.db.conn;
    let tz = organization::Entity::find_by_id(org)
        .unique(conn)
        .await?
        .map(|o| o.timezone)
        .unwrap_or_else(|| "UTC".into());
    let now = state.clock.now();
    let (today, yesterday) = wm_core::time::day_starts(&tz, now);
    let count = |c: Condition| {
        let c = active.clone().add(c);
        async move { conversation::Entity::find().filter(c).count(conn).await }
    };
    let between = |col: conversation::Column, from: i64, to: Option<i64>| {
        let mut c = Condition::all().add(col.gte(from));
        if let Some(to) = to {
            c = c.add(col.lt(to));
        }
        c
    };
    let waiting: Option<i64> = conversation::Entity::find()
        .select_only()
        .column(conversation::Column::UpdatedAt)
        .filter(active.clone())
        .filter(
            conversation::Column::Status
                .is_in([ConversationStatus::Open, ConversationStatus::Pending]),
        )
        .order_by_asc(conversation::Column::UpdatedAt)
        .into_tuple()
        .one(conn)
        .await?;
    Ok(ConversationSummary {
        open: count(
            Condition::all().add(conversation::Column::Status.eq(ConversationStatus::Open)),
        )
        .await?,
        new_in_period: count(between(conversation::Column::CreatedAt, today, None)).await?,
        new_in_previous_period: count(between(
            conversation::Column::CreatedAt,
            yesterday,
            Some(today),
        ))
        .await?,
        unassigned: count(tab(ConversationFilter::Unassigned, Uuid::nil())).await?,
        oldest_waiting_minutes: waiting
            .map(|t| u64::try_from((now.timestamp_millis() - t) / 60_000).unwrap_or(0))
            .unwrap_or(0),
        resolved_today: count(between(conversation::Column::ResolvedAt, today, None)).await?,
        resolved_yesterday: count(between(
            conversation::Column::ResolvedAt,
            yesterday,
            Some(today),
        ))
        .await?,
    })
}

/// One conversation as the API shows it.
async fn view(conn: &impl ConnectionTrait, row: conversation::Model) -> ApiResult<Conversation> {
    views(conn, vec![row])
        .await?
        .pop()
        .ok_or_else(|| ApiError::not_found(NOT_FOUND))
}

/// `GET /conversations/{id}`.
pub async fn get(state: &AppState, org: Uuid, id: Uuid) -> ApiResult<Conversation> {
    let active = active_channels(state, org).await?;
    let row = conversation::Entity::find()
        .filter(active)
        .filter(conversation::Column::Id.eq(id))
        .one(&state.db.conn)
        .await?
        .ok_or_else(|| ApiError::not_found(NOT_FOUND))?;
    view(&state.db.conn, row).await
}

/// The operator's change of status or assignee.
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
    txn.commit().await?;
    let row = find_in_org::<conversation::Entity>(org, id)
        .unique(&state.db.conn)
        .await?
        .ok_or_else(|| ApiError::not_found(NOT_FOUND))?;
    view(&state.db.conn, row).await
}

/// A contact wrote on a channel: reuses their OPEN conversation there or opens one.
pub async fn touch_from_contact(
    conn: &impl ConnectionTrait,
    org: Uuid,
    contact: Uuid,
    channel: Uuid,
    kind: ChannelType,
    now: i64,
) -> ApiResult<Uuid> {
    // Two messages of one contact applied at once (platform webhooks, replicas) must land
    // in one conversation: on PostgreSQL the contact's row is locked for this transaction
    // (SQLite has one writer at a time already).
    if conn.get_database_backend() == sea_orm::DbBackend::Postgres {
        crate::db::entities::contact::Entity::find_by_id(contact)
            .lock_exclusive()
            .unique(conn)
            .await?;
    }
    let open = in_org::<conversation::Entity>(org)
        .filter(conversation::Column::ContactId.eq(contact))
        .filter(conversation::Column::ChannelId.eq(channel))
        .filter(conversation::Column::Status.eq(ConversationStatus::Open))
        .one(conn)
        .await?;
    if let Some(c) = open {
        conversation::Entity::update_many()
            .col_expr(conversation::Column::UpdatedAt, Expr::val(now))
            .filter(conversation::Column::Id.eq(c.id))
            .exec(conn)
            .await?;
        return Ok(c.id);
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
        created_at: Set(now),
        updated_at: Set(now),
    })
    .exec_without_returning(conn)
    .await?;
    Ok(id)
}
