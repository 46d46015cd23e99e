//! Sender numbers, templates, wallets and their ledger, campaigns and recipients, the
//! monthly UTILITY allowance usage, and the simulated provider's message log.

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
                .table("phone_numbers")
                .col(pk_uuid("id"))
                .col(uuid("organization_id"))
                .col(string("number_e164"))
                .col(string("display_name"))
                .col(string("quality_rating"))
                .col(big_integer("created_at"))
                .foreign_key(&mut fk("phone_numbers", "organization_id", "organizations"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "ux_phone_numbers_org_number",
            "phone_numbers",
            &["organization_id", "number_e164"],
            true,
        ))
        .await?;
        m.create_table(
            Table::create()
                .table("templates")
                .col(pk_uuid("id"))
                .col(uuid("organization_id"))
                .col(string("name"))
                .col(string("category"))
                .col(string("language"))
                .col(text("body_text"))
                .col(string("status"))
                .col(big_integer("created_at"))
                .foreign_key(&mut fk("templates", "organization_id", "organizations"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "ix_templates_org",
            "templates",
            &["organization_id", "created_at"],
            false,
        ))
        .await?;
        m.create_table(
            Table::create()
                .table("wallets")
                .col(uuid("organization_id").primary_key())
                .col(big_integer("balance_micros"))
                .col(big_integer("updated_at"))
                .check(Expr::col("balance_micros").gte(0))
                .foreign_key(&mut fk("wallets", "organization_id", "organizations"))
                .to_owned(),
        )
        .await?;
        // Organisations created before this migration get their wallet at 0.
        m.get_connection()
            .execute_unprepared(
                "INSERT INTO wallets (organization_id, balance_micros, updated_at) \
                 SELECT id, 0, created_at FROM organizations",
            )
            .await?;
        m.create_table(
            Table::create()
                .table("ledger_entries")
                .col(pk_uuid("id"))
                .col(uuid("organization_id"))
                .col(string("kind"))
                .col(big_integer("amount_micros"))
                .col(big_integer("balance_after_micros"))
                .col(uuid_null("campaign_id"))
                .col(string("description"))
                .col(big_integer("created_at"))
                .foreign_key(&mut fk(
                    "ledger_entries",
                    "organization_id",
                    "organizations",
                ))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "ix_ledger_org_created",
            "ledger_entries",
            &["organization_id", "created_at"],
            false,
        ))
        .await?;
        m.create_table(
            Table::create()
                .table("campaigns")
                .col(pk_uuid("id"))
                .col(uuid("organization_id"))
                .col(string("name"))
                .col(uuid("phone_number_id"))
                .col(uuid("template_id"))
                .col(string("status"))
                .col(text("variables"))
                .col(big_integer_null("scheduled_at"))
                .col(big_integer_null("started_at"))
                .col(big_integer_null("completed_at"))
                .col(big_integer_null("paused_at"))
                .col(big_integer_null("next_batch_at"))
                .col(integer_null("batch_size"))
                .col(integer_null("batch_interval_min"))
                .col(string_null("stop_reason"))
                .col(uuid_null("source_campaign_id"))
                .col(big_integer_null("locked_until"))
                .col(big_integer("created_at"))
                .col(big_integer("updated_at"))
                .foreign_key(&mut fk("campaigns", "organization_id", "organizations"))
                .foreign_key(&mut fk("campaigns", "phone_number_id", "phone_numbers"))
                .foreign_key(&mut fk("campaigns", "template_id", "templates"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "ix_campaigns_org_created",
            "campaigns",
            &["organization_id", "created_at"],
            false,
        ))
        .await?;
        m.create_index(index(
            "ix_campaigns_due",
            "campaigns",
            &["status", "next_batch_at"],
            false,
        ))
        .await?;
        m.create_table(
            Table::create()
                .table("campaign_recipients")
                .col(pk_uuid("id"))
                .col(uuid("organization_id"))
                .col(uuid("campaign_id"))
                .col(uuid("contact_id"))
                .col(string("phone"))
                .col(string_null("market"))
                .col(string("status"))
                .col(big_integer("cost_micros"))
                .col(boolean("covered_by_allowance"))
                .col(big_integer_null("queued_at"))
                .col(string_null("provider_message_id"))
                .col(big_integer_null("sent_at"))
                .col(big_integer_null("delivered_at"))
                .col(big_integer_null("read_at"))
                .col(big_integer_null("replied_at"))
                .col(big_integer_null("failed_at"))
                .col(string_null("error_message"))
                .col(big_integer("created_at"))
                .foreign_key(&mut fk("campaign_recipients", "campaign_id", "campaigns"))
                .foreign_key(&mut fk("campaign_recipients", "contact_id", "contacts"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "ux_recipients_campaign_contact",
            "campaign_recipients",
            &["campaign_id", "contact_id"],
            true,
        ))
        .await?;
        m.create_index(index(
            "ix_recipients_campaign_status",
            "campaign_recipients",
            &["campaign_id", "status"],
            false,
        ))
        .await?;
        m.create_index(index(
            "ix_recipients_contact",
            "campaign_recipients",
            &["contact_id", "created_at"],
            false,
        ))
        .await?;
        m.create_index(index(
            "ux_recipients_provider_id",
            "campaign_recipients",
            &["provider_message_id"],
            true,
        ))
        .await?;
        m.create_table(
            Table::create()
                .table("allowance_usage")
                .col(uuid("organization_id"))
                .col(string("month"))
                .col(big_integer("used"))
                .primary_key(Index::create().col("organization_id").col("month"))
                .foreign_key(&mut fk(
                    "allowance_usage",
                    "organization_id",
                    "organizations",
                ))
                .to_owned(),
        )
        .await?;
        m.create_table(
            Table::create()
                .table("simulated_messages")
                .col(string("idempotency_key").primary_key())
                .col(string("provider_message_id"))
                .col(string("sender"))
                .col(string("recipient"))
                .col(text("body"))
                .col(boolean("accepted"))
                .col(boolean("receipt_sent"))
                .col(big_integer("created_at"))
                .to_owned(),
        )
        .await?;
        Ok(())
    }
}
