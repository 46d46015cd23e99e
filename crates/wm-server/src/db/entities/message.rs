//! The `messages` table: one message of a conversation, either direction. `content` holds
//! the parts of a message beyond its text as JSON (`db::messages::Stored`).

use sea_orm::entity::prelude::*;

#[allow(missing_docs)]
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "messages")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    pub organization_id: Uuid,
    pub conversation_id: Option<Uuid>,
    pub contact_id: Uuid,
    pub direction: wm_types::messages::MessageDirection,
    pub message_type: wm_types::messages::MessageType,
    pub body: Option<String>,
    pub content: Option<String>,
    pub media_id: Option<Uuid>,
    pub reply_to_id: Option<Uuid>,
    pub platform_message_id: Option<String>,
    pub status: wm_types::messages::MessageStatus,
    pub error_message: Option<String>,
    pub cost_micros: Option<i64>,
    pub sent_by_kind: Option<wm_types::messages::SenderKind>,
    pub sent_by_id: Option<Uuid>,
    pub recipient_id: Option<Uuid>,
    pub phone_number_id: Option<Uuid>,
    pub attempt_at: Option<i64>,
    pub retry_at: Option<i64>,
    pub retries: i32,
    pub created_at: i64,
    pub updated_at: i64,
    /// Its place in its conversation, in commit order (None outside one).
    pub seq: Option<i64>,
}

/// Relations are resolved by explicit queries in `db::*`.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
