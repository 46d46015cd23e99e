//! Adding a million-recipient audience on PostgreSQL spent a third of its time in the two
//! foreign keys of `campaign_recipients`: each inserted row ran two trigger queries, and the
//! contact key locked and dirtied every contact's page (1M recipients in the running server:
//! 13.0–13.1 s with both keys, 11.2 s without the campaign's, 8.7–9.2 s without either).
//! Both keys go on PostgreSQL, with their guarantees kept by the code that writes the rows:
//! - **campaign:** campaigns are never deleted, and each audience step ends by updating its
//!   campaign's row (checking it still takes an audience), so a step for a missing campaign
//!   writes nothing;
//! - **contact:** `organizations.contact_deletes` counts the organisation's contact deletes.
//!   A delete bumps it first, which on PostgreSQL locks the row until the delete commits;
//!   an audience step reads it under `FOR SHARE`, so the two never overlap, and when it has
//!   moved since the audience began, the step keeps only the contacts still there.
//!
//! SQLite keeps both keys: its checks take no row locks and cost little, and dropping a
//! constraint there means copying the table. Under its single writer the same guard holds,
//! so the keys never fire.

use sea_orm::DbBackend;
use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

use super::helpers::fk;

#[derive(DeriveMigrationName)]
pub struct Migration;

const TABLE: &str = "campaign_recipients";

/// The keys dropped on PostgreSQL: the column and the table it points to.
const KEYS: [(&str, &str); 2] = [("campaign_id", "campaigns"), ("contact_id", "contacts")];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(
            Table::alter()
                .table("organizations")
                .add_column(big_integer("contact_deletes").default(0))
                .to_owned(),
        )
        .await?;
        if m.get_database_backend() == DbBackend::Postgres {
            for (col, _) in KEYS {
                m.drop_foreign_key(
                    ForeignKey::drop()
                        .name(format!("fk_{TABLE}_{col}"))
                        .table(TABLE)
                        .to_owned(),
                )
                .await?;
            }
        }
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        if m.get_database_backend() == DbBackend::Postgres {
            for (col, to) in KEYS {
                m.create_foreign_key(fk(TABLE, col, to)).await?;
            }
        }
        m.alter_table(
            Table::alter()
                .table("organizations")
                .drop_column("contact_deletes")
                .to_owned(),
        )
        .await
    }
}
