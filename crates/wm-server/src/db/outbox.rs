//! The event outbox: events are written in the same transaction as the change that causes
//! them, and delivered later by the webhook worker.
//!
//! Only events some webhook takes are written. The outbox exists to feed webhooks, and a
//! webhook receives the events that occur once it is active and subscribed: the check reads
//! the organisation's webhooks in the writing transaction, so a subscription committed
//! before the change is always seen. An organisation without webhooks then pays nothing for
//! its events: an import's `contact.created` per row used to be written, fanned out to no
//! one and marked processed, about a quarter of the import's time on the database writer.

use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QuerySelect,
};
use serde::Serialize;
use uuid::Uuid;
use wm_types::Timestamp;
use wm_types::events::{Event, EventKind};
use wm_types::webhooks::WebhookStatus;

use super::entities::webhook::events_from_db;
use super::entities::{outbox_event, webhook};

/// Writes one event (its envelope) to the outbox, if an active webhook of `org` takes it.
pub async fn push<T: Serialize>(
    conn: &impl ConnectionTrait,
    org: Uuid,
    kind: EventKind,
    data: &T,
    now_ms: i64,
) -> Result<usize, DbErr> {
    push_many(conn, org, kind, std::slice::from_ref(data), now_ms).await
}

/// Whether an active webhook of `org` is subscribed to `kind`.
pub async fn wanted(
    conn: &impl ConnectionTrait,
    org: Uuid,
    kind: EventKind,
) -> Result<bool, DbErr> {
    let subscriptions: Vec<String> = webhook::Entity::find()
        .select_only()
        .column(webhook::Column::Events)
        .filter(webhook::Column::OrganizationId.eq(org))
        .filter(webhook::Column::Status.eq(WebhookStatus::Active))
        .into_tuple()
        .all(conn)
        .await?;
    Ok(subscriptions
        .iter()
        .any(|events| events_from_db(events).contains(&kind)))
}

/// Writes one event of `kind` per item of `data`, a few hundred per statement (an import
/// announces each contact it creates), if an active webhook of `org` takes them. Returns
/// how many were written.
pub async fn push_many<T: Serialize>(
    conn: &impl ConnectionTrait,
    org: Uuid,
    kind: EventKind,
    data: &[T],
    now_ms: i64,
) -> Result<usize, DbErr> {
    if data.is_empty() || !wanted(conn, org, kind).await? {
        return Ok(0);
    }
    let mut rows = Vec::with_capacity(data.len());
    for d in data {
        let id = Uuid::now_v7();
        let envelope = Event {
            id,
            event: kind,
            created_at: Timestamp::from_millis(now_ms),
            data: d,
        };
        let payload = serde_json::to_string(&envelope).map_err(|e| DbErr::Custom(e.to_string()))?;
        rows.push(outbox_event::ActiveModel {
            id: Set(id),
            organization_id: Set(org),
            event_type: Set(kind),
            payload: Set(payload),
            created_at: Set(now_ms),
            processed_at: Set(None),
        });
    }
    let written = rows.len();
    super::insert_chunked(conn, rows).await?;
    Ok(written)
}
