//! Import: upload a CSV, map its columns, watch the job and read the rows it refused. The
//! file streams from the browser through the console into the API's own upload, never held
//! whole in memory; the mapping (chosen in the page after the file's header row is read in
//! the browser) travels as the API's `options` part, after the file (the API takes parts in
//! any order).

use std::collections::BTreeMap;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, Request, State};
use axum::http::Method;
use axum::response::Response;
use axum::routing::get;
use maud::{Markup, html};
use uuid::Uuid;
use wm_types::common::Page as ApiPage;
use wm_types::enums::Scope;
use wm_types::imports::{ContactImport, DedupeMode, ImportOptions, ImportStatus};

use crate::console::answer::fragment;
use crate::console::api::decode;
use crate::console::context::Console;
use crate::console::page::{Page, PageResult, done, failed, page, redirect};
use crate::console::session::Session;
use crate::console::upload::{self, Upload};
use crate::console::view::{badge, hidden, table, when, when_opt};

/// The import routes.
pub fn routes() -> Router<Console> {
    Router::new()
        .route("/console/imports", get(list).post(upload))
        .route("/console/imports/new", get(new))
        .route("/console/imports/{id}", get(show))
        .route("/console/imports/{id}/live", get(live))
}

/// The contact fields a column can fill, as the API names them.
const FIELDS: [(&str, &str); 13] = [
    ("fullName", "Full name"),
    ("primaryPhone", "Phone"),
    ("primaryEmail", "E-mail"),
    ("company", "Company"),
    ("country", "Country"),
    ("lifecycleStageId", "Lifecycle stage id"),
    ("ownerId", "Owner id"),
    ("optedOut", "Opted out"),
    ("consent.given", "Consent given"),
    ("consent.at", "Consent date"),
    ("consent.how", "Consent how"),
    ("tags", "Tags"),
    ("note", "Note"),
];

/// `GET /console/imports`.
async fn list(State(_): State<Console>, s: Session) -> PageResult<Page> {
    let jobs: ApiPage<ContactImport> = s.api.get("/contacts/imports?pageSize=50").await?;
    Ok(page(
        &s,
        "Import",
        "Imports",
        html! {
            h1 { "Imports" }
            @if s.can(Scope::ContactsWrite) {
                p { a.button href="/console/imports/new" { "Import contacts" } }
            }
            (table(
                None,
                "Imports, newest first",
                &["File", "Status", "#Rows", "#Created", "#Refused", "Uploaded"],
                html! {
                        @for j in &jobs.data {
                            tr {
                                td { a href={ "/console/imports/" (j.id) } { (j.file_name.as_deref().unwrap_or("(no name)")) } }
                                td { (badge(j.status.as_str())) }
                                td.num { (j.rows_read) }
                                td.num { (j.created) }
                                td.num { (j.failed) }
                                td { (when(s.tz, &j.created_at)) }
                            }
                        }
                },
                jobs.data.is_empty().then_some("Nothing imported yet."),
            ))
        },
    ))
}

/// `GET /console/imports/new`. The hidden fields come first and the file last, in the
/// order the upload handler reads them.
async fn new(State(_): State<Console>, s: Session) -> PageResult<Page> {
    Ok(page(
        &s,
        "Import",
        "Import contacts",
        html! {
            h1 { "Import contacts" }
            form.stack.card method="post" action="/console/imports" enctype="multipart/form-data" {
                (hidden(&s))
                div.field {
                    label for="import-file" { "CSV file" }
                    span.hint id="import-file-hint" {
                        "A header row, then one contact per row. Up to 512 MB."
                    }
                    input id="import-file" type="file" name="file" accept=".csv,text/csv" required
                        aria-describedby="import-file-hint";
                }
                div.field {
                    label for="f-dedupe" { "When the phone is already a contact's" }
                    select id="f-dedupe" name="dedupe" {
                        option value="SKIP" { "Skip the row" }
                        option value="UPDATE" { "Update the contact" }
                    }
                }
                table id="mapping" hidden {
                    caption { "Columns: choose the contact field each one fills" }
                    thead { tr { th scope="col" { "Column" } th scope="col" { "Field" } } }
                    tbody {}
                }
                template id="mapping-fields" {
                    select {
                        option value="" { "Ignore this column" }
                        @for (name, label) in FIELDS { option value=(name) { (label) } }
                    }
                }
                p.hint { "Without the page's script, columns named like a field (fullName, primaryPhone, …) are used and others ignored." }
                div { button type="submit" { "Upload and import" } }
            }
        },
    ))
}

/// The upload in flight: the browser's parts in, the API's parts out.
struct Relay {
    parts: multer::Multipart<'static>,
    file: Option<multer::Field<'static>>,
    options: ImportOptions,
    mapping: BTreeMap<String, String>,
    boundary: String,
    ended: bool,
}

impl Relay {
    /// The next bytes of the API's body.
    async fn next(mut self) -> Result<Option<(Bytes, Relay)>, multer::Error> {
        loop {
            if let Some(file) = self.file.as_mut() {
                match file.chunk().await? {
                    Some(bytes) => return Ok(Some((bytes, self))),
                    None => {
                        self.file = None;
                        return Ok(Some((Bytes::from_static(b"\r\n"), self)));
                    }
                }
            }
            if self.ended {
                return Ok(None);
            }
            match self.parts.next_field().await? {
                Some(field) if field.name() == Some("file") => {
                    let header = upload::part_header(
                        &self.boundary,
                        "file",
                        Some(field.file_name().unwrap_or("contacts.csv")),
                        "text/csv",
                    );
                    self.file = Some(field);
                    return Ok(Some((Bytes::from(header), self)));
                }
                Some(field) => {
                    let name = field.name().unwrap_or_default().to_owned();
                    let value = field.text().await?;
                    if let Some(column) = name.strip_prefix("map:") {
                        if !value.is_empty() {
                            self.mapping.insert(column.to_owned(), value);
                        }
                    } else if name == "dedupe" {
                        self.options.dedupe = Some(if value == "UPDATE" {
                            DedupeMode::Update
                        } else {
                            DedupeMode::Skip
                        });
                    }
                }
                None => {
                    self.ended = true;
                    if !self.mapping.is_empty() {
                        self.options.mapping = Some(std::mem::take(&mut self.mapping));
                    }
                    let options = serde_json::to_string(&self.options).unwrap_or_default();
                    let tail = format!(
                        "{}{options}\r\n--{}--\r\n",
                        upload::part_header(&self.boundary, "options", None, "application/json"),
                        self.boundary
                    );
                    return Ok(Some((Bytes::from(tail), self)));
                }
            }
        }
    }
}

/// `POST /console/imports` (multipart: `_csrf` first, checked here; see [`crate::console::csrf`]).
async fn upload(State(_): State<Console>, s: Session, req: Request) -> PageResult<Response> {
    let back = "/console/imports/new";
    let Upload { parts, idempotency } = match upload::open(&s, req, back).await {
        Ok(u) => u,
        Err(answer) => return Ok(answer),
    };
    let out_boundary = upload::boundary();
    let relay = Relay {
        parts,
        file: None,
        options: ImportOptions::default(),
        mapping: BTreeMap::new(),
        boundary: out_boundary.clone(),
        ended: false,
    };
    let body = Body::from_stream(futures::stream::try_unfold(relay, Relay::next));
    let answer = s
        .api
        .call(
            Method::POST,
            "/contacts/imports",
            Some(&upload::content_type(&out_boundary)),
            body,
            idempotency.as_deref(),
        )
        .await;
    match answer.and_then(|b| decode::<ContactImport>(&b)) {
        Ok(job) => Ok(redirect(
            &s,
            &format!("/console/imports/{}", job.id),
            done("The file is uploaded; the import runs in the background."),
        )),
        Err(f) => Ok(redirect(&s, back, failed(&f))),
    }
}

/// `GET /console/imports/{id}`.
async fn show(State(_): State<Console>, s: Session, Path(id): Path<Uuid>) -> PageResult<Page> {
    let job: ContactImport = s.api.get(format!("/contacts/imports/{id}")).await?;
    let title = format!("Import of {}", job.file_name.as_deref().unwrap_or("a file"));
    Ok(page(
        &s,
        "Import",
        &title,
        html! {
            h1 { (title) }
            (progress(&job, s.tz))
            p { a href="/console/contacts" { "See the contacts" } " · " a href="/console/imports" { "All imports" } }
        },
    ))
}

/// `GET /console/imports/{id}/live`: the progress part alone.
async fn live(State(_): State<Console>, s: Session, Path(id): Path<Uuid>) -> PageResult<Response> {
    let job: ContactImport = s.api.get(format!("/contacts/imports/{id}")).await?;
    Ok(fragment(progress(&job, s.tz)))
}

/// The job's status, progress bar, counts and refused rows; live while it runs.
fn progress(job: &ContactImport, tz: chrono_tz::Tz) -> Markup {
    let running = matches!(job.status, ImportStatus::Queued | ImportStatus::Running);
    let live = running.then(|| format!("/console/imports/{}/live", job.id));
    html! {
        section.card aria-labelledby="import-h" aria-live="polite" data-live=[live] {
            h2 id="import-h" { "Progress" }
            p { "Status: " strong id="import-status" { (job.status.as_str()) } }
            label for="import-progress" { (job.rows_processed) " of " (job.rows_read) " rows processed" }
            progress id="import-progress" max=(job.rows_read.max(1)) value=(job.rows_processed) {
                (job.rows_processed) " of " (job.rows_read)
            }
            dl.facts {
                dt { "Created" } dd { (job.created) }
                dt { "Updated" } dd { (job.updated) }
                dt { "Skipped (duplicates)" } dd { (job.skipped) }
                dt { "Refused" } dd { (job.failed) }
                dt { "Started" } dd { (when_opt(tz, job.started_at.as_ref())) }
                dt { "Finished" } dd { (when_opt(tz, job.finished_at.as_ref())) }
            }
            @if let Some(message) = &job.error_message {
                div.flash.error role="alert" { (message) }
            }
            @if !job.errors.is_empty() {
                h3 { "Refused rows" }
                div.table-wrap {
                    table id="import-errors" {
                        thead { tr { th.num scope="col" { "Row" } th scope="col" { "Why" } } }
                        tbody {
                            @for e in &job.errors {
                                tr { td.num { (e.row) } td { (e.messages.join("; ")) } }
                            }
                        }
                    }
                }
            }
        }
    }
}
