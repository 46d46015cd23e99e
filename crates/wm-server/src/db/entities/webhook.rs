//! The `webhooks` table.

use sea_orm::entity::prelude::*;

#[allow(missing_docs)]
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "webhooks")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    pub organization_id: Uuid,
    pub url: String,
    /// Space-separated event kinds.
    pub events: String,
    pub description: Option<String>,
    /// Kept in clear: deliveries are signed with it.
    pub secret: String,
    pub status: wm_types::webhooks::WebhookStatus,
    pub consecutive_failures: i32,
    pub paused_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
}

/// Relations are resolved by explicit queries in `db::*`.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
