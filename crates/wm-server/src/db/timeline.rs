//! Contact timeline entries.

use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, PaginatorTrait,
    QueryFilter, QueryOrder, QuerySelect,
};
use uuid::Uuid;
use wm_types::Timestamp;
use wm_types::contacts::{TimelineEntry, TimelineFilter, TimelineKind};

use super::entities::timeline_entry;
use super::tenant::in_org;

/// Records an entry.
pub async fn add(
    conn: &impl ConnectionTrait,
    org: Uuid,
    contact: Uuid,
    at_ms: i64,
    kind: &TimelineKind,
) -> Result<(), DbErr> {
    let value = serde_json::to_value(kind).map_err(|e| DbErr::Custom(e.to_string()))?;
    let entry_type = value
        .get("type")
        .and_then(|t| t.as_str())
        .unwrap_or("unknown")
        .to_owned();
    timeline_entry::Entity::insert(timeline_entry::ActiveModel {
        id: Set(Uuid::now_v7()),
        organization_id: Set(org),
        contact_id: Set(contact),
        entry_type: Set(entry_type),
        at: Set(at_ms),
        data: Set(value.to_string()),
    })
    .exec_without_returning(conn)
    .await?;
    Ok(())
}

fn type_of(filter: TimelineFilter) -> Option<&'static str> {
    match filter {
        TimelineFilter::All => None,
        TimelineFilter::Conversations => Some("conversation"),
        TimelineFilter::Campaigns => Some("campaign"),
        TimelineFilter::Notes => Some("note"),
    }
}

/// One page of a contact's entries, newest first, and the total.
pub async fn page(
    conn: &impl ConnectionTrait,
    org: Uuid,
    contact: Uuid,
    filter: TimelineFilter,
    page: u64,
    page_size: u64,
) -> Result<(Vec<TimelineEntry>, u64), DbErr> {
    let mut q =
        in_org::<timeline_entry::Entity>(org).filter(timeline_entry::Column::ContactId.eq(contact));
    if let Some(t) = type_of(filter) {
        q = q.filter(timeline_entry::Column::EntryType.eq(t));
    }
    let total = q.clone().count(conn).await?;
    let rows = q
        .order_by_desc(timeline_entry::Column::At)
        .order_by_desc(timeline_entry::Column::Id)
        .offset((page - 1) * page_size)
        .limit(page_size)
        .all(conn)
        .await?;
    let entries = rows
        .into_iter()
        .filter_map(|r| {
            let kind: TimelineKind = serde_json::from_str(&r.data).ok()?;
            Some(TimelineEntry {
                id: r.id,
                at: Timestamp::from_millis(r.at),
                kind,
            })
        })
        .collect();
    Ok((entries, total))
}
