//! Contact imports: [`upload`](fn@upload) stores a file's rows and queues the job; [`process`] writes
//! them a chunk at a time (driven by `worker::imports`); here, the job's wire view.

pub mod process;
pub mod upload;

use uuid::Uuid;
use wm_types::PageQuery;
use wm_types::common::{Page, PageMeta};
use wm_types::imports::ContactImport;

use crate::db::{self};
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;

pub use upload::upload;

/// `GET /contacts/imports/{id}`.
pub async fn get(state: &AppState, org: Uuid, id: Uuid) -> ApiResult<ContactImport> {
    db::imports::find(&state.db.conn, org, id)
        .await?
        .map(ContactImport::from)
        .ok_or_else(|| ApiError::not_found("Import"))
}

/// `GET /contacts/imports`, newest first.
pub async fn list(state: &AppState, org: Uuid, q: PageQuery) -> ApiResult<Page<ContactImport>> {
    let (rows, total) = db::imports::page(&state.db.conn, org, q.page, q.page_size).await?;
    Ok(Page {
        data: rows.into_iter().map(ContactImport::from).collect(),
        meta: PageMeta::new(q.page, q.page_size, total),
    })
}
