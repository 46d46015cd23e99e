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
}

/// Relations are resolved by explicit queries in `db::*`.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
