//! Storing an upload: the multipart body is read as it arrives, each record or line turned
//! into the body `POST /contacts` takes (or the reason it cannot be one), and the rows stored
//! a thousand per chunk. Nothing holds the whole file; the job row is written only once
//! every chunk is stored, so a job never points at a partial file. The parts come in any
//! order (generated clients send the file first): a file that arrives before its options is
//! spooled to an anonymous temporary file and read once the options are known.

use std::io;

use axum::extract::Multipart;
use axum::extract::multipart::MultipartError;
use axum::http::StatusCode;
use futures::{StreamExt, TryStreamExt};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead};
use tokio_util::io::StreamReader;
use uuid::Uuid;
use wm_core::imports::{self as rules, DEFAULT_TAG_SEPARATOR};
use wm_core::validate::parse_value;
use wm_types::imports::{DedupeMode, ImportFormat, ImportOptions, ImportStatus};

use crate::db;
use crate::db::entities::contact_import;
use crate::error::{ApiError, ApiResult};
use crate::keys::AuthContext;
use crate::state::AppState;

/// Rows per stored chunk, and so per write transaction of the worker.
pub const CHUNK_ROWS: usize = 1000;

pub use wm_types::imports::MAX_IMPORT_BYTES;

/// The longest NDJSON line, and the longest options part.
pub const MAX_LINE: usize = 64 * 1024;

/// One stored row: its number in the file and its body, or why it has none.
#[derive(Debug, Serialize, Deserialize)]
pub struct StoredRow {
    /// Row number (see `ImportRowError::row`).
    pub row: u64,
    /// The `POST /contacts` body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<Value>,
    /// Why the row could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl StoredRow {
    fn body(row: u64, body: Value) -> Self {
        StoredRow {
            row,
            body: Some(body),
            error: None,
        }
    }

    fn error(row: u64, error: impl Into<String>) -> Self {
        StoredRow {
            row,
            body: None,
            error: Some(error.into()),
        }
    }
}

/// Collects rows and stores them a chunk at a time.
struct Chunker<'a> {
    state: &'a AppState,
    import: Uuid,
    seq: i32,
    rows: Vec<StoredRow>,
    read: u64,
}

impl Chunker<'_> {
    async fn push(&mut self, row: StoredRow) -> ApiResult<()> {
        self.rows.push(row);
        self.read += 1;
        if self.rows.len() >= CHUNK_ROWS {
            self.flush().await?;
        }
        Ok(())
    }

    async fn flush(&mut self) -> ApiResult<()> {
        if self.rows.is_empty() {
            return Ok(());
        }
        let json = serde_json::to_string(&self.rows).map_err(anyhow::Error::from)?;
        let now = self.state.now_ms();
        db::imports::insert_chunk(&self.state.db.conn, self.import, self.seq, json, now).await?;
        self.seq += 1;
        self.rows.clear();
        Ok(())
    }
}

/// The error of a body that could not be read: the multipart layer's own status (413 past
/// the size limit), 408 past the body deadline, else 400.
fn read_error(e: &io::Error) -> ApiError {
    if let Some(m) = e.get_ref().and_then(|e| e.downcast_ref::<MultipartError>()) {
        return multipart_error(m);
    }
    ApiError::invalid(format!("the file could not be read: {e}"))
}

fn multipart_error(e: &MultipartError) -> ApiError {
    let status = e.status();
    if status == StatusCode::PAYLOAD_TOO_LARGE {
        return ApiError::business(
            status,
            None,
            format!("The upload is larger than {MAX_IMPORT_BYTES} bytes."),
        );
    }
    if crate::error::is_timeout(e) {
        return crate::error::body_timeout();
    }
    ApiError::invalid(format!(
        "the multipart body could not be read: {}",
        e.body_text()
    ))
}

fn csv_error(e: csv_async::Error) -> ApiError {
    match e.into_kind() {
        csv_async::ErrorKind::Io(io) => read_error(&io),
        other => ApiError::invalid(format!("the CSV file could not be read: {other:?}")),
    }
}

async fn read_csv<R: AsyncRead + Unpin + Send>(
    reader: R,
    options: &ImportOptions,
    out: &mut Chunker<'_>,
) -> ApiResult<()> {
    let mut rdr = csv_async::AsyncReaderBuilder::new()
        .flexible(true)
        .create_reader(reader);
    let header: Vec<String> = rdr
        .byte_headers()
        .await
        .map_err(csv_error)?
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let h = String::from_utf8_lossy(h);
            let h = if i == 0 {
                h.trim_start_matches('\u{feff}')
            } else {
                &h
            };
            h.trim().to_owned()
        })
        .collect();
    let plan = rules::plan_columns(&header, options.mapping.as_ref()).map_err(ApiError::invalid)?;
    let separator = options
        .tag_separator
        .as_deref()
        .unwrap_or(DEFAULT_TAG_SEPARATOR);
    let mut records = rdr.byte_records();
    let mut row = 1;
    while let Some(record) = records.next().await {
        let record = record.map_err(csv_error)?;
        row += 1;
        let stored = if record.len() != header.len() {
            StoredRow::error(row, rules::width_error(record.len(), header.len()))
        } else {
            match record
                .iter()
                .map(std::str::from_utf8)
                .collect::<Result<Vec<_>, _>>()
            {
                Ok(cells) => StoredRow::body(row, rules::csv_row(&plan, &cells, separator)),
                Err(_) => StoredRow::error(row, "the row is not valid UTF-8"),
            }
        };
        out.push(stored).await?;
    }
    Ok(())
}

/// Reads one line (its `\n` included) into `buf`, keeping at most `max` bytes; returns the
/// bytes consumed (0 at the end) and whether the line fit.
async fn read_line<R: AsyncBufRead + Unpin>(
    r: &mut R,
    buf: &mut Vec<u8>,
    max: usize,
) -> io::Result<(usize, bool)> {
    let (mut consumed, mut fits) = (0, true);
    loop {
        let available = r.fill_buf().await?;
        if available.is_empty() {
            return Ok((consumed, fits));
        }
        let (take, done) = match available.iter().position(|b| *b == b'\n') {
            Some(i) => (i + 1, true),
            None => (available.len(), false),
        };
        if fits {
            if buf.len() + take > max + 1 {
                fits = false;
                buf.clear();
            } else {
                buf.extend_from_slice(&available[..take]);
            }
        }
        r.consume(take);
        consumed += take;
        if done {
            return Ok((consumed, fits));
        }
    }
}

async fn read_ndjson<R: AsyncRead + Unpin>(reader: R, out: &mut Chunker<'_>) -> ApiResult<()> {
    let mut reader = tokio::io::BufReader::new(reader);
    let mut line = Vec::new();
    let mut row = 0;
    loop {
        line.clear();
        let (n, fits) = read_line(&mut reader, &mut line, MAX_LINE)
            .await
            .map_err(|e| read_error(&e))?;
        if n == 0 {
            return Ok(());
        }
        row += 1;
        let stored = if !fits {
            StoredRow::error(row, format!("the row is longer than {MAX_LINE} bytes"))
        } else {
            let text = String::from_utf8_lossy(&line);
            let text = text.trim_start_matches('\u{feff}').trim();
            if text.is_empty() {
                continue;
            }
            match serde_json::from_str::<Value>(text) {
                Ok(v @ Value::Object(_)) => StoredRow::body(row, rules::imported(v)),
                Ok(_) => StoredRow::error(row, "the row is not a JSON object"),
                Err(e) => StoredRow::error(row, format!("the row is not valid JSON: {e}")),
            }
        };
        out.push(stored).await?;
    }
}

fn parse_options(text: &str) -> ApiResult<ImportOptions> {
    let value: Value = serde_json::from_str(text)
        .map_err(|e| ApiError::invalid(format!("options is not valid JSON: {e}")))?;
    parse_value(<ImportOptions as wm_core::Validated>::schema(), value)
        .map_err(ApiError::Validation)
}

/// What the upload stored.
struct Stored {
    format: ImportFormat,
    file_name: Option<String>,
    rows: u64,
    chunks: i32,
}

/// `POST /contacts/imports`: stores the file's rows and queues the job (202). The parts are
/// `options` (JSON, optional) and `file`, in either order.
pub async fn upload(
    state: &AppState,
    auth: &AuthContext,
    multipart: Multipart,
) -> ApiResult<wm_types::imports::ContactImport> {
    let id = Uuid::now_v7();
    let (options, stored) = match store(state, id, multipart).await {
        Ok(done) => done,
        Err(e) => {
            // Best effort: the hourly purge removes what is left of an upload cut short.
            let _ = db::imports::delete_chunks(&state.db.conn, id).await;
            return Err(e);
        }
    };
    let job = contact_import::Model {
        id,
        organization_id: auth.org_id,
        user_id: auth.user_id,
        format: stored.format,
        dedupe: options.dedupe.unwrap_or(DedupeMode::Skip),
        file_name: stored.file_name,
        status: ImportStatus::Queued,
        rows_read: i64::try_from(stored.rows).unwrap_or(i64::MAX),
        chunks: stored.chunks,
        next_chunk: 0,
        rows_processed: 0,
        created_count: 0,
        updated_count: 0,
        skipped_count: 0,
        failed_count: 0,
        errors: "[]".to_owned(),
        error_message: None,
        lease_until: None,
        created_at: state.now_ms(),
        started_at: None,
        finished_at: None,
    };
    let txn = state.db.write().await?;
    db::imports::insert(&*txn, job.clone()).await?;
    let answer = wm_types::imports::ContactImport::from(job);
    crate::idempotency::seal(&txn, axum::http::StatusCode::ACCEPTED, &answer).await?;
    txn.commit().await?;
    state.imports_wake.notify_one();
    Ok(answer)
}

/// A file part read before the options: where it was spooled, and what its part said.
struct Spooled {
    file: tokio::fs::File,
    content_type: Option<String>,
    file_name: Option<String>,
}

async fn store(
    state: &AppState,
    id: Uuid,
    mut multipart: Multipart,
) -> ApiResult<(ImportOptions, Stored)> {
    let mut options: Option<ImportOptions> = None;
    let mut stored: Option<Stored> = None;
    let mut spooled: Option<Spooled> = None;
    while let Some(field) = multipart
        .next_field()
        .await
        .map_err(|e| multipart_error(&e))?
    {
        let name = field.name().unwrap_or_default().to_owned();
        let file_seen = stored.is_some() || spooled.is_some();
        match name.as_str() {
            "options" if options.is_none() => {
                let bytes = field.bytes().await.map_err(|e| multipart_error(&e))?;
                if bytes.len() > MAX_LINE {
                    return Err(ApiError::invalid("options must be at most 64 KiB"));
                }
                options = Some(parse_options(&String::from_utf8_lossy(&bytes))?);
            }
            "options" => return Err(ApiError::invalid("the body takes one options part")),
            "file" if file_seen => return Err(ApiError::invalid("the body takes one file part")),
            "file" => {
                let content_type = field.content_type().map(str::to_owned);
                let file_name = field
                    .file_name()
                    .map(|n| n.chars().filter(|c| *c != '\0').take(255).collect());
                let reader = StreamReader::new(field.map_err(io::Error::other));
                match &options {
                    Some(opts) => {
                        let read = read_file(state, id, opts, content_type, file_name, reader);
                        stored = Some(read.await?);
                    }
                    None => spooled = Some(spool(reader, content_type, file_name).await?),
                }
            }
            other => {
                return Err(ApiError::invalid(format!(
                    "unknown part {other}: the body takes an options part and a file part"
                )));
            }
        }
    }
    let options = options.unwrap_or_default();
    if let Some(mut s) = spooled {
        use tokio::io::AsyncSeekExt;
        s.file
            .seek(io::SeekFrom::Start(0))
            .await
            .map_err(|e| read_error(&e))?;
        let reader = tokio::io::BufReader::new(s.file);
        stored = Some(read_file(state, id, &options, s.content_type, s.file_name, reader).await?);
    }
    let stored = stored.ok_or_else(|| ApiError::invalid("the body has no file part"))?;
    Ok((options, stored))
}

/// Copies a file part to an anonymous temporary file.
async fn spool<R: AsyncRead + Unpin>(
    mut reader: R,
    content_type: Option<String>,
    file_name: Option<String>,
) -> ApiResult<Spooled> {
    let std_file = tempfile::tempfile().map_err(|e| {
        ApiError::Internal(anyhow::anyhow!("no temporary file for the upload: {e}"))
    })?;
    let mut file = tokio::fs::File::from_std(std_file);
    tokio::io::copy(&mut reader, &mut file)
        .await
        .map_err(|e| read_error(&e))?;
    Ok(Spooled {
        file,
        content_type,
        file_name,
    })
}

/// Reads a file's rows into stored chunks, as `opts` says.
async fn read_file<R: AsyncRead + Unpin + Send>(
    state: &AppState,
    id: Uuid,
    opts: &ImportOptions,
    content_type: Option<String>,
    file_name: Option<String>,
    reader: R,
) -> ApiResult<Stored> {
    let format = rules::format_of(opts.format, content_type.as_deref(), file_name.as_deref())
        .ok_or_else(|| {
            ApiError::invalid(
                "the file's format is unknown: set options.format to CSV or NDJSON, \
                 or send the file part as text/csv or application/x-ndjson",
            )
        })?;
    let mut out = Chunker {
        state,
        import: id,
        seq: 0,
        rows: Vec::new(),
        read: 0,
    };
    match format {
        ImportFormat::Ndjson => read_ndjson(reader, &mut out).await?,
        _ => read_csv(reader, opts, &mut out).await?,
    }
    out.flush().await?;
    Ok(Stored {
        format,
        file_name,
        rows: out.read,
        chunks: out.seq,
    })
}
