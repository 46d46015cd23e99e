//! The storage-free domain engine of wm.
//!
//! Decisions live here as pure functions over wm-types; the server only does I/O around them.
//!
//! - [`validate`]: declarative schemas that answer in class-validator's words.
//! - [`phone`]: the [`phone::Phone`] newtype (normalised international numbers).
//! - [`tags`]: tag normalisation and merging.
//! - [`contacts`]: contact request schemas and the create/update rules.
//! - [`admin`]: schemas of the operator API bodies.
//! - [`webhooks`]: webhook schemas, URL checks, retry schedule.
//! - [`time`]: the injectable [`time::Clock`] and ISO 8601 parsing.
//!
//! ```
//! use wm_core::phone::Phone;
//! assert_eq!(Phone::parse("+52 (55) 1234-5678").unwrap().as_str(), "+525512345678");
//! ```

pub mod admin;
pub mod contacts;
pub mod phone;
pub mod tags;
pub mod time;
pub mod validate;
pub mod webhooks;

pub use validate::Validated;
