//! Recipient indexes for a million-recipient campaign.
//!
//! - **The queue** of a large charged batch reads "the next pending recipients not queued
//!   yet, in the audience's order". PostgreSQL cannot take `queued_at IS NULL` as an
//!   equality, so through `ix_recipients_campaign_status` it read the recipients in order and
//!   skipped the queued ones: each step cost more than the one before (0.66 s at 800k of 1M
//!   queued), and a million-recipient send spent minutes queueing before its first call. A
//!   partial index of unqueued recipients serves the read in the order asked and shrinks as
//!   the queue advances. SQLite takes `IS NULL` as an equality and already reads the queue in
//!   order, so it does without (one fewer index for every recipient added).
//! - **Adding an audience** wrote an entry for every new recipient into the platform-id and
//!   attempt indexes, though both columns are null until the recipient is sent. Both become
//!   partial (non-null values only); their lookups (`provider_message_id = ?`,
//!   `attempt_at <= ?`) imply the condition, so both databases still use them.

use sea_orm::DbBackend;
use sea_orm_migration::prelude::*;

use super::helpers::index;

#[derive(DeriveMigrationName)]
pub struct Migration;

const TABLE: &str = "campaign_recipients";

/// The two indexes made partial: name, columns, unique, the column that must be non-null.
const PARTIAL: [(&str, &[&str], bool, &str); 2] = [
    (
        "ux_recipients_provider_id",
        &["provider_message_id"],
        true,
        "provider_message_id",
    ),
    (
        "ix_recipients_attempt",
        &["status", "attempt_at"],
        false,
        "attempt_at",
    ),
];

fn drop(name: &str) -> IndexDropStatement {
    Index::drop().name(name).table(TABLE).to_owned()
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    /// One transaction on SQLite too: indexes are dropped and made again under the same
    /// name, and pooled connections must not see one step without the other.
    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }

    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for (name, cols, unique, not_null) in PARTIAL {
            m.drop_index(drop(name)).await?;
            let mut i = index(name, TABLE, cols, unique);
            i.and_where(Expr::col(not_null).is_not_null());
            m.create_index(i).await?;
        }
        if m.get_database_backend() == DbBackend::Postgres {
            let mut i = index(
                "ix_recipients_unqueued",
                TABLE,
                &["campaign_id", "status", "created_at", "id"],
                false,
            );
            i.and_where(Expr::col("queued_at").is_null());
            m.create_index(i).await?;
        }
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        if m.get_database_backend() == DbBackend::Postgres {
            m.drop_index(drop("ix_recipients_unqueued")).await?;
        }
        for (name, cols, unique, _) in PARTIAL {
            m.drop_index(drop(name)).await?;
            m.create_index(index(name, TABLE, cols, unique)).await?;
        }
        Ok(())
    }
}
