//! The `platform_events` table: platform webhooks, verified and kept before they are
//! applied, so the platform gets its 200 fast and nothing is lost in a crash.

use sea_orm::entity::prelude::*;

#[allow(missing_docs)]
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "platform_events")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    pub provider: String,
    /// The raw body as received (its signature was checked).
    pub payload: String,
    pub received_at: i64,
    /// Taken for applying until then.
    pub claimed_until: Option<i64>,
    pub processed_at: Option<i64>,
}

/// Relations are resolved by explicit queries in `db::*`.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
