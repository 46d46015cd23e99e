//! The `contact_identities` table.

use sea_orm::entity::prelude::*;

#[allow(missing_docs)]
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "contact_identities")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    pub organization_id: Uuid,
    pub contact_id: Uuid,
    pub channel_id: Uuid,
    pub channel_type: wm_types::enums::ChannelType,
    pub external_id: String,
    pub created_at: i64,
    /// The contact's creation time, stage and consent (kept in step by a trigger), so a
    /// channel's page is read in order from its identities.
    pub contact_created_at: i64,
    pub contact_stage_id: Option<Uuid>,
    pub contact_consent: bool,
    pub username: Option<String>,
    pub parent_id: Option<String>,
    /// When the person's profile is due to be read (None: not due).
    pub profile_due_at: Option<i64>,
    pub profile_checked_at: Option<i64>,
    pub profile_attempts: i32,
}

/// Relations are resolved by explicit queries in `db::*`.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
