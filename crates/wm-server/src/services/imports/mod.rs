//! Contact imports: [`upload`](fn@upload) stores a file's rows and queues the job; [`process`] writes
//! them a chunk at a time (driven by `worker::imports`); here, the job's wire view.

pub mod process;
pub mod upload;

use uuid::Uuid;
use wm_types::common::{Page, PageMeta};
use wm_types::imports::{ContactImport, ImportRowError};
use wm_types::{PageQuery, Timestamp};

use crate::db::{self, entities::contact_import};
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;

pub use upload::upload;

fn count(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

/// The wire job of a stored one.
pub fn view(m: contact_import::Model) -> ContactImport {
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

/// `GET /contacts/imports/{id}`.
pub async fn get(state: &AppState, org: Uuid, id: Uuid) -> ApiResult<ContactImport> {
    db::imports::find(&state.db.conn, org, id)
        .await?
        .map(view)
        .ok_or_else(|| ApiError::not_found("Import"))
}

/// `GET /contacts/imports`, newest first.
pub async fn list(state: &AppState, org: Uuid, q: PageQuery) -> ApiResult<Page<ContactImport>> {
    let (rows, total) = db::imports::page(&state.db.conn, org, q.page, q.page_size).await?;
    Ok(Page {
        data: rows.into_iter().map(view).collect(),
        meta: PageMeta::new(q.page, q.page_size, total),
    })
}
