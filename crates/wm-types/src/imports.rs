//! Contact imports: `POST /contacts/imports` loads a CSV or NDJSON file of contacts in the
//! background; the job shows its progress and the first rows it refused.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::common::Timestamp;

/// The fields a CSV column may fill, as `POST /contacts` names them (`consent.*` nested):
/// the values an import's `mapping` may hold.
pub const FIELDS: [&str; 13] = [
    "fullName",
    "primaryPhone",
    "primaryEmail",
    "company",
    "country",
    "lifecycleStageId",
    "ownerId",
    "optedOut",
    "consent.given",
    "consent.at",
    "consent.how",
    "tags",
    "note",
];

/// The largest file `POST /contacts/imports` takes (`413` beyond).
pub const MAX_IMPORT_BYTES: usize = 512 * 1024 * 1024;

wire_enum!(
    /// The file's format.
    ImportFormat {
        /// A header row, then one contact per record; columns map to fields.
        Csv = "CSV",
        /// One JSON object per line, in the shape of `POST /contacts`.
        Ndjson = "NDJSON",
    }
);

wire_enum!(
    /// What a row whose phone an existing contact already holds does.
    DedupeMode {
        /// The row is skipped and counted in `skipped`.
        Skip = "SKIP",
        /// The row's fields replace the contact's (its tags are added), as a PATCH would.
        Update = "UPDATE",
    }
);

wire_enum!(
    /// Where an import job is.
    ImportStatus {
        /// Stored, waiting for a worker.
        Queued = "QUEUED",
        /// Rows are being written.
        Running = "RUNNING",
        /// Every row was processed (some may have failed: see `failed` and `errors`).
        Completed = "COMPLETED",
        /// The job stopped before its end (see `errorMessage`).
        Failed = "FAILED",
    }
);

/// Longest tag separator.
pub const MAX_TAG_SEPARATOR: usize = 5;

/// The `options` part of `POST /contacts/imports` (multipart, before or after the `file` part).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImportOptions {
    /// `CSV` or `NDJSON`; by default taken from the file part's content type or name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<ImportFormat>,
    /// `SKIP` (default) or `UPDATE`, for rows whose normalised phone a contact holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dedupe: Option<DedupeMode>,
    /// CSV only: header column → contact field (`fullName`, `primaryPhone`, `primaryEmail`,
    /// `company`, `country`, `lifecycleStageId`, `ownerId`, `optedOut`, `consent.given`,
    /// `consent.at`, `consent.how`, `tags`, `note`). Without it, columns named like a
    /// field map to it and others are ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "import-mapping"))]
    pub mapping: Option<BTreeMap<String, String>>,
    /// CSV only: what separates the tags of a `tags` cell (default `;`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = MAX_TAG_SEPARATOR))]
    pub tag_separator: Option<String>,
}

/// A row the import refused, with the validator's messages.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImportRowError {
    /// The row's number in the file: CSV records count from 1 at the header row (the
    /// first contact is row 2); NDJSON lines count from 1.
    pub row: u64,
    /// Why, in the words `POST /contacts` would use.
    pub messages: Vec<String>,
}

/// An import job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContactImport {
    /// Job id.
    pub id: Uuid,
    /// Where the job is.
    pub status: ImportStatus,
    /// The file's format.
    pub format: ImportFormat,
    /// What duplicates do.
    pub dedupe: DedupeMode,
    /// The uploaded file's name, or null.
    pub file_name: Option<String>,
    /// Rows read from the file (every record or non-blank line after the header).
    pub rows_read: u64,
    /// Rows processed so far.
    pub rows_processed: u64,
    /// Contacts created.
    pub created: u64,
    /// Existing contacts updated (`UPDATE`).
    pub updated: u64,
    /// Rows skipped as duplicates (`SKIP`), or identical to the contact (`UPDATE`).
    pub skipped: u64,
    /// Rows refused.
    pub failed: u64,
    /// The first refused rows (at most 100), in row order.
    pub errors: Vec<ImportRowError>,
    /// Why the job failed, or null.
    pub error_message: Option<String>,
    /// When it was uploaded.
    pub created_at: Timestamp,
    /// When a worker started on it, or null.
    pub started_at: Option<Timestamp>,
    /// When it ended, or null.
    pub finished_at: Option<Timestamp>,
}
