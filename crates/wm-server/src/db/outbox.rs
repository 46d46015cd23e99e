//! The event outbox: events are written in the same transaction as the change that causes
//! them, and delivered later by the webhook worker.

use sea_orm::{ActiveValue::Set, ConnectionTrait, DbErr};
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
    let ids = push_many(conn, org, kind, std::slice::from_ref(data), now_ms).await?;
    ids.into_iter()
        .next()
        .ok_or_else(|| DbErr::Custom("no event was written".to_owned()))
}

/// Writes one event of `kind` per item of `data`, a few hundred per statement (an import
/// announces each contact it creates).
pub async fn push_many<T: Serialize>(
    conn: &impl ConnectionTrait,
    org: Uuid,
    kind: EventKind,
    data: &[T],
    now_ms: i64,
) -> Result<Vec<Uuid>, DbErr> {
    let mut ids = Vec::with_capacity(data.len());
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
        ids.push(id);
        rows.push(outbox_event::ActiveModel {
            id: Set(id),
            organization_id: Set(org),
            event_type: Set(kind),
            payload: Set(payload),
            created_at: Set(now_ms),
            processed_at: Set(None),
        });
    }
    super::insert_chunked(conn, rows).await?;
    Ok(ids)
}
