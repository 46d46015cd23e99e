//! The `channels` table.

use sea_orm::entity::prelude::*;

#[allow(missing_docs)]
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "channels")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    pub organization_id: Uuid,
    pub channel_type: wm_types::enums::ChannelType,
    pub active: bool,
    pub created_at: i64,
    pub name: Option<String>,
    pub provider: Option<String>,
    pub account_id: Option<String>,
    pub page_id: Option<String>,
    pub access_token_enc: Option<String>,
    pub status_reason: Option<String>,
    pub public_token: Option<String>,
    pub secret_enc: Option<String>,
    pub settings: Option<String>,
    pub status: String,
    pub updated_at: Option<i64>,
    pub human_agent: bool,
}

/// Relations are resolved by explicit queries in `db::*`.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
