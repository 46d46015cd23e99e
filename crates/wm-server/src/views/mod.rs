//! Stored rows as the API shows them: one file per resource, named after the `wm_types`
//! module it produces, so a wire type has exactly one place that builds it.
//!
//! The rule (docs/ARCHITECTURE.md, "One home per kind of code"):
//! - a resource whose row holds all it shows converts with `From<entity::Model>` (or
//!   `From<&entity::Model>` where callers keep the row);
//! - a resource that shows related rows is built by `load(conn, rows, …)`, which fetches every
//!   relation of the whole batch in one query each (through [`crate::db::by_id`] or a grouped
//!   count) and never one query per row.
//!
//! Queries live in `crate::db`, use cases in `crate::services`; nothing here writes.

pub mod admin;
pub mod automations;
pub mod campaigns;
pub mod catalog;
pub mod contacts;
pub mod conversations;
pub mod imports;
pub mod lookups;
pub mod messages;
pub mod notes;
pub mod webhooks;
