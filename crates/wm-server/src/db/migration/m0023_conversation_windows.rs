//! A conversation keeps when its window closes (`window_closes_at`), set when the customer
//! writes from the rule of the channel that carried the message (24 hours on WhatsApp;
//! never on a website chat, where it stays null), so every reader — the API's
//! `windowExpiresAt`, a reply's check, an event — reads one stored answer instead of
//! knowing each platform. Existing conversations were all WhatsApp's: 24 hours after the
//! customer's last message.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(
            Table::alter()
                .table("conversations")
                .add_column(big_integer_null("window_closes_at"))
                .to_owned(),
        )
        .await?;
        m.get_connection()
            .execute_unprepared(
                "UPDATE conversations SET window_closes_at = last_inbound_at + 86400000 \
                 WHERE last_inbound_at IS NOT NULL",
            )
            .await?;
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(
            Table::alter()
                .table("conversations")
                .drop_column("window_closes_at")
                .to_owned(),
        )
        .await
    }
}
