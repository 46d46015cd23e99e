//! Campaigns at a million recipients: a batch too large for one transaction is charged at
//! once and queued a step at a time (`services::charges`), so the campaign remembers what
//! the charge reserved and not yet queued (`open_*`), and counts its audience changes
//! (`audience_rev`), so a send priced before taking the writer can tell nothing changed
//! since. Recipients are read in order (the audience's order, and the queue's) through
//! their own indexes.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

use super::helpers::index;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    /// One transaction on SQLite too: the index is dropped and made again under the same
    /// name, and pooled connections must not see one step without the other.
    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }

    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for col in [
            big_integer_null("open_charge_micros"),
            integer("open_covered").default(0).to_owned(),
            text_null("open_prices"),
            big_integer("audience_rev").default(0).to_owned(),
        ] {
            m.alter_table(Table::alter().table("campaigns").add_column(col).to_owned())
                .await?;
        }
        m.drop_index(
            Index::drop()
                .name("ix_recipients_campaign_status")
                .table("campaign_recipients")
                .to_owned(),
        )
        .await?;
        for (name, cols) in [
            // A status's recipients in order (the list), and the queue: pending recipients
            // not yet charged (queued_at null) in the audience's order, charged ones in the
            // order they were charged.
            (
                "ix_recipients_campaign_status",
                &["campaign_id", "status", "queued_at", "created_at", "id"][..],
            ),
            (
                "ix_recipients_campaign_order",
                &["campaign_id", "created_at", "id"][..],
            ),
        ] {
            m.create_index(index(name, "campaign_recipients", cols, false))
                .await?;
        }
        Ok(())
    }

    async fn down(&self, _m: &SchemaManager) -> Result<(), DbErr> {
        Err(DbErr::Migration(
            "m0010 (campaign charges) cannot be undone; restore a backup instead".into(),
        ))
    }
}
