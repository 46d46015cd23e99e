//! The `media` table: a media file of a message. `origin` INBOUND: a customer's file,
//! fetched from the platform into the media store (`status` PENDING until stored, STORED, or
//! FAILED once the platform's deadline passed or it refused for good). `origin` UPLOAD: a
//! file uploaded with `POST /media` to send, STORED at once; `platform_media_id` is then its
//! id at the platform once uploaded there for `phone_number_id` (until `expires_at`).

use sea_orm::entity::prelude::*;

#[allow(missing_docs)]
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "media")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    pub organization_id: Uuid,
    pub message_id: Option<Uuid>,
    pub phone_number_id: Option<Uuid>,
    pub origin: String,
    pub provider: String,
    pub platform_media_id: String,
    pub mime_type: Option<String>,
    pub sha256: Option<String>,
    pub filename: Option<String>,
    pub size: Option<i64>,
    pub storage_key: Option<String>,
    pub status: String,
    pub attempts: i32,
    pub next_attempt_at: Option<i64>,
    pub claimed_until: Option<i64>,
    pub expires_at: i64,
    pub error: Option<String>,
    pub created_at: i64,
}

/// Relations are resolved by explicit queries in `db::*`.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
