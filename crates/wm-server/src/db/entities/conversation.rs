//! The `conversations` table.

use sea_orm::entity::prelude::*;

#[allow(missing_docs)]
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "conversations")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    pub organization_id: Uuid,
    pub contact_id: Uuid,
    pub channel_id: Uuid,
    pub channel_type: wm_types::enums::ChannelType,
    pub external_conversation_id: String,
    pub status: wm_types::enums::ConversationStatus,
    pub initiated_by: wm_types::conversations::InitiatedBy,
    pub assigned_to_user_id: Option<Uuid>,
    pub resolved_at: Option<i64>,
    pub last_inbound_at: Option<i64>,
    /// When the customer-service window the last inbound message opened closes (None with
    /// an inbound message: it never closes).
    pub window_closes_at: Option<i64>,
    pub created_at: i64,
    pub updated_at: i64,
    /// The sequence number of its latest message (`messages.seq`).
    pub last_seq: i64,
}

/// Relations are resolved by explicit queries in `db::*`.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
