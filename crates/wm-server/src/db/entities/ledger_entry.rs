//! The `ledger_entries` table.

use sea_orm::entity::prelude::*;

#[allow(missing_docs)]
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "ledger_entries")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    pub organization_id: Uuid,
    pub kind: wm_types::catalog::LedgerKind,
    /// Signed: charges are negative.
    pub amount_micros: i64,
    pub balance_after_micros: i64,
    pub campaign_id: Option<Uuid>,
    pub description: String,
    pub created_at: i64,
    /// The entry's place in the organisation's ledger (1, 2, 3…), in commit order.
    pub seq: i64,
}

/// Relations are resolved by explicit queries in `db::*`.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
