//! Conversations hold their messages: every message a customer sends and every one the
//! business sends is a row of `messages`, read newest first through
//! `(conversation_id, created_at, id)`. A campaign message sent to someone with no open
//! conversation waits without one (`conversation_id` null) and joins the conversation their
//! next message opens; its status is its recipient's (`recipient_id`), never copied. A
//! reply waits PENDING in `ix_messages_queue` and is sent at most once like a campaign
//! message (`attempt_at` set before the call, `retry_at` after a platform's "later"), from
//! its business number (`phone_number_id`, also the number an inbound message came to); a media file of an inbound message is a row of
//! `media`, downloaded from the platform by the media worker (a lease, retries, the
//! platform's deadline) into the media store; a conversation knows when its customer last
//! wrote (`last_inbound_at`: the platform's 24-hour window).

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
                .table("messages")
                .col(pk_uuid("id"))
                .col(uuid("organization_id"))
                .col(uuid_null("conversation_id"))
                .col(uuid("contact_id"))
                .col(string_len("direction", 16))
                .col(string_len("message_type", 16))
                .col(text_null("body"))
                .col(text_null("content"))
                .col(uuid_null("media_id"))
                .col(uuid_null("reply_to_id"))
                .col(string_null("platform_message_id"))
                .col(string_len("status", 16))
                .col(text_null("error_message"))
                .col(big_integer_null("cost_micros"))
                .col(string_len_null("sent_by_kind", 16))
                .col(uuid_null("sent_by_id"))
                .col(uuid_null("recipient_id"))
                .col(uuid_null("phone_number_id"))
                .col(big_integer_null("attempt_at"))
                .col(big_integer_null("retry_at"))
                .col(integer("retries").default(0).to_owned())
                .col(big_integer("created_at"))
                .col(big_integer("updated_at"))
                .foreign_key(&mut fk("messages", "conversation_id", "conversations"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "ix_messages_thread",
            "messages",
            &["conversation_id", "created_at", "id"],
            false,
        ))
        .await?;
        m.create_index(index(
            "ix_messages_contact",
            "messages",
            &["contact_id", "conversation_id"],
            false,
        ))
        .await?;
        m.create_index(index(
            "ix_messages_queue",
            "messages",
            &["status", "attempt_at"],
            false,
        ))
        .await?;
        m.create_index(index(
            "ix_messages_recipient",
            "messages",
            &["recipient_id"],
            false,
        ))
        .await?;
        m.create_index(index(
            "ix_messages_platform_id",
            "messages",
            &["organization_id", "platform_message_id"],
            false,
        ))
        .await?;
        m.create_table(
            Table::create()
                .table("media")
                .col(pk_uuid("id"))
                .col(uuid("organization_id"))
                .col(uuid_null("message_id"))
                .col(uuid_null("phone_number_id"))
                .col(string_len("origin", 16))
                .col(string_len("provider", 32))
                .col(string("platform_media_id"))
                .col(string_null("mime_type"))
                .col(string_null("sha256"))
                .col(string_null("filename"))
                .col(big_integer_null("size"))
                .col(text_null("storage_key"))
                .col(string_len("status", 16))
                .col(integer("attempts").default(0).to_owned())
                .col(big_integer_null("next_attempt_at"))
                .col(big_integer_null("claimed_until"))
                .col(big_integer("expires_at"))
                .col(text_null("error"))
                .col(big_integer("created_at"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "ix_media_due",
            "media",
            &["status", "next_attempt_at"],
            false,
        ))
        .await?;
        let mut col = big_integer_null("last_inbound_at");
        m.alter_table(
            Table::alter()
                .table("conversations")
                .add_column(&mut col)
                .to_owned(),
        )
        .await
    }

    /// The tables and the column land together or not at all.
    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }
}
