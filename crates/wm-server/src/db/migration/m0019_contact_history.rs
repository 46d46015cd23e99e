//! A contact's messages across every conversation and channel (`GET /contacts/{id}/messages`),
//! newest first by keyset: `(contact_id, created_at, id)`, so the campaign and automation
//! messages of someone who never wrote (which belong to no conversation) read as fast as a
//! thread.

use sea_orm_migration::prelude::*;

use super::helpers::index;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_index(index(
            "ix_messages_contact_history",
            "messages",
            &["contact_id", "created_at", "id"],
            false,
        ))
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_index(
            Index::drop()
                .name("ix_messages_contact_history")
                .table("messages")
                .to_owned(),
        )
        .await
    }
}
