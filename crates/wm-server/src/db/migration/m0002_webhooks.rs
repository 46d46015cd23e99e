//! Webhooks, their deliveries and each delivery's attempts.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("webhooks")
                .col(pk_uuid("id"))
                .col(uuid("organization_id"))
                .col(string("url"))
                .col(string("events"))
                .col(string_null("description"))
                .col(string("secret"))
                .col(string("status"))
                .col(integer("consecutive_failures"))
                .col(big_integer_null("paused_at"))
                .col(big_integer("created_at"))
                .col(big_integer("updated_at"))
                .foreign_key(
                    ForeignKey::create()
                        .name("fk_webhooks_organization_id")
                        .from("webhooks", "organization_id")
                        .to("organizations", "id")
                        .on_delete(ForeignKeyAction::Cascade),
                )
                .to_owned(),
        )
        .await?;
        m.create_index(
            Index::create()
                .name("ix_webhooks_org")
                .table("webhooks")
                .col("organization_id")
                .to_owned(),
        )
        .await?;
        m.create_table(
            Table::create()
                .table("webhook_deliveries")
                .col(pk_uuid("id"))
                .col(uuid("organization_id"))
                .col(uuid("webhook_id"))
                .col(uuid("event_id"))
                .col(string("event_type"))
                .col(text("body"))
                .col(string("status"))
                .col(integer("attempts"))
                .col(big_integer_null("next_attempt_at"))
                .col(big_integer_null("locked_until"))
                .col(big_integer_null("delivered_at"))
                .col(big_integer("created_at"))
                .foreign_key(
                    ForeignKey::create()
                        .name("fk_webhook_deliveries_webhook_id")
                        .from("webhook_deliveries", "webhook_id")
                        .to("webhooks", "id")
                        .on_delete(ForeignKeyAction::Cascade),
                )
                .to_owned(),
        )
        .await?;
        m.create_index(
            Index::create()
                .name("ux_deliveries_event_webhook")
                .table("webhook_deliveries")
                .col("event_id")
                .col("webhook_id")
                .unique()
                .to_owned(),
        )
        .await?;
        m.create_index(
            Index::create()
                .name("ix_deliveries_due")
                .table("webhook_deliveries")
                .col("status")
                .col("next_attempt_at")
                .to_owned(),
        )
        .await?;
        m.create_index(
            Index::create()
                .name("ix_deliveries_webhook")
                .table("webhook_deliveries")
                .col("webhook_id")
                .col("created_at")
                .to_owned(),
        )
        .await?;
        m.create_table(
            Table::create()
                .table("webhook_attempts")
                .col(pk_uuid("id"))
                .col(uuid("delivery_id"))
                .col(big_integer("at"))
                .col(integer_null("status_code"))
                .col(big_integer("duration_ms"))
                .col(text_null("response_body"))
                .col(text_null("error"))
                .foreign_key(
                    ForeignKey::create()
                        .name("fk_webhook_attempts_delivery_id")
                        .from("webhook_attempts", "delivery_id")
                        .to("webhook_deliveries", "id")
                        .on_delete(ForeignKeyAction::Cascade),
                )
                .to_owned(),
        )
        .await?;
        m.create_index(
            Index::create()
                .name("ix_attempts_delivery")
                .table("webhook_attempts")
                .col("delivery_id")
                .col("at")
                .to_owned(),
        )
        .await?;
        Ok(())
    }
}
