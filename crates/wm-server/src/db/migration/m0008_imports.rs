//! Contact imports: the job (its options, progress and first refused rows) and the file's
//! rows, stored as the upload streams in, a thousand per chunk, so a worker on any replica
//! can process them and a restart resumes at the first chunk not yet written.

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
                .table("contact_imports")
                .col(pk_uuid("id"))
                .col(uuid("organization_id"))
                .col(uuid("user_id"))
                .col(string("format"))
                .col(string("dedupe"))
                .col(string_null("file_name"))
                .col(string("status"))
                .col(big_integer("rows_read"))
                .col(integer("chunks"))
                .col(integer("next_chunk"))
                .col(big_integer("rows_processed"))
                .col(big_integer("created_count"))
                .col(big_integer("updated_count"))
                .col(big_integer("skipped_count"))
                .col(big_integer("failed_count"))
                .col(text("errors"))
                .col(text_null("error_message"))
                .col(big_integer_null("lease_until"))
                .col(big_integer("created_at"))
                .col(big_integer_null("started_at"))
                .col(big_integer_null("finished_at"))
                .foreign_key(&mut fk(
                    "contact_imports",
                    "organization_id",
                    "organizations",
                ))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "ix_contact_imports_org",
            "contact_imports",
            &["organization_id", "created_at"],
            false,
        ))
        .await?;
        m.create_index(index(
            "ix_contact_imports_status",
            "contact_imports",
            &["status", "lease_until"],
            false,
        ))
        .await?;
        // No foreign key to the job: the job row is written once the whole file is stored,
        // so an upload cut short leaves only chunks, which the hourly purge removes.
        m.create_table(
            Table::create()
                .table("contact_import_chunks")
                .col(uuid("import_id"))
                .col(integer("seq"))
                .col(text("rows"))
                .col(big_integer("created_at"))
                .primary_key(Index::create().col("import_id").col("seq"))
                .to_owned(),
        )
        .await?;
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for t in ["contact_import_chunks", "contact_imports"] {
            m.drop_table(Table::drop().table(t).to_owned()).await?;
        }
        Ok(())
    }
}
