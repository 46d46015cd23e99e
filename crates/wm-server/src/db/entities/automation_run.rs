//! The `automation_runs` table.

use sea_orm::entity::prelude::*;

#[allow(missing_docs)]
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "automation_runs")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    pub organization_id: Uuid,
    pub automation_id: Uuid,
    pub contact_id: Option<Uuid>,
    /// waiting, completed, condition, skipped or failed.
    pub result: String,
    /// Index of the next step to run.
    pub next_step: i32,
    /// When a waiting run continues.
    pub resume_at: Option<i64>,
    pub locked_until: Option<i64>,
    /// JSON array of step outcomes.
    pub steps_log: String,
    pub error: Option<String>,
    /// What fired it, so one cause runs an automation once.
    pub trigger_key: Option<String>,
    pub templates_sent: i32,
    pub cost_micros: i64,
    pub started_at: i64,
    pub finished_at: Option<i64>,
}

/// Relations are resolved by explicit queries in `db::*`.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
