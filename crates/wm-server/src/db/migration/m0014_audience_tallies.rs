//! An audience step adds its recipients' tallies itself (`db::tallies::add`, one row per
//! market) instead of an insert trigger: the row trigger cost a million-recipient audience
//! about two seconds on SQLite, and reading the rows back to count them (`RETURNING`) a
//! fifth of its time. Recipients are inserted in that one place only; every later change is
//! still tallied by m0013's update and delete triggers.
//!
//! The recipients' indexes go back to m0010's status index, which the queue reads in
//! charge order (without it SQLite walked a sending campaign's recipients once per step),
//! plus m0013's list index, which carries the status so a filtered page skips index
//! entries, never rows: the status list index is dropped (the status index serves a rare
//! status) and so is the bare order index (the list index covers its prefix).

use sea_orm::DbBackend;
use sea_orm_migration::prelude::*;

use super::helpers::index;

#[derive(DeriveMigrationName)]
pub struct Migration;

const TABLE: &str = "campaign_recipients";
const TRIGGER: &str = "tr_recipients_tally_insert";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        let conn = m.get_connection();
        if m.get_database_backend() == DbBackend::Postgres {
            conn.execute_unprepared(&format!("DROP TRIGGER IF EXISTS {TRIGGER} ON {TABLE}"))
                .await?;
            conn.execute_unprepared(&format!("DROP FUNCTION IF EXISTS {TRIGGER}()"))
                .await?;
            // m0013 flagged the recipients of blocked contacts before its trigger on the
            // contacts existed, and a server still running may have blocked one in between:
            // flag them again, now that the trigger sees every later change.
            conn.execute_unprepared(&super::m0013_tallies::backfill_blocked())
                .await?;
        } else {
            conn.execute_unprepared(&format!("DROP TRIGGER IF EXISTS {TRIGGER}"))
                .await?;
        }
        for name in ["ix_recipients_status_list", "ix_recipients_campaign_order"] {
            m.drop_index(Index::drop().name(name).table(TABLE).if_exists().to_owned())
                .await?;
        }
        m.create_index(
            index(
                "ix_recipients_campaign_status",
                TABLE,
                &["campaign_id", "status", "queued_at", "created_at", "id"],
                false,
            )
            .if_not_exists()
            .to_owned(),
        )
        .await
    }

    /// Each SQLite statement of `up` stands alone, so a crash between them would leave the
    /// trigger gone with the migration unrecorded; one transaction on both databases.
    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }
}
