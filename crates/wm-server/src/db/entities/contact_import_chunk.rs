//! The `contact_import_chunks` table: up to a thousand rows of an uploaded file.

use sea_orm::entity::prelude::*;

#[allow(missing_docs)]
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "contact_import_chunks")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub import_id: Uuid,
    #[sea_orm(primary_key, auto_increment = false)]
    pub seq: i32,
    /// JSON array of `[row number, body or error message]`.
    pub rows: String,
    pub created_at: i64,
}

/// Relations are resolved by explicit queries in `db::*`.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
