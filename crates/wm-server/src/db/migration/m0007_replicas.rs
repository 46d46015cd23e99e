//! State several replicas share: the next free send slot of each sender number (so the
//! number's pace holds whatever process sends for it) and, on PostgreSQL, each API key's
//! sliding window of admitted requests (so the rate limit holds across replicas).

use sea_orm::DbBackend;
use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("sender_paces")
                .col(pk_uuid("phone_number_id"))
                .col(big_integer("next_at_us"))
                .to_owned(),
        )
        .await?;
        if m.get_database_backend() == DbBackend::Postgres {
            // Unlogged: a window costs no WAL flush per request, and losing it in a crash
            // only forgets the last minute's count.
            m.get_connection()
                .execute_unprepared(
                    "CREATE UNLOGGED TABLE rate_limit_windows (
                        key_id uuid PRIMARY KEY,
                        hits bigint[] NOT NULL,
                        granted integer NOT NULL
                    )",
                )
                .await?;
        }
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_table(Table::drop().table("sender_paces").to_owned())
            .await?;
        if m.get_database_backend() == DbBackend::Postgres {
            m.drop_table(Table::drop().table("rate_limit_windows").to_owned())
                .await?;
        }
        Ok(())
    }
}
