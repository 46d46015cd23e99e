//! The `pending_statuses` table: a status whose message is not known yet (it arrived before
//! the send's answer was recorded), kept and applied when the message id is recorded.

use sea_orm::entity::prelude::*;

#[allow(missing_docs)]
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "pending_statuses")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    pub provider_message_id: String,
    pub correlation_id: Option<String>,
    pub status: wm_types::enums::RecipientStatus,
    pub at_ms: Option<i64>,
    pub error: Option<String>,
    pub opt_out: bool,
    pub created_at: i64,
}

/// Relations are resolved by explicit queries in `db::*`.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
