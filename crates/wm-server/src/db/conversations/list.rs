//! The inbox list's conditions: the filters of `GET /conversations` (a search through the
//! contacts' trigram index) and each tab's condition.

use sea_orm::sea_query::Query;
use sea_orm::{ColumnTrait, Condition, DbBackend};
use uuid::Uuid;
use wm_types::conversations::{ConversationFilter, ListConversationsQuery};
use wm_types::enums::ConversationStatus;

use crate::db::contacts::filter::{search_terms, trigram_query};
use crate::db::entities::{contact, conversation};
use crate::db::tenant::org_guard;

/// The filters of the query other than the tab, on the conversations of active channels
/// (`base`).
pub fn filters(
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
                contact::Column::OrganizationId.eq(org)
            });
        for t in search_terms(fts, text) {
            found.and_where(t);
        }
        c = c.add(conversation::Column::ContactId.in_subquery(found));
    }
    c
}

/// The search words of the query, when it has any.
pub fn search(q: &ListConversationsQuery) -> Option<&str> {
    q.q.as_deref().map(str::trim).filter(|t| !t.is_empty())
}

/// The condition of a tab; `me`: the key's user.
pub fn tab(filter: ConversationFilter, me: Uuid) -> Condition {
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

/// The organisation's conversations on `types` (all of them for `None`); `narrow` when the
/// caller's own filter (a contact, a search) finds the rows, which the organisation then only
/// guards ([`org_guard`]).
pub fn on_types(
    backend: DbBackend,
    org: Uuid,
    types: Option<&[wm_types::enums::ChannelType]>,
    narrow: bool,
) -> Condition {
    let org = if narrow {
        org_guard::<conversation::Entity>(backend, org)
    } else {
        conversation::Column::OrganizationId.eq(org)
    };
    let c = Condition::all().add(org);
    match types {
        Some(types) => c.add(conversation::Column::ChannelType.is_in(types.iter().copied())),
        None => c,
    }
}
