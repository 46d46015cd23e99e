//! The event outbox: events are written in the same transaction as the change that causes
//! them, and delivered later by the webhook worker.

use sea_orm::{ActiveValue::Set, ConnectionTrait, DbErr, EntityTrait};
use serde::Serialize;
use uuid::Uuid;
use wm_types::Timestamp;
use wm_types::events::{Event, EventKind};

use super::entities::outbox_event;

/// Writes one event (its envelope) to the outbox.
pub async fn push<T: Serialize>(
    conn: &impl ConnectionTrait,
    org: Uuid,
    kind: EventKind,
    data: &T,
    now_ms: i64,
) -> Result<Uuid, DbErr> {
    let id = Uuid::now_v7();
    let envelope = Event {
        id,
        event: kind,
        created_at: Timestamp::from_millis(now_ms),
        data,
    };
    let payload = serde_json::to_string(&envelope).map_err(|e| DbErr::Custom(e.to_string()))?;
    outbox_event::Entity::insert(outbox_event::ActiveModel {
        id: Set(id),
        organization_id: Set(org),
        event_type: Set(kind.as_str().to_owned()),
        payload: Set(payload),
        created_at: Set(now_ms),
        processed_at: Set(None),
    })
    .exec_without_returning(conn)
    .await?;
    Ok(id)
}
