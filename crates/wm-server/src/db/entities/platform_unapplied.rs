//! The `platform_unapplied` table: the parts of platform webhooks wm could not apply (a
//! message naming no sender, a field or status it does not read, an account that is no
//! organisation's), kept for an operator with why.

use sea_orm::entity::prelude::*;

#[allow(missing_docs)]
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "platform_unapplied")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    pub provider: String,
    pub event_id: Option<Uuid>,
    pub account: Option<String>,
    pub reason: String,
    pub part: String,
    pub created_at: i64,
}

/// Relations are resolved by explicit queries in `db::*`.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
