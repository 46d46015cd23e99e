//! Each connected account names its provider: a number's `provider` (null: its channel's
//! default, `WM_PROVIDER` for MESSAGING_APP_A, as before), so a process may run several
//! platforms side by side and send each account's messages through its own.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(
            Table::alter()
                .table("phone_numbers")
                .add_column(string_len_null("provider", 32))
                .to_owned(),
        )
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(
            Table::alter()
                .table("phone_numbers")
                .drop_column("provider")
                .to_owned(),
        )
        .await
    }
}
