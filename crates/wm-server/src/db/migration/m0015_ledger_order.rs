//! The wallet ledger in the order it happened: `ledger_entries.seq`, an organisation's
//! entries numbered 1, 2, 3… by the wallet row itself (`wallets.entries`, bumped by the
//! same conditional UPDATE that moves the balance). That UPDATE holds the wallet row until
//! its transaction commits, so the numbers follow the commits, and each entry's
//! `balanceAfter` is its predecessor's plus its amount. Ordering by time and id did not:
//! `created_at` is taken before the wallet is locked, and entries of one millisecond fell in
//! the order of their ids.
//!
//! Entries written before this migration are numbered by (time, id), the best order they
//! kept.

use sea_orm_migration::prelude::*;

use super::helpers::index;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        let conn = m.get_connection();
        for sql in [
            "ALTER TABLE wallets ADD COLUMN entries BIGINT NOT NULL DEFAULT 0",
            "ALTER TABLE ledger_entries ADD COLUMN seq BIGINT NOT NULL DEFAULT 0",
            "UPDATE ledger_entries SET seq = n.rn FROM ( \
               SELECT id, ROW_NUMBER() OVER ( \
                 PARTITION BY organization_id ORDER BY created_at, id) AS rn \
               FROM ledger_entries) AS n \
             WHERE ledger_entries.id = n.id",
            "UPDATE wallets SET entries = ( \
               SELECT COUNT(*) FROM ledger_entries e \
               WHERE e.organization_id = wallets.organization_id)",
        ] {
            conn.execute_unprepared(sql).await?;
        }
        m.create_index(index(
            "ux_ledger_org_seq",
            "ledger_entries",
            &["organization_id", "seq"],
            true,
        ))
        .await
    }

    /// The columns, their numbers and the index land together or not at all.
    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }
}
