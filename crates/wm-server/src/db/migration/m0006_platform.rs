//! The real messaging platform: sender numbers' platform accounts (token encrypted) and
//! pace, per-recipient send attempts (at most once, reconciled), platform webhooks kept
//! before they are applied, statuses that arrive before their send is recorded, inbound
//! message ids already applied, and a simulated platform log with one row per send (no
//! de-duplication, so a double send would show).

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

use super::helpers::index;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for col in [
            string_null("platform_phone_number_id"),
            string_null("waba_id"),
            text_null("access_token_enc"),
            integer_null("mps"),
        ] {
            let mut col = col;
            m.alter_table(
                Table::alter()
                    .table("phone_numbers")
                    .add_column(&mut col)
                    .to_owned(),
            )
            .await?;
        }
        m.create_index(index(
            "ux_phone_numbers_platform_id",
            "phone_numbers",
            &["platform_phone_number_id"],
            true,
        ))
        .await?;
        m.create_index(index(
            "ix_phone_numbers_waba",
            "phone_numbers",
            &["waba_id"],
            false,
        ))
        .await?;
        for col in [
            big_integer_null("attempt_at"),
            big_integer_null("retry_at"),
            integer("retries").default(0).to_owned(),
        ] {
            let mut col = col;
            m.alter_table(
                Table::alter()
                    .table("campaign_recipients")
                    .add_column(&mut col)
                    .to_owned(),
            )
            .await?;
        }
        m.create_index(index(
            "ix_recipients_attempt",
            "campaign_recipients",
            &["status", "attempt_at"],
            false,
        ))
        .await?;
        m.create_table(
            Table::create()
                .table("platform_events")
                .col(pk_uuid("id"))
                .col(string("provider"))
                .col(text("payload"))
                .col(big_integer("received_at"))
                .col(big_integer_null("claimed_until"))
                .col(big_integer_null("processed_at"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "ix_platform_events_pending",
            "platform_events",
            &["processed_at", "received_at"],
            false,
        ))
        .await?;
        m.create_table(
            Table::create()
                .table("pending_statuses")
                .col(pk_uuid("id"))
                .col(string("provider_message_id"))
                .col(string_null("correlation_id"))
                .col(string("status"))
                .col(big_integer_null("at_ms"))
                .col(text_null("error"))
                .col(boolean("opt_out"))
                .col(big_integer("created_at"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "ix_pending_statuses_message",
            "pending_statuses",
            &["provider_message_id"],
            false,
        ))
        .await?;
        m.create_table(
            Table::create()
                .table("platform_inbound_seen")
                .col(string("message_id").primary_key())
                .col(big_integer("created_at"))
                .to_owned(),
        )
        .await?;
        m.drop_table(Table::drop().table("simulated_messages").to_owned())
            .await?;
        m.create_table(
            Table::create()
                .table("simulated_sends")
                .col(string("provider_message_id").primary_key())
                .col(string("correlation_id"))
                .col(string("sender"))
                .col(string("recipient"))
                .col(text("body"))
                .col(boolean("accepted"))
                .col(boolean("receipt_sent"))
                .col(big_integer("created_at"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "ix_simulated_sends_correlation",
            "simulated_sends",
            &["correlation_id"],
            false,
        ))
        .await?;
        m.create_index(index(
            "ix_simulated_sends_receipt",
            "simulated_sends",
            &["receipt_sent", "accepted"],
            false,
        ))
        .await?;
        Ok(())
    }
}
