//! Per-organisation overrides of the shipped rate card.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(
            Table::alter()
                .table("organizations")
                .add_column(text_null("rate_overrides"))
                .to_owned(),
        )
        .await
    }
}
