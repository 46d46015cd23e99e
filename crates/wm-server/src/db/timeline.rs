//! Contact timeline: its own entries (created, stage, note) merged with the contact's
//! campaign messages, read live from the recipients so their status is current.

use std::collections::HashMap;

use sea_orm::sea_query::{Alias, Expr, Order, Query, SelectStatement, UnionType};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, DbBackend, DbErr, EntityTrait, FromQueryResult,
    PaginatorTrait, QueryFilter, StatementBuilder,
};
use uuid::Uuid;
use wm_types::Timestamp;
use wm_types::contacts::{
    CampaignRef, ConversationRef, TimelineEntry, TimelineFilter, TimelineKind,
};

use super::entities::{campaign, conversation, recipient, timeline_entry};
use super::tenant::{in_org_by, org_guard};

/// Records an entry.
pub async fn add(
    conn: &impl ConnectionTrait,
    org: Uuid,
    contact: Uuid,
    at_ms: i64,
    kind: &TimelineKind,
) -> Result<(), DbErr> {
    add_many(conn, org, at_ms, &[(contact, kind)]).await
}

/// Records one entry per `(contact, entry)`, a few hundred per statement.
pub async fn add_many(
    conn: &impl ConnectionTrait,
    org: Uuid,
    at_ms: i64,
    entries: &[(Uuid, &TimelineKind)],
) -> Result<(), DbErr> {
    let mut rows = Vec::with_capacity(entries.len());
    for (contact, kind) in entries {
        let value = serde_json::to_value(kind).map_err(|e| DbErr::Custom(e.to_string()))?;
        let entry_type = value
            .get("type")
            .and_then(|t| t.as_str())
            .unwrap_or("unknown")
            .to_owned();
        rows.push(timeline_entry::ActiveModel {
            id: Set(Uuid::now_v7()),
            organization_id: Set(org),
            contact_id: Set(*contact),
            entry_type: Set(entry_type),
            at: Set(at_ms),
            data: Set(value.to_string()),
        });
    }
    super::insert_chunked(conn, rows).await
}

#[derive(Debug, FromQueryResult)]
struct Row {
    id: Uuid,
    at: i64,
    source: String,
}

// A contact's rows are found through its own indexes; the organisation only guards them.

fn own_entries(b: DbBackend, org: Uuid, contact: Uuid, only: Option<&str>) -> SelectStatement {
    let mut q = Query::select();
    q.expr_as(Expr::col(timeline_entry::Column::Id), Alias::new("id"))
        .expr_as(Expr::col(timeline_entry::Column::At), Alias::new("at"))
        .expr_as(Expr::val("entry"), Alias::new("source"))
        .from(timeline_entry::Entity)
        .and_where(org_guard::<timeline_entry::Entity>(b, org))
        .and_where(timeline_entry::Column::ContactId.eq(contact));
    if let Some(t) = only {
        q.and_where(timeline_entry::Column::EntryType.eq(t));
    }
    q
}

fn conversation_entries(b: DbBackend, org: Uuid, contact: Uuid) -> SelectStatement {
    Query::select()
        .expr_as(Expr::col(conversation::Column::Id), Alias::new("id"))
        .expr_as(Expr::col(conversation::Column::CreatedAt), Alias::new("at"))
        .expr_as(Expr::val("conversation"), Alias::new("source"))
        .from(conversation::Entity)
        .and_where(org_guard::<conversation::Entity>(b, org))
        .and_where(conversation::Column::ContactId.eq(contact))
        .to_owned()
}

fn campaign_entries(b: DbBackend, org: Uuid, contact: Uuid) -> SelectStatement {
    Query::select()
        .expr_as(Expr::col(recipient::Column::Id), Alias::new("id"))
        .expr_as(Expr::col(recipient::Column::CreatedAt), Alias::new("at"))
        .expr_as(Expr::val("campaign"), Alias::new("source"))
        .from(recipient::Entity)
        .and_where(org_guard::<recipient::Entity>(b, org))
        .and_where(recipient::Column::ContactId.eq(contact))
        .to_owned()
}

/// One page of a contact's timeline, newest first, and the total.
pub async fn page(
    conn: &impl ConnectionTrait,
    org: Uuid,
    contact: Uuid,
    filter: TimelineFilter,
    page: u64,
    page_size: u64,
) -> Result<(Vec<TimelineEntry>, u64), DbErr> {
    let own_filter = match filter {
        TimelineFilter::All => Some(None),
        TimelineFilter::Notes => Some(Some("note")),
        TimelineFilter::Conversations | TimelineFilter::Campaigns => None,
    };
    let with_campaigns = matches!(filter, TimelineFilter::All | TimelineFilter::Campaigns);
    let with_conversations = matches!(filter, TimelineFilter::All | TimelineFilter::Conversations);
    let b = conn.get_database_backend();
    let mut total = 0;
    let mut parts: Vec<SelectStatement> = Vec::new();
    if let Some(only) = own_filter {
        let mut q = in_org_by::<timeline_entry::Entity>(b, org)
            .filter(timeline_entry::Column::ContactId.eq(contact));
        if let Some(t) = only {
            q = q.filter(timeline_entry::Column::EntryType.eq(t));
        }
        total += q.count(conn).await?;
        parts.push(own_entries(b, org, contact, only));
    }
    if with_campaigns {
        total += in_org_by::<recipient::Entity>(b, org)
            .filter(recipient::Column::ContactId.eq(contact))
            .count(conn)
            .await?;
        parts.push(campaign_entries(b, org, contact));
    }
    if with_conversations {
        total += in_org_by::<conversation::Entity>(b, org)
            .filter(conversation::Column::ContactId.eq(contact))
            .count(conn)
            .await?;
        parts.push(conversation_entries(b, org, contact));
    }
    let mut parts = parts.into_iter();
    let Some(mut q) = parts.next() else {
        return Ok((Vec::new(), 0));
    };
    for p in parts {
        q.union(UnionType::All, p);
    }
    q.order_by(Alias::new("at"), Order::Desc)
        .order_by(Alias::new("id"), Order::Desc)
        .limit(page_size)
        .offset(crate::db::offset(page, page_size));
    let rows = Row::find_by_statement(StatementBuilder::build(&q, &conn.get_database_backend()))
        .all(conn)
        .await?;
    let own_ids: Vec<Uuid> = rows
        .iter()
        .filter(|r| r.source == "entry")
        .map(|r| r.id)
        .collect();
    let rec_ids: Vec<Uuid> = rows
        .iter()
        .filter(|r| r.source == "campaign")
        .map(|r| r.id)
        .collect();
    let conv_ids: Vec<Uuid> = rows
        .iter()
        .filter(|r| r.source == "conversation")
        .map(|r| r.id)
        .collect();
    let convs = super::by_id::<conversation::Entity>(conn, conv_ids, |c| c.id).await?;
    let own = super::by_id::<timeline_entry::Entity>(conn, own_ids, |e| e.id).await?;
    let recs = super::by_id::<recipient::Entity>(conn, rec_ids, |r| r.id).await?;
    let campaign_ids: Vec<Uuid> = recs.values().map(|r| r.campaign_id).collect();
    let names: HashMap<Uuid, String> = if campaign_ids.is_empty() {
        HashMap::new()
    } else {
        campaign::Entity::find()
            .filter(campaign::Column::Id.is_in(campaign_ids))
            .all(conn)
            .await?
            .into_iter()
            .map(|c| (c.id, c.name))
            .collect()
    };
    let ts = |v: Option<i64>| v.map(Timestamp::from_millis);
    let entries = rows
        .into_iter()
        .filter_map(|row| {
            let kind = if row.source == "conversation" {
                let c = convs.get(&row.id)?;
                TimelineKind::Conversation {
                    conversation: ConversationRef {
                        id: c.id,
                        channel_type: c.channel_type,
                        status: c.status,
                    },
                }
            } else if row.source == "campaign" {
                let r = recs.get(&row.id)?;
                TimelineKind::Campaign {
                    campaign: CampaignRef {
                        id: r.campaign_id,
                        name: names.get(&r.campaign_id).cloned().unwrap_or_default(),
                    },
                    status: r.status,
                    sent_at: ts(r.sent_at),
                    delivered_at: ts(r.delivered_at),
                    read_at: ts(r.read_at),
                    failed_at: ts(r.failed_at),
                    error_message: r.error_message.clone(),
                }
            } else {
                serde_json::from_str(&own.get(&row.id)?.data).ok()?
            };
            Some(TimelineEntry {
                id: row.id,
                at: Timestamp::from_millis(row.at),
                kind,
            })
        })
        .collect();
    Ok((entries, total))
}
