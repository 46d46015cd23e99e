//! The `campaigns` table.

use sea_orm::entity::prelude::*;

#[allow(missing_docs)]
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "campaigns")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    pub organization_id: Uuid,
    pub name: String,
    pub phone_number_id: Uuid,
    pub template_id: Uuid,
    pub status: wm_types::campaigns::CampaignStatus,
    /// JSON object: template position → placeholder or fixed text.
    pub variables: String,
    pub scheduled_at: Option<i64>,
    pub started_at: Option<i64>,
    pub completed_at: Option<i64>,
    pub paused_at: Option<i64>,
    pub next_batch_at: Option<i64>,
    pub batch_size: Option<i32>,
    pub batch_interval_min: Option<i32>,
    pub stop_reason: Option<String>,
    pub source_campaign_id: Option<Uuid>,
    /// A worker's lease while it processes a batch.
    pub locked_until: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
    /// What a large batch's charge reserved and has not yet queued (micro-units); `None`
    /// when no such charge is open (`services::sending::queueing`).
    pub open_charge_micros: Option<i64>,
    /// Recipients of the open charge still to queue as covered by the allowance.
    pub open_covered: i32,
    /// The prices (market → micro-units) the open charge was priced at, JSON.
    pub open_prices: Option<String>,
    /// Bumped by every audience change, so a batch priced outside the writer can tell it
    /// still holds when it is charged.
    pub audience_rev: i64,
}

/// Relations are resolved by explicit queries in `db::*`.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
