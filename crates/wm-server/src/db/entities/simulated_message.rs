//! The `simulated_messages` table.

use sea_orm::entity::prelude::*;

#[allow(missing_docs)]
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "simulated_messages")]
pub struct Model {
    /// The recipient id: sending twice with one key sends once.
    #[sea_orm(primary_key, auto_increment = false)]
    pub idempotency_key: String,
    pub provider_message_id: String,
    pub sender: String,
    pub recipient: String,
    pub body: String,
    pub accepted: bool,
    /// Whether its DELIVERED receipt was handed out.
    pub receipt_sent: bool,
    pub created_at: i64,
}

/// Relations are resolved by explicit queries in `db::*`.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
