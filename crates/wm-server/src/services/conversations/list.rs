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
    ColumnTrait, Condition, ConnectionTrait, EntityTrait, FromQueryResult, PaginatorTrait,
    QueryFilter, QueryOrder, QuerySelect,
};
use uuid::Uuid;
use wm_types::common::PageMeta;
use wm_types::conversations::{
    ConversationFilter, ConversationList, ConversationSummary, ConversationTabs,
    ListConversationsQuery,
};
use wm_types::enums::{ChannelType, ConversationStatus};

use crate::db::Unique;
use crate::db::conversations::list;
use crate::db::entities::{conversation, organization};
use crate::db::tallies::{self, Dim, bucket_key, conversation_key};
use crate::error::ApiResult;
use crate::keys::AuthContext;
use crate::state::AppState;

/// Conversations of one channel type, channel, status and assignee.
#[derive(Debug)]
struct Group {
    channel_type: Option<ChannelType>,
    channel: Option<Uuid>,
    status: Option<ConversationStatus>,
    assignee: Option<Uuid>,
    n: u64,
}

impl Group {
    fn in_tab(&self, tab: ConversationFilter, me: Uuid) -> bool {
        let resolved = self.status == Some(ConversationStatus::Resolved);
        match tab {
            ConversationFilter::Unassigned => !resolved && self.assignee.is_none(),
            ConversationFilter::Mine => self.assignee == Some(me),
            ConversationFilter::Resolved => resolved,
            _ => true,
        }
    }

    fn on(&self, active: &[ChannelType]) -> bool {
        self.channel_type.is_some_and(|t| active.contains(&t))
    }
}

/// The organisation's conversations by channel, status and assignee, from the tallies.
async fn groups(conn: &impl ConnectionTrait, org: Uuid) -> ApiResult<Vec<Group>> {
    Ok(tallies::read(conn, Dim::Conversation, &[org])
        .await?
        .into_iter()
        .filter_map(|t| {
            let k = conversation_key(&t.key)?;
            Some(Group {
                channel_type: ChannelType::parse(k.channel_type),
                channel: k.channel,
                status: ConversationStatus::parse(k.status),
                assignee: k.assignee,
                n: u64::try_from(t.n).unwrap_or(0),
            })
        })
        .collect())
}

/// A conversation a narrow filter (a contact, a search) selects: what its tab and its place
/// in the page need.
#[derive(FromQueryResult)]
struct Light {
    id: Uuid,
    updated_at: i64,
    channel_type: ChannelType,
    channel_id: Uuid,
    status: ConversationStatus,
    assigned_to_user_id: Option<Uuid>,
}

impl Light {
    fn group(&self) -> Group {
        Group {
            channel_type: Some(self.channel_type),
            channel: Some(self.channel_id),
            status: Some(self.status),
            assignee: self.assigned_to_user_id,
            n: 1,
        }
    }
}

/// The tabs of `groups` under the query's filters: the tallies' (kept by channel, status and
/// assignee), or a narrow filter's conversations, one group each.
fn tabs_of(groups: &[Group], q: &ListConversationsQuery, me: Uuid) -> ConversationTabs {
    let chosen: Vec<&Group> = groups
        .iter()
        .filter(|g| q.status.is_none_or(|s| g.status == Some(s)))
        .filter(|g| q.channel_id.is_none_or(|c| g.channel == Some(c)))
        .filter(|g| q.channel_type.is_none_or(|t| g.channel_type == Some(t)))
        .filter(|g| q.assigned_to_user_id.is_none_or(|u| g.assignee == Some(u)))
        .collect();
    let sum = |tab| {
        chosen
            .iter()
            .filter(|g| g.in_tab(tab, me))
            .map(|g| g.n)
            .sum()
    };
    ConversationTabs {
        all: sum(ConversationFilter::All),
        unassigned: sum(ConversationFilter::Unassigned),
        mine: sum(ConversationFilter::Mine),
        resolved: sum(ConversationFilter::Resolved),
    }
}

/// `GET /conversations`: latest activity first.
pub async fn list(
    state: &AppState,
    auth: &AuthContext,
    q: &ListConversationsQuery,
) -> ApiResult<ConversationList> {
    let conn = &state.db.conn;
    let backend = conn.get_database_backend();
    let (org, me) = (auth.org_id, auth.user_id);
    let types = state.lookups.get(&state.db.conn, org).await?.active_types();
    let all = groups(conn, org).await?;
    // Conversations on inactive channel types are left out; when the organisation has none,
    // the condition is left off, so a page is read from the organisation's index alone.
    let only = all.iter().any(|g| !g.on(&types)).then_some(&types[..]);
    let everyone: Vec<Group> = all.into_iter().filter(|g| g.on(&types)).collect();
    let filter = q.filter.unwrap_or_default();
    let (page, page_size) = (q.page.unwrap_or(1), q.page_size.unwrap_or(20));
    let offset = crate::db::offset(page, page_size);
    let at = usize::try_from(offset).unwrap_or(usize::MAX);
    let n = usize::try_from(page_size).unwrap_or(usize::MAX);
    let (tabs, ids) = if q.contact_id.is_some() || list::search(q).is_some() {
        // A contact's conversations, or a search's: few, read once for both the tabs and
        // the page.
        let base = list::filters(backend, list::on_types(backend, org, only, true), org, q);
        let q_light = Query::select()
            .columns([
                conversation::Column::Id,
                conversation::Column::UpdatedAt,
                conversation::Column::ChannelType,
                conversation::Column::ChannelId,
                conversation::Column::Status,
                conversation::Column::AssignedToUserId,
            ])
            .from(conversation::Entity)
            .cond_where(base)
            .to_owned();
        let mut light = Light::find_by_statement(backend.build(&q_light))
            .all(conn)
            .await?;
        let groups: Vec<Group> = light.iter().map(Light::group).collect();
        light.retain(|l| l.group().in_tab(filter, me));
        light.sort_unstable_by_key(|l| std::cmp::Reverse((l.updated_at, l.id)));
        let ids = light.iter().skip(at).take(n).map(|l| l.id).collect();
        (tabs_of(&groups, q, me), ids)
    } else {
        let tabs = tabs_of(&everyone, q, me);
        let base = list::filters(backend, list::on_types(backend, org, only, false), org, q);
        let ids: Vec<Uuid> = if offset >= tab_total(&tabs, filter) {
            Vec::new()
        } else {
            conversation::Entity::find()
                .select_only()
                .column(conversation::Column::Id)
                .filter(base.add(list::tab(filter, me)))
                .order_by_desc(conversation::Column::UpdatedAt)
                .order_by_desc(conversation::Column::Id)
                .offset(offset)
                .limit(page_size)
                .into_tuple()
                .all(conn)
                .await?
        };
        (tabs, ids)
    };
    let rows = crate::db::rows_in_order::<conversation::Entity>(conn, ids, |c| c.id).await?;
    let data = crate::views::conversations::load(conn, rows).await?;
    let active = list::on_types(backend, org, only, false);
    let summary = summary(state, org, (active, &types), &everyone).await?;
    Ok(ConversationList {
        data,
        meta: PageMeta::new(page, page_size, tab_total(&tabs, filter)),
        tabs,
        summary,
    })
}

fn tab_total(tabs: &ConversationTabs, filter: ConversationFilter) -> u64 {
    match filter {
        ConversationFilter::Unassigned => tabs.unassigned,
        ConversationFilter::Mine => tabs.mine,
        ConversationFilter::Resolved => tabs.resolved,
        _ => tabs.all,
    }
}

/// How many conversations on `types` were created (or resolved) from `from` until `to`: the
/// quarter-hour tallies of the period, or, for a period that does not start and end on
/// quarter hours, a range of the organisation's index.
async fn in_period(
    conn: &impl ConnectionTrait,
    org: Uuid,
    types: &[ChannelType],
    (dim, col, active): (Dim, conversation::Column, &Condition),
    from: i64,
    to: Option<i64>,
) -> ApiResult<u64> {
    let to_key = to.map(bucket_key);
    if let (Some(from), None | Some(Some(_))) = (bucket_key(from), &to_key) {
        let to = to_key.flatten();
        let tallies = tallies::read_range(conn, dim, org, &from, to.as_deref()).await?;
        return Ok(tallies
            .iter()
            .filter(|t| {
                let kind = t.key.split_once(' ').map(|(_, k)| k);
                kind.and_then(ChannelType::parse)
                    .is_some_and(|k| types.contains(&k))
            })
            .map(|t| u64::try_from(t.n).unwrap_or(0))
            .sum());
    }
    let mut c = active.clone().add(col.gte(from));
    if let Some(to) = to {
        c = c.add(col.lt(to));
    }
    Ok(conversation::Entity::find().filter(c).count(conn).await?)
}

async fn summary(
    state: &AppState,
    org: Uuid,
    (active, types): (Condition, &[ChannelType]),
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
    let created = (
        Dim::ConversationCreated,
        conversation::Column::CreatedAt,
        &active,
    );
    let resolved = (
        Dim::ConversationResolved,
        conversation::Column::ResolvedAt,
        &active,
    );
    let count = |of, from, to| in_period(conn, org, types, of, from, to);
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
        new_in_period: count(created, today, None).await?,
        new_in_previous_period: count(created, yesterday, Some(today)).await?,
        unassigned: sum(&|g| g.in_tab(ConversationFilter::Unassigned, Uuid::nil())),
        oldest_waiting_minutes: waiting
            .map(|t| u64::try_from((now.timestamp_millis() - t) / 60_000).unwrap_or(0))
            .unwrap_or(0),
        resolved_today: count(resolved, today, None).await?,
        resolved_yesterday: count(resolved, yesterday, Some(today)).await?,
    })
}
