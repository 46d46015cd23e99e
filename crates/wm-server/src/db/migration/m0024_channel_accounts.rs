//! A channel row is one connected account: a Facebook Page, an Instagram professional
//! account, a website chat (a WhatsApp organisation keeps its one channel, its numbers in
//! `phone_numbers`). Each names its provider and holds what that provider needs: the
//! platform's id of the account (a Page id, an Instagram account id), the Page it sends
//! through, its token (encrypted), whether it may tag a human agent's late reply, its
//! status (a token Meta refused is shown as such), and a website chat's public token,
//! identity secret (encrypted) and settings.
//!
//! An identity on a channel that shares people's profiles once they write (Messenger,
//! Instagram) is due a profile read (`profile_due_at`), tried again later when Meta fails
//! (`profile_attempts`) and read again after a while (`profile_checked_at`: an Instagram
//! username changes).
//!
//! Messages get a sequence number per conversation (`messages.seq`, from
//! `conversations.last_seq`, bumped in the transaction that inserts the message: the
//! conversation's row lock orders them as they commit), so a live stream resumes after the
//! last message it delivered without loss or repeats.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

use super::helpers::index;

#[derive(DeriveMigrationName)]
pub struct Migration;

const CHANNEL_COLUMNS: [&str; 11] = [
    "name",
    "provider",
    "account_id",
    "page_id",
    "access_token_enc",
    "status_reason",
    "public_token",
    "secret_enc",
    "settings",
    "status",
    "updated_at",
];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for col in &CHANNEL_COLUMNS[..9] {
            m.alter_table(
                Table::alter()
                    .table("channels")
                    .add_column(text_null(*col))
                    .to_owned(),
            )
            .await?;
        }
        m.alter_table(
            Table::alter()
                .table("channels")
                .add_column(string_len("status", 32).default("ACTIVE"))
                .to_owned(),
        )
        .await?;
        m.alter_table(
            Table::alter()
                .table("channels")
                .add_column(big_integer_null("updated_at"))
                .to_owned(),
        )
        .await?;
        m.alter_table(
            Table::alter()
                .table("channels")
                .add_column(boolean("human_agent").default(false))
                .to_owned(),
        )
        .await?;
        // One account is connected once, whichever organisation connects it.
        m.create_index(index(
            "ux_channels_provider_account",
            "channels",
            &["provider", "account_id"],
            true,
        ))
        .await?;
        m.create_index(index(
            "ux_channels_public_token",
            "channels",
            &["public_token"],
            true,
        ))
        .await?;
        m.alter_table(
            Table::alter()
                .table("conversations")
                .add_column(big_integer("last_seq").default(0))
                .to_owned(),
        )
        .await?;
        for col in ["profile_due_at", "profile_checked_at"] {
            m.alter_table(
                Table::alter()
                    .table("contact_identities")
                    .add_column(big_integer_null(col))
                    .to_owned(),
            )
            .await?;
        }
        m.alter_table(
            Table::alter()
                .table("contact_identities")
                .add_column(integer("profile_attempts").default(0))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "ix_identities_profile_due",
            "contact_identities",
            &["profile_due_at"],
            false,
        ))
        .await?;
        m.alter_table(
            Table::alter()
                .table("messages")
                .add_column(big_integer_null("seq"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "ix_messages_conversation_seq",
            "messages",
            &["conversation_id", "seq"],
            false,
        ))
        .await?;
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_index(
            Index::drop()
                .name("ix_messages_conversation_seq")
                .table("messages")
                .to_owned(),
        )
        .await?;
        m.alter_table(
            Table::alter()
                .table("messages")
                .drop_column("seq")
                .to_owned(),
        )
        .await?;
        m.drop_index(
            Index::drop()
                .name("ix_identities_profile_due")
                .table("contact_identities")
                .to_owned(),
        )
        .await?;
        for col in ["profile_due_at", "profile_checked_at", "profile_attempts"] {
            m.alter_table(
                Table::alter()
                    .table("contact_identities")
                    .drop_column(col)
                    .to_owned(),
            )
            .await?;
        }
        m.alter_table(
            Table::alter()
                .table("conversations")
                .drop_column("last_seq")
                .to_owned(),
        )
        .await?;
        for name in ["ux_channels_public_token", "ux_channels_provider_account"] {
            m.drop_index(Index::drop().name(name).table("channels").to_owned())
                .await?;
        }
        for col in CHANNEL_COLUMNS.iter().chain(["human_agent"].iter()) {
            m.alter_table(
                Table::alter()
                    .table("channels")
                    .drop_column(*col)
                    .to_owned(),
            )
            .await?;
        }
        Ok(())
    }
}
