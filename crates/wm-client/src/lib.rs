//! Typed async client for the wm API v1 (reqwest, rustls only).
//!
//! Resources are reached through accessors on [`Client`], in the octocrab style; list
//! endpoints return builders that either `.send()` one page or `.stream()` every item.
//!
//! - [`contacts`]: `client.contacts()` — list/stream, get, create, update, delete, bulk,
//!   timeline, notes, identities.
//! - [`imports`]: `client.imports()` — upload a CSV or NDJSON file of contacts, follow the
//!   job (get, wait, list).
//! - [`campaigns`]: `client.campaigns()` — list/stream, create, get, recipients, audience,
//!   cost preview, send, pause, resume, duplicate.
//! - [`webhooks`]: `client.webhooks()` — list, create, get, update, delete, deliveries,
//!   retry a delivery.
//! - [`lookups`]: `client.lookups()` — lifecycle stages, users, templates, phone numbers,
//!   wallet.
//! - [`conversations`]: `client.conversations()` — list/stream (filter, status, channel,
//!   contact, assignee, search), get.
//! - [`automations`]: `client.automations()` — list (tab, trigger, search, archived), get,
//!   run logs (list/stream).
//! - [`reports`]: `client.reports()` — commercial, lifecycle, campaigns, wallet, team and
//!   conversations, each for a `from`/`to` period.
//! - [`pagination`]: [`PageStream`], the stream of a list's items
//!   across pages.
//! - [`retry`]: [`RetryPolicy`] — what is retried (429, 5xx, timeouts,
//!   connection errors; writes only on 429 and connection errors) and the backoff
//!   (exponential, full jitter, capped, honouring `Retry-After`).
//! - [`Error`] and [`ErrorCode`]: validation messages, business codes (unknown ones arrive as
//!   [`ErrorCode::Unknown`]), `Retry-After`, [`Error::is_retryable`].
//! - [`types`]: the wire types (a re-export of `wm_types`).
//!
//! [`Client::get`] reaches any other GET endpoint with the caller's own types.
//!
//! The client installs ring as the process's default rustls crypto provider if none is.
//!
//! ```no_run
//! use futures::StreamExt;
//! use std::time::Duration;
//! use wm_client::types::contacts::{CreateContact, TimelineFilter};
//! # async fn run() -> Result<(), wm_client::Error> {
//! let client = wm_client::Client::builder()
//!     .base_url("http://127.0.0.1:8080/api/v1")
//!     .api_key("wm_live_...")
//!     .timeout(Duration::from_secs(10))
//!     .build()?;
//! let contact = client
//!     .contacts()
//!     .create(&CreateContact {
//!         full_name: Some("Ana".into()),
//!         tags: Some(vec!["vip".into()]),
//!         ..Default::default()
//!     })
//!     .await?;
//! let notes = client.contacts().timeline(contact.id).kind(TimelineFilter::Notes).send().await?;
//! println!("{} notes", notes.meta.total);
//!
//! let mut vips = client.contacts().list().tag("vip").page_size(100).stream();
//! while let Some(c) = vips.next().await {
//!     println!("{:?}", c?.full_name);
//! }
//! # Ok(()) }
//! ```

pub mod automations;
pub mod campaigns;
mod client;
pub mod contacts;
pub mod conversations;
mod error;
mod http;
pub mod imports;
pub mod lookups;
pub mod media;
pub mod pagination;
pub mod reports;
pub mod retry;
pub mod webhooks;

pub use client::{Client, ClientBuilder};
pub use error::{Error, ErrorCode};
pub use pagination::PageStream;
pub use retry::RetryPolicy;
/// The wire types of API v1 (`wm_types`), re-exported so callers need one dependency.
pub use wm_types as types;
