//! The `phone_numbers` table.

use sea_orm::entity::prelude::*;

#[allow(missing_docs)]
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "phone_numbers")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    pub organization_id: Uuid,
    pub number_e164: String,
    pub display_name: String,
    pub quality_rating: wm_types::catalog::QualityRating,
    pub platform_phone_number_id: Option<String>,
    pub waba_id: Option<String>,
    /// The platform access token, encrypted with `WM_SECRET_KEY` (never returned).
    pub access_token_enc: Option<String>,
    /// Messages per second for this number (None: the server's `WM_PROVIDER_MPS`).
    pub mps: Option<i32>,
    /// The provider it sends through (None: its channel's default).
    pub provider: Option<String>,
    pub created_at: i64,
}

/// Relations are resolved by explicit queries in `db::*`.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
