//! Fanning the outbox out: each unprocessed event becomes one delivery per active webhook
//! of its organisation subscribed to its kind.

use std::collections::HashMap;

use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect, Set};
use uuid::Uuid;
use wm_types::webhooks::{DeliveryStatus, WebhookStatus};

use super::{BATCH, WebhookWorker};
use crate::db::entities::webhook::events_from_db;
use crate::db::entities::{outbox_event, webhook, webhook_delivery};

/// An unprocessed outbox event, without its payload.
#[derive(sea_orm::FromQueryResult)]
struct Pending {
    id: Uuid,
    organization_id: Uuid,
    event_type: wm_types::events::EventKind,
}

/// The organisation's active webhooks subscribed to `kind`.
fn subscribed(
    hooks: &HashMap<Uuid, Vec<webhook::Model>>,
    org: Uuid,
    kind: wm_types::events::EventKind,
) -> impl Iterator<Item = &webhook::Model> {
    hooks
        .get(&org)
        .into_iter()
        .flatten()
        .filter(move |w| events_from_db(&w.events).contains(&kind))
}

impl WebhookWorker {
    /// Turns unprocessed outbox events into deliveries, one per active webhook of the
    /// organisation subscribed to the kind, and marks the events processed. Returns the
    /// events processed and the deliveries created. Events are only written when a webhook
    /// takes them (`db::outbox`), but it may have been paused or deleted since: payloads are
    /// read only for the events some webhook still takes.
    pub async fn fan_out(&self) -> anyhow::Result<(usize, usize)> {
        let now = self.state.now_ms();
        let txn = self.state.db.write().await?;
        let events: Vec<Pending> = crate::db::skip_locked(
            &self.state.db,
            outbox_event::Entity::find()
                .select_only()
                .column(outbox_event::Column::Id)
                .column(outbox_event::Column::OrganizationId)
                .column(outbox_event::Column::EventType)
                .filter(outbox_event::Column::ProcessedAt.is_null())
                .order_by_asc(outbox_event::Column::CreatedAt)
                .order_by_asc(outbox_event::Column::Id)
                .limit(BATCH),
        )
        .into_model()
        .all(&*txn)
        .await?;
        if events.is_empty() {
            return Ok((0, 0));
        }
        let mut orgs: Vec<Uuid> = events.iter().map(|e| e.organization_id).collect();
        orgs.sort_unstable();
        orgs.dedup();
        let mut hooks: HashMap<Uuid, Vec<webhook::Model>> = HashMap::new();
        for w in webhook::Entity::find()
            .filter(webhook::Column::OrganizationId.is_in(orgs))
            .filter(webhook::Column::Status.eq(WebhookStatus::Active))
            .all(&*txn)
            .await?
        {
            hooks.entry(w.organization_id).or_default().push(w);
        }
        let wanted: Vec<Uuid> = events
            .iter()
            .filter(|e| {
                subscribed(&hooks, e.organization_id, e.event_type)
                    .next()
                    .is_some()
            })
            .map(|e| e.id)
            .collect();
        let mut rows = Vec::new();
        if !wanted.is_empty() {
            let bodies: HashMap<Uuid, outbox_event::Model> = outbox_event::Entity::find()
                .filter(outbox_event::Column::Id.is_in(wanted))
                .all(&*txn)
                .await?
                .into_iter()
                .map(|e| (e.id, e))
                .collect();
            for e in events.iter().filter_map(|e| bodies.get(&e.id)) {
                for w in subscribed(&hooks, e.organization_id, e.event_type) {
                    let id = Uuid::now_v7();
                    let mut body: serde_json::Value = serde_json::from_str(&e.payload)?;
                    body["id"] = serde_json::Value::String(id.to_string());
                    rows.push(webhook_delivery::ActiveModel {
                        id: Set(id),
                        organization_id: Set(e.organization_id),
                        webhook_id: Set(w.id),
                        event_id: Set(e.id),
                        event_type: Set(e.event_type),
                        body: Set(serde_json::to_string(&body)?),
                        status: Set(DeliveryStatus::Pending),
                        attempts: Set(0),
                        next_attempt_at: Set(Some(now)),
                        locked_until: Set(None),
                        delivered_at: Set(None),
                        created_at: Set(e.created_at),
                    });
                }
            }
        }
        let created = rows.len();
        crate::db::insert_chunked(&*txn, rows).await?;
        let ids: Vec<Uuid> = events.iter().map(|e| e.id).collect();
        outbox_event::Entity::update_many()
            .col_expr(outbox_event::Column::ProcessedAt, Expr::val(now))
            .filter(outbox_event::Column::Id.is_in(ids))
            .exec(&*txn)
            .await?;
        txn.commit().await?;
        tracing::info!(
            events = events.len(),
            deliveries = created,
            "outbox fanned out"
        );
        Ok((events.len(), created))
    }
}
