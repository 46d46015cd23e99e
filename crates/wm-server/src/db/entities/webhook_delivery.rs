//! The `webhook_deliveries` table.

use sea_orm::entity::prelude::*;

#[allow(missing_docs)]
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "webhook_deliveries")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    pub organization_id: Uuid,
    pub webhook_id: Uuid,
    /// The outbox event it carries.
    pub event_id: Uuid,
    pub event_type: wm_types::events::EventKind,
    /// The exact bytes that are signed and sent.
    pub body: String,
    pub status: wm_types::webhooks::DeliveryStatus,
    pub attempts: i32,
    pub next_attempt_at: Option<i64>,
    /// A worker's lease on an attempt in flight; an expired lease is taken over.
    pub locked_until: Option<i64>,
    pub delivered_at: Option<i64>,
    pub created_at: i64,
}

/// Relations are resolved by explicit queries in `db::*`.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
