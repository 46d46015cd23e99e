//! The `platform_inbound_seen` table: inbound message ids already applied (the platform
//! redelivers webhooks for days; each message counts once).

use sea_orm::entity::prelude::*;

#[allow(missing_docs)]
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "platform_inbound_seen")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub message_id: String,
    pub created_at: i64,
}

/// Relations are resolved by explicit queries in `db::*`.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
