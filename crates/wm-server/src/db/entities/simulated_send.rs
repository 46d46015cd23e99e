//! The `simulated_sends` table: one row per send the simulated platform accepted or
//! refused (no de-duplication: a message sent twice shows twice).

use sea_orm::entity::prelude::*;

#[allow(missing_docs)]
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "simulated_sends")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub provider_message_id: String,
    /// The correlation id the message was sent with (the campaign recipient).
    pub correlation_id: String,
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
