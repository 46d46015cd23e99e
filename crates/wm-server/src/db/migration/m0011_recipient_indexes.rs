//! The queue of a large charged batch reads "the next pending recipients not queued yet, in
//! the audience's order". PostgreSQL cannot take `queued_at IS NULL` as an equality, so
//! through `ix_recipients_campaign_status` it read the recipients in order and skipped the
//! queued ones: each step cost more than the one before (0.66 s at 800k of 1M queued),
//! and a million-recipient send spent minutes queueing before its first call. A partial
//! index holding only unqueued recipients serves the read in the order asked, and shrinks
//! as the queue advances. SQLite takes `IS NULL` as an equality and already reads the queue
//! in order through `ix_recipients_campaign_status`, so it does without the extra index
//! (one fewer to maintain for every recipient added).

use sea_orm::DbBackend;
use sea_orm_migration::prelude::*;

use super::helpers::index;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        if m.get_database_backend() != DbBackend::Postgres {
            return Ok(());
        }
        let mut i = index(
            "ix_recipients_unqueued",
            "campaign_recipients",
            &["campaign_id", "status", "created_at", "id"],
            false,
        );
        i.and_where(Expr::col("queued_at").is_null());
        m.create_index(i).await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        if m.get_database_backend() != DbBackend::Postgres {
            return Ok(());
        }
        m.drop_index(
            Index::drop()
                .name("ix_recipients_unqueued")
                .table("campaign_recipients")
                .to_owned(),
        )
        .await
    }
}
