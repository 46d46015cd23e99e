//! `GET /conversations`: the page, the tabs under the other filters, and the summary.
//!
//! The tabs and the open and unassigned counts add up the organisation's maintained
//! conversation tallies (by channel, status and assignee: `db::tallies`), so they cost the
//! same at a hundred conversations or a million; a contact's own conversations or a search
//! are counted where they stand. The summary's periods (today, yesterday) are index ranges,
//! so they cost what a day holds; a search finds its contacts through the contacts' trigram
//! index.

use sea_orm::sea_query::Query;
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DbBackend, EntityTrait, PaginatorTrait, QueryFilter,
    QueryOrder, QuerySelect,
};
use uuid::Uuid;
use wm_types::common::PageMeta;
use wm_types::conversations::{
    ConversationFilter, ConversationList, ConversationSummary, ConversationTabs,
    ListConversationsQuery,
};
use wm_types::enums::{ChannelType, ConversationStatus};

use crate::auth::AuthContext;
use crate::db::Unique;
use crate::db::contacts::filter::{search_terms, trigram_query};
use crate::db::entities::{contact, conversation, organization};
use crate::db::tallies::{self, Dim, conversation_key};
use crate::db::tenant::org_guard;
use crate::error::ApiResult;
use crate::state::AppState;

use super::{active_types, on_types, views};

/// The filters of the query other than the tab, on the conversations of active channels
/// (`base`).
fn filters(
    backend: DbBackend,
    base: Condition,
    org: Uuid,
    q: &ListConversationsQuery,
) -> Condition {
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
    if let Some(text) = search(q) {
        // SQLite finds the contacts through its trigram index (three characters or more),
        // which the organisation then only guards.
        let fts = backend == DbBackend::Sqlite && trigram_query(text).is_some();
        let mut found = Query::select();
        found
            .column(contact::Column::Id)
            .from(contact::Entity)
            .and_where(if fts {
                org_guard::<contact::Entity>(backend, org)
            } else {
                contact::Column::OrganizationId.eq(org).into()
            });
        for t in search_terms(fts, text) {
            found.and_where(t);
        }
        c = c.add(conversation::Column::ContactId.in_subquery(found));
    }
    c
}

fn search(q: &ListConversationsQuery) -> Option<&str> {
    q.q.as_deref().map(str::trim).filter(|t| !t.is_empty())
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

/// Conversations of one channel type, channel, status and assignee.
struct Group {
    channel_type: Option<ChannelType>,
    channel: Option<Uuid>,
    status: Option<ConversationStatus>,
    assignee: Option<Uuid>,
    n: u64,
}

impl Group {
    fn unassigned(&self) -> bool {
        self.status != Some(ConversationStatus::Resolved) && self.assignee.is_none()
    }

    fn resolved(&self) -> bool {
        self.status == Some(ConversationStatus::Resolved)
    }
}

/// The organisation's conversations on `active` channel types, by channel, status and
/// assignee, from the tallies.
async fn groups(
    conn: &impl ConnectionTrait,
    org: Uuid,
    active: &[ChannelType],
) -> ApiResult<Vec<Group>> {
    Ok(tallies::read(conn, Dim::Conversation, &[org])
        .await?
        .into_iter()
        .filter_map(|t| {
            let k = conversation_key(&t.key)?;
            let channel_type = ChannelType::parse(k.channel_type);
            Some(Group {
                channel_type,
                channel: k.channel,
                status: ConversationStatus::parse(k.status),
                assignee: k.assignee,
                n: u64::try_from(t.n).unwrap_or(0),
            })
        })
        .filter(|g| g.channel_type.is_some_and(|t| active.contains(&t)))
        .collect())
}

/// The conversations `c` selects, grouped as the tallies are.
async fn grouped(conn: &impl ConnectionTrait, c: Condition) -> ApiResult<Vec<Group>> {
    let rows: Vec<(ChannelType, Uuid, ConversationStatus, Option<Uuid>, i64)> =
        conversation::Entity::find()
            .select_only()
            .column(conversation::Column::ChannelType)
            .column(conversation::Column::ChannelId)
            .column(conversation::Column::Status)
            .column(conversation::Column::AssignedToUserId)
            .column_as(conversation::Column::Id.count(), "n")
            .filter(c)
            .group_by(conversation::Column::ChannelType)
            .group_by(conversation::Column::ChannelId)
            .group_by(conversation::Column::Status)
            .group_by(conversation::Column::AssignedToUserId)
            .into_tuple()
            .all(conn)
            .await?;
    Ok(rows
        .into_iter()
        .map(|(t, channel, status, assignee, n)| Group {
            channel_type: Some(t),
            channel: Some(channel),
            status: Some(status),
            assignee,
            n: u64::try_from(n).unwrap_or(0),
        })
        .collect())
}

/// The tabs of `groups` under the query's filters: the tallies' (kept by channel, status and
/// assignee), or the groups of a narrower filter's conversations.
fn tabs_of(groups: &[Group], q: &ListConversationsQuery, me: Uuid) -> ConversationTabs {
    let chosen: Vec<&Group> = groups
        .iter()
        .filter(|g| q.status.is_none_or(|s| g.status == Some(s)))
        .filter(|g| q.channel_id.is_none_or(|c| g.channel == Some(c)))
        .filter(|g| q.channel_type.is_none_or(|t| g.channel_type == Some(t)))
        .filter(|g| q.assigned_to_user_id.is_none_or(|u| g.assignee == Some(u)))
        .collect();
    let sum = |f: &dyn Fn(&Group) -> bool| chosen.iter().filter(|g| f(g)).map(|g| g.n).sum();
    ConversationTabs {
        all: sum(&|_| true),
        unassigned: sum(&Group::unassigned),
        mine: sum(&|g| g.assignee == Some(me)),
        resolved: sum(&Group::resolved),
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
    let backend = conn.get_database_backend();
    let types = active_types(state, org).await?;
    // A contact's conversations, or a search's: few, found and counted where they stand.
    let narrow = q.contact_id.is_some() || search(q).is_some();
    let base = filters(backend, on_types(backend, org, &types, narrow), org, q);
    let everyone = groups(conn, org, &types).await?;
    let tabs = if narrow {
        tabs_of(&grouped(conn, base.clone()).await?, q, auth.user_id)
    } else {
        tabs_of(&everyone, q, auth.user_id)
    };
    let filter = q.filter.unwrap_or_default();
    let total = match filter {
        ConversationFilter::All => tabs.all,
        ConversationFilter::Unassigned => tabs.unassigned,
        ConversationFilter::Mine => tabs.mine,
        ConversationFilter::Resolved => tabs.resolved,
    };
    let (page, page_size) = (q.page.unwrap_or(1), q.page_size.unwrap_or(20));
    let offset = crate::db::offset(page, page_size);
    let rows = if offset >= total {
        Vec::new()
    } else {
        conversation::Entity::find()
            .filter(base.add(tab(filter, auth.user_id)))
            .order_by_desc(conversation::Column::UpdatedAt)
            .order_by_desc(conversation::Column::Id)
            .offset(offset)
            .limit(page_size)
            .all(conn)
            .await?
    };
    let data = views(conn, rows).await?;
    let summary = summary(state, org, on_types(backend, org, &types, false), &everyone).await?;
    Ok(ConversationList {
        data,
        meta: PageMeta::new(page, page_size, total),
        tabs,
        summary,
    })
}

async fn summary(
    state: &AppState,
    org: Uuid,
    active: Condition,
    groups: &[Group],
) -> ApiResult<ConversationSummary> {
    let conn = &state.db.conn;
    let tz = organization::Entity::find_by_id(org)
        .unique(conn)
        .await?
        .map(|o| o.timezone)
        .unwrap_or_else(|| "UTC".into());
    let now = state.clock.now();
    let (today, yesterday) = wm_core::time::day_starts(&tz, now);
    // A day's conversations: a range of the organisation's (created or resolved) index.
    let count = |col: conversation::Column, from: i64, to: Option<i64>| {
        let mut c = active.clone().add(col.gte(from));
        if let Some(to) = to {
            c = c.add(col.lt(to));
        }
        async move { conversation::Entity::find().filter(c).count(conn).await }
    };
    // The longest wait: the first of each waiting status in its index's order.
    let mut waiting: Option<i64> = None;
    for status in [ConversationStatus::Open, ConversationStatus::Pending] {
        let first: Option<i64> = conversation::Entity::find()
            .select_only()
            .column(conversation::Column::UpdatedAt)
            .filter(active.clone())
            .filter(conversation::Column::Status.eq(status))
            .order_by_asc(conversation::Column::UpdatedAt)
            .into_tuple()
            .one(conn)
            .await?;
        waiting = match (waiting, first) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
    let sum = |f: &dyn Fn(&Group) -> bool| groups.iter().filter(|g| f(g)).map(|g| g.n).sum();
    Ok(ConversationSummary {
        open: sum(&|g| g.status == Some(ConversationStatus::Open)),
        new_in_period: count(conversation::Column::CreatedAt, today, None).await?,
        new_in_previous_period: count(conversation::Column::CreatedAt, yesterday, Some(today))
            .await?,
        unassigned: sum(&Group::unassigned),
        oldest_waiting_minutes: waiting
            .map(|t| u64::try_from((now.timestamp_millis() - t) / 60_000).unwrap_or(0))
            .unwrap_or(0),
        resolved_today: count(conversation::Column::ResolvedAt, today, None).await?,
        resolved_yesterday: count(conversation::Column::ResolvedAt, yesterday, Some(today)).await?,
    })
}
