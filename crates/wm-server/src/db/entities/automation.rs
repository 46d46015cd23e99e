//! The `automations` table.

use sea_orm::entity::prelude::*;

#[allow(missing_docs)]
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "automations")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    pub organization_id: Uuid,
    pub created_by_user_id: Uuid,
    pub name: String,
    pub status: wm_types::automations::AutomationStatus,
    pub trigger_type: wm_types::automations::TriggerType,
    /// JSON object.
    pub trigger_config: String,
    /// JSON array of `{type, config: {kind, value}}`.
    pub steps: String,
    pub template_key: Option<String>,
    pub paused_reason: Option<String>,
    /// Consecutive failed runs.
    pub failure_count: i32,
    pub last_run_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
}

/// Relations are resolved by explicit queries in `db::*`.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
