//! The `contacts` table.

use sea_orm::entity::prelude::*;

#[allow(missing_docs)]
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "contacts")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    pub organization_id: Uuid,
    pub full_name: Option<String>,
    pub primary_phone: Option<String>,
    pub primary_email: Option<String>,
    pub company: Option<String>,
    pub country: Option<String>,
    pub source: wm_types::enums::ContactSource,
    pub lifecycle_stage_id: Option<Uuid>,
    pub owner_id: Option<Uuid>,
    pub opted_out: bool,
    pub consent_given: bool,
    pub consent_at: Option<i64>,
    pub consent_how: Option<String>,
    /// JSON array of tags, in order (the `contact_tags` rows serve filtering).
    pub tags: String,
    /// JSON array of the identities (`IdentityRef`), mirrored from `contact_identities`
    /// in the same transaction, so reading a contact is one query.
    pub identities: String,
    /// Number of OPEN deals, kept with the deals in the same transaction.
    pub open_deals: i32,
    /// Lower-cased name, phone, e-mail and company for `q`.
    pub search_text: String,
    /// When the contact last entered its current stage.
    pub stage_changed_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
}

/// Relations are resolved by explicit queries in `db::*`.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
