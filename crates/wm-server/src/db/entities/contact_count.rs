//! The `contact_counts` table: maintained contact counts (see `db::contacts::counts`).

use sea_orm::entity::prelude::*;

#[allow(missing_docs)]
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "contact_counts")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub organization_id: Uuid,
    #[sea_orm(primary_key, auto_increment = false)]
    pub dim: i16,
    #[sea_orm(primary_key, auto_increment = false)]
    pub key: String,
    /// The stage, or the nil id for none.
    #[sea_orm(primary_key, auto_increment = false)]
    pub stage: Uuid,
    #[sea_orm(primary_key, auto_increment = false)]
    pub consent: bool,
    pub n: i64,
}

/// Relations are resolved by explicit queries in `db::*`.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
