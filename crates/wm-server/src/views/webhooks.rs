//! Webhooks and their deliveries (`wm_types::webhooks`): a webhook never shows its secret; a
//! delivery shows its attempts.

use std::collections::HashMap;

use sea_orm::{ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder};
use uuid::Uuid;
use wm_types::Timestamp;
use wm_types::webhooks::{Delivery, DeliveryAttempt, Webhook};

use crate::db::entities::webhook::events_from_db;
use crate::db::entities::{webhook, webhook_attempt, webhook_delivery};

/// A webhook on the wire (never its secret).
impl From<webhook::Model> for Webhook {
    fn from(w: webhook::Model) -> Self {
        Webhook {
            id: w.id,
            url: w.url,
            events: events_from_db(&w.events),
            description: w.description,
            status: w.status,
            consecutive_failures: u32::try_from(w.consecutive_failures).unwrap_or(0),
            paused_at: w.paused_at.map(Timestamp::from_millis),
            created_at: Timestamp::from_millis(w.created_at),
            updated_at: Timestamp::from_millis(w.updated_at),
        }
    }
}

fn delivery_view(d: webhook_delivery::Model, attempts: Vec<webhook_attempt::Model>) -> Delivery {
    Delivery {
        id: d.id,
        webhook_id: d.webhook_id,
        event: d.event_type,
        status: d.status,
        attempts: u32::try_from(d.attempts).unwrap_or(0),
        next_attempt_at: d.next_attempt_at.map(Timestamp::from_millis),
        delivered_at: d.delivered_at.map(Timestamp::from_millis),
        created_at: Timestamp::from_millis(d.created_at),
        attempt_log: attempts
            .into_iter()
            .map(|a| DeliveryAttempt {
                at: Timestamp::from_millis(a.at),
                status_code: a.status_code.and_then(|c| u16::try_from(c).ok()),
                duration_ms: u64::try_from(a.duration_ms).unwrap_or(0),
                response_body: a.response_body,
                error: a.error,
            })
            .collect(),
    }
}

/// Builds wire deliveries with their attempts, loaded for the whole batch in one query.
pub async fn load(
    conn: &impl ConnectionTrait,
    rows: Vec<webhook_delivery::Model>,
) -> Result<Vec<Delivery>, DbErr> {
    let ids: Vec<Uuid> = rows.iter().map(|d| d.id).collect();
    let mut by_delivery: HashMap<Uuid, Vec<webhook_attempt::Model>> = HashMap::new();
    if !ids.is_empty() {
        for a in webhook_attempt::Entity::find()
            .filter(webhook_attempt::Column::DeliveryId.is_in(ids))
            .order_by_asc(webhook_attempt::Column::At)
            .order_by_asc(webhook_attempt::Column::Id)
            .all(conn)
            .await?
        {
            by_delivery.entry(a.delivery_id).or_default().push(a);
        }
    }
    Ok(rows
        .into_iter()
        .map(|d| {
            let attempts = by_delivery.remove(&d.id).unwrap_or_default();
            delivery_view(d, attempts)
        })
        .collect())
}
