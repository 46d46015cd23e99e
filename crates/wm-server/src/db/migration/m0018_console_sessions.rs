//! The console's sign-in sessions. The browser holds a random token; the table keeps only
//! its SHA-256 (a dump hands out no session), the hash of the API key it acts as (the same
//! hash `api_keys` keeps, so a revoked key ends its sessions at once), the session's CSRF
//! token and when it expires. Every replica reads the same rows.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

use super::helpers::index;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("console_sessions")
                .col(string_len("token_hash", 64).primary_key())
                .col(string_len("key_hash", 64))
                .col(string_len("csrf", 64))
                .col(big_integer("expires_at"))
                .col(big_integer("created_at"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "ix_console_sessions_expires",
            "console_sessions",
            &["expires_at"],
            false,
        ))
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_table(Table::drop().table("console_sessions").to_owned())
            .await
    }
}
