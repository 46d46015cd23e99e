//! Wire types of the wm API v1.
//!
//! Every JSON body the API reads or writes is a type here, separate from any database
//! entity, so the server, the client and webhook receivers share one definition.
//!
//! - [`common`]: timestamps, money, the pagination envelope and the two error bodies.
//! - [`enums`]: the spec's enumerations, tolerant of values added later.
//! - [`contacts`]: contacts, identities, notes, the timeline and their requests.
//! - [`imports`]: contact import jobs and their options.
//! - [`campaigns`]: campaigns, recipients, audiences, sends, their lists and queries.
//! - [`catalog`]: templates, sender numbers, the wallet, and the bodies that feed them.
//! - [`automations`], [`conversations`], [`reports`]: the read-mostly resources.
//! - [`lookups`]: lifecycle stages and users.
//! - [`admin`]: the operator API (organisations, users, keys, stages, channels, deals);
//!   [`channels`]: connecting Pages, Instagram accounts and website chats.
//! - [`events`]: webhook event envelopes and payloads.
//! - [`webchat`]: the website chat widget's API.
//! - [`webhooks`]: webhooks and their delivery log.
//!
//! Feature `sea-orm` (off by default; wm-server turns it on): every enum is also a sea-orm
//! column type stored as its wire spelling, so a storage layer keeps statuses typed.
//!
//! ```
//! use wm_types::contacts::CreateContact;
//! let body: CreateContact = serde_json::from_str(r#"{"fullName":"Ana"}"#).unwrap();
//! assert_eq!(body.full_name.as_deref(), Some("Ana"));
//! ```

#[macro_use]
mod macros;

pub mod admin;
pub mod automations;
pub mod campaigns;
pub mod catalog;
pub mod channels;
pub mod common;
pub mod contacts;
pub mod conversations;
pub mod enums;
pub mod events;
pub mod imports;
pub mod lookups;
pub mod messages;
pub mod reports;
pub mod webchat;
pub mod webhooks;

pub use common::{Money, Page, PageMeta, PageQuery, Timestamp};
