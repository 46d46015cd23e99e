//! The `webhooks` table.

use sea_orm::entity::prelude::*;
use wm_types::events::EventKind;

#[allow(missing_docs)]
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "webhooks")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    pub organization_id: Uuid,
    pub url: String,
    /// Space-separated event kinds.
    pub events: String,
    pub description: Option<String>,
    /// Kept in clear: deliveries are signed with it.
    pub secret: String,
    pub status: wm_types::webhooks::WebhookStatus,
    pub consecutive_failures: i32,
    pub paused_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
}

/// Relations are resolved by explicit queries in `db::*`.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

/// Event kinds as stored (space-separated, de-duplicated, in catalogue order).
pub fn events_to_db(events: &[EventKind]) -> String {
    EventKind::ALL
        .iter()
        .filter(|k| events.contains(k))
        .map(|k| k.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Event kinds from their stored form.
pub fn events_from_db(s: &str) -> Vec<EventKind> {
    s.split_whitespace().filter_map(EventKind::parse).collect()
}
