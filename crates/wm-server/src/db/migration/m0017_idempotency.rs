//! `Idempotency-Key`: what a POST with a key answered, kept 24 hours per API key (`scope`:
//! the key's id, nil for the operator token), so a client that timed out can send the same
//! request again and get the same answer instead of a second effect. A row without
//! `status_code` is a request still running; `locked_until` lets another process take it
//! over when the one that ran it died.

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
                .table("idempotency_keys")
                .col(uuid("scope"))
                .col(string_len("idempotency_key", 255))
                .col(string_len("fingerprint", 64))
                .col(string_len("method", 8))
                .col(text("path"))
                .col(integer_null("status_code"))
                .col(string_null("content_type"))
                .col(text_null("body"))
                .col(big_integer_null("locked_until"))
                .col(big_integer("created_at"))
                .primary_key(Index::create().col("scope").col("idempotency_key"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "ix_idempotency_keys_created",
            "idempotency_keys",
            &["created_at"],
            false,
        ))
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_table(Table::drop().table("idempotency_keys").to_owned())
            .await
    }
}
