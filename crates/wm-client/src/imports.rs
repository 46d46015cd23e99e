//! `/contacts/imports`: upload a CSV or NDJSON file of contacts, then follow the job.
//!
//! ```no_run
//! use std::time::Duration;
//! use wm_client::imports::ImportFile;
//! use wm_client::types::imports::{DedupeMode, ImportOptions, ImportStatus};
//! # async fn run(client: wm_client::Client) -> Result<(), wm_client::Error> {
//! let csv = b"Name,Phone,Tags\nAna,+5215512345678,vip;lead\n".to_vec();
//! let options = ImportOptions {
//!     dedupe: Some(DedupeMode::Update),
//!     mapping: Some([("Name", "fullName"), ("Phone", "primaryPhone"), ("Tags", "tags")]
//!         .into_iter().map(|(c, f)| (c.to_owned(), f.to_owned())).collect()),
//!     ..ImportOptions::default()
//! };
//! let job = client.imports().upload(ImportFile::csv("contacts.csv", csv), &options).await?;
//! let done = client.imports().wait(job.id, Duration::from_millis(500)).await?;
//! assert_eq!(done.status, ImportStatus::Completed);
//! println!("{} created, {} refused", done.created, done.failed);
//! # Ok(()) }
//! ```

use std::time::Duration;

use uuid::Uuid;
use wm_types::common::Page;
use wm_types::imports::{ContactImport, ImportOptions, ImportStatus};

use crate::http::{FormPart, Request};
use crate::pagination::{PageParams, PageStream, page_setters, stream_list};
use crate::{Client, Error};

/// A file to import: its bytes, name and type.
#[derive(Debug, Clone)]
pub struct ImportFile {
    name: String,
    content_type: &'static str,
    bytes: Vec<u8>,
}

impl ImportFile {
    /// A CSV file (a header row, then one contact per record).
    pub fn csv(name: impl Into<String>, bytes: Vec<u8>) -> Self {
        ImportFile {
            name: name.into(),
            content_type: "text/csv",
            bytes,
        }
    }

    /// An NDJSON file (one `POST /contacts` body per line).
    pub fn ndjson(name: impl Into<String>, bytes: Vec<u8>) -> Self {
        ImportFile {
            name: name.into(),
            content_type: "application/x-ndjson",
            bytes,
        }
    }
}

impl Client {
    /// The contact imports resource.
    pub fn imports(&self) -> Imports<'_> {
        Imports { client: self }
    }
}

/// The contact imports resource: `client.imports()`.
#[derive(Debug, Clone, Copy)]
pub struct Imports<'c> {
    client: &'c Client,
}

/// The `multipart/form-data` body of an upload: the options part, then the file part.
fn multipart(options: &ImportOptions, file: &ImportFile) -> Result<(Vec<u8>, String), Error> {
    let options = serde_json::to_vec(options)
        .map_err(|e| Error::Config(format!("import options could not be serialised: {e}")))?;
    Ok(crate::http::form(&[
        FormPart {
            name: "options",
            filename: None,
            content_type: "application/json",
            bytes: &options,
        },
        FormPart {
            name: "file",
            filename: Some(&file.name),
            content_type: file.content_type,
            bytes: &file.bytes,
        },
    ]))
}

impl<'c> Imports<'c> {
    /// `POST /contacts/imports`: stores the file and queues the job (`QUEUED`).
    pub async fn upload(
        &self,
        file: ImportFile,
        options: &ImportOptions,
    ) -> Result<ContactImport, Error> {
        let (body, content_type) = multipart(options, &file)?;
        self.client
            .send(Request::post("/contacts/imports").raw(body, content_type))
            .await
    }

    /// `GET /contacts/imports/{id}`: the job's status and counts.
    pub async fn get(&self, id: Uuid) -> Result<ContactImport, Error> {
        self.client
            .send(Request::get(format!("/contacts/imports/{id}")))
            .await
    }

    /// Polls the job every `every` until it is `COMPLETED` or `FAILED`.
    pub async fn wait(&self, id: Uuid, every: Duration) -> Result<ContactImport, Error> {
        loop {
            let job = self.get(id).await?;
            if matches!(job.status, ImportStatus::Completed | ImportStatus::Failed) {
                return Ok(job);
            }
            tokio::time::sleep(every).await;
        }
    }

    /// `GET /contacts/imports`, newest first: a page builder, then `.send()` or `.stream()`.
    pub fn list(&self) -> ListImports<'c> {
        ListImports {
            client: self.client,
            query: PageParams::default(),
        }
    }
}

/// `GET /contacts/imports` query.
#[derive(Debug, Clone)]
#[must_use = "a list builder does nothing until .send() or .stream()"]
pub struct ListImports<'c> {
    client: &'c Client,
    query: PageParams,
}

impl ListImports<'_> {
    page_setters!();

    /// One page.
    pub async fn send(self) -> Result<Page<ContactImport>, Error> {
        self.client
            .send(Request::get("/contacts/imports").query(&self.query)?)
            .await
    }

    /// Every import, across pages.
    pub fn stream(self) -> PageStream<ContactImport> {
        stream_list::<Page<ContactImport>, _>(
            self.client,
            "/contacts/imports".to_owned(),
            self.query,
        )
    }
}
