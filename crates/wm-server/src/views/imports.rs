//! Contact imports (`wm_types::imports`): a job row with its counts and row errors.

use wm_types::Timestamp;
use wm_types::imports::{ContactImport, ImportRowError};

use crate::db::entities::contact_import;

fn count(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

impl From<contact_import::Model> for ContactImport {
    fn from(m: contact_import::Model) -> Self {
        let errors: Vec<ImportRowError> =
            crate::db::stored::json("contact_imports.errors", m.id, &m.errors);
        ContactImport {
            id: m.id,
            status: m.status,
            format: m.format,
            dedupe: m.dedupe,
            file_name: m.file_name,
            rows_read: count(m.rows_read),
            rows_processed: count(m.rows_processed),
            created: count(m.created_count),
            updated: count(m.updated_count),
            skipped: count(m.skipped_count),
            failed: count(m.failed_count),
            errors,
            error_message: m.error_message,
            created_at: Timestamp::from_millis(m.created_at),
            started_at: m.started_at.map(Timestamp::from_millis),
            finished_at: m.finished_at.map(Timestamp::from_millis),
        }
    }
}
