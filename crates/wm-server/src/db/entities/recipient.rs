//! The `campaign_recipients` table.

use sea_orm::entity::prelude::*;

#[allow(missing_docs)]
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "campaign_recipients")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    pub organization_id: Uuid,
    pub campaign_id: Uuid,
    pub contact_id: Uuid,
    /// The phone when added (normalised).
    pub phone: String,
    /// Pricing market; None = unpriceable.
    pub market: Option<String>,
    pub status: wm_types::enums::RecipientStatus,
    /// Charged for this message, net of a refund.
    pub cost_micros: i64,
    pub covered_by_allowance: bool,
    /// Set when its batch was charged; the provider is called after.
    pub queued_at: Option<i64>,
    pub provider_message_id: Option<String>,
    pub sent_at: Option<i64>,
    pub delivered_at: Option<i64>,
    pub read_at: Option<i64>,
    pub replied_at: Option<i64>,
    pub failed_at: Option<i64>,
    pub error_message: Option<String>,
    pub created_at: i64,
    /// When the platform call started (PENDING with this set = SENDING: never re-sent).
    pub attempt_at: Option<i64>,
    /// Not before this time (the platform asked to retry later).
    pub retry_at: Option<i64>,
    /// Retries asked by the platform so far (the backoff grows with them).
    pub retries: i32,
    /// Its contact may no longer be messaged (set by a trigger on the contact while the
    /// recipient is pending and not charged): the campaign's estimate leaves it out.
    pub contact_blocked: bool,
}

/// Relations are resolved by explicit queries in `db::*`.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
