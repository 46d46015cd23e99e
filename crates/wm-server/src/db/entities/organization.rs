//! The `organizations` table.

use sea_orm::entity::prelude::*;

#[allow(missing_docs)]
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "organizations")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    pub name: String,
    pub currency: String,
    pub timezone: String,
    pub included_utility_messages: i64,
    pub created_at: i64,
    /// JSON array of `MarketRateInput`: this organisation's prices.
    pub rate_overrides: Option<String>,
    /// How many contacts were ever deleted: an audience step that sees it move since the
    /// audience began checks its contacts are still there (migration m0012).
    pub contact_deletes: i64,
}

/// Relations are resolved by explicit queries in `db::*`.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
