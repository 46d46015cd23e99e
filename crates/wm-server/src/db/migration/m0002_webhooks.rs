//! Webhooks, their deliveries and each delivery's attempts.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

use super::helpers::{fk, index};

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
                .foreign_key(&mut fk("webhooks", "organization_id", "organizations"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "ix_webhooks_org",
            "webhooks",
            &["organization_id"],
            false,
        ))
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
                .foreign_key(&mut fk("webhook_deliveries", "webhook_id", "webhooks"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "ux_deliveries_event_webhook",
            "webhook_deliveries",
            &["event_id", "webhook_id"],
            true,
        ))
        .await?;
        m.create_index(index(
            "ix_deliveries_due",
            "webhook_deliveries",
            &["status", "next_attempt_at"],
            false,
        ))
        .await?;
        m.create_index(index(
            "ix_deliveries_webhook",
            "webhook_deliveries",
            &["webhook_id", "created_at"],
            false,
        ))
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
                .foreign_key(&mut fk(
                    "webhook_attempts",
                    "delivery_id",
                    "webhook_deliveries",
                ))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "ix_attempts_delivery",
            "webhook_attempts",
            &["delivery_id", "at"],
            false,
        ))
        .await?;
        Ok(())
    }
}
