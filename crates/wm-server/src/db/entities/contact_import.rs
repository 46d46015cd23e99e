//! The `contact_imports` table: one import job.

use sea_orm::entity::prelude::*;

#[allow(missing_docs)]
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "contact_imports")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Uuid,
    pub organization_id: Uuid,
    /// The user of the key that uploaded it (author of the rows' notes).
    pub user_id: Uuid,
    pub format: wm_types::imports::ImportFormat,
    pub dedupe: wm_types::imports::DedupeMode,
    pub file_name: Option<String>,
    pub status: wm_types::imports::ImportStatus,
    pub rows_read: i64,
    /// Stored chunks, numbered from 0.
    pub chunks: i32,
    /// The first chunk not yet written.
    pub next_chunk: i32,
    pub rows_processed: i64,
    pub created_count: i64,
    pub updated_count: i64,
    pub skipped_count: i64,
    pub failed_count: i64,
    /// JSON array of the first refused rows.
    pub errors: String,
    pub error_message: Option<String>,
    /// Held by a worker until then (ms).
    pub lease_until: Option<i64>,
    pub created_at: i64,
    pub started_at: Option<i64>,
    pub finished_at: Option<i64>,
}

/// Relations are resolved by explicit queries in `db::*`.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
