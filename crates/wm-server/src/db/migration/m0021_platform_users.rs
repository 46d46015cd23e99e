//! People a platform names by its own id (WhatsApp's business-scoped user ids, usernames)
//! and webhook parts wm cannot apply.
//!
//! - `contact_identities.username`: the username a person shows instead of their phone;
//!   `parent_id`: the parent id a managed business's portfolios share. The business-scoped
//!   user id itself is the identity's `external_id`, so the existing unique index
//!   `(organization_id, channel_type, external_id)` finds its contact.
//! - `platform_unapplied`: a part of a platform webhook wm could not apply (a message
//!   without a sender, a field or status it does not know, an account that is not
//!   anyone's), kept for an operator to read beside the log line and the metric.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

use super::helpers::index;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for col in ["username", "parent_id"] {
            m.alter_table(
                Table::alter()
                    .table("contact_identities")
                    .add_column(string_null(col))
                    .to_owned(),
            )
            .await?;
        }
        m.create_table(
            Table::create()
                .table("platform_unapplied")
                .col(pk_uuid("id"))
                .col(string_len("provider", 32))
                .col(uuid_null("event_id"))
                .col(string_null("account"))
                .col(string_len("reason", 64))
                .col(text("part"))
                .col(big_integer("created_at"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "ix_platform_unapplied_created",
            "platform_unapplied",
            &["created_at"],
            false,
        ))
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_table(Table::drop().table("platform_unapplied").to_owned())
            .await?;
        for col in ["username", "parent_id"] {
            m.alter_table(
                Table::alter()
                    .table("contact_identities")
                    .drop_column(col)
                    .to_owned(),
            )
            .await?;
        }
        Ok(())
    }
}
