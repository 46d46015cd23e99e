//! The `contact_tags` table.

use sea_orm::entity::prelude::*;

#[allow(missing_docs)]
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "contact_tags")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub contact_id: Uuid,
    #[sea_orm(primary_key, auto_increment = false)]
    pub tag_key: String,
    pub organization_id: Uuid,
    pub tag: String,
    /// The contact's creation time, so a tag's contacts are read newest first from one
    /// index range.
    pub contact_created_at: i64,
    /// The contact's stage and consent, kept in step by a trigger, so a tag's page under a
    /// tab is read from the index alone.
    pub contact_stage_id: Option<Uuid>,
    pub contact_consent: bool,
}

/// Relations are resolved by explicit queries in `db::*`.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
