//! sea-orm entities: storage rows, never sent on the wire (see wm-types for that).
//! Times are milliseconds since the Unix epoch, which sort and compare the same way on
//! SQLite and PostgreSQL.

pub mod api_key;
pub mod channel;
pub mod contact;
pub mod contact_tag;
pub mod deal;
pub mod identity;
pub mod lifecycle_stage;
pub mod note;
pub mod organization;
pub mod outbox_event;
pub mod timeline_entry;
pub mod user;
pub mod webhook;
pub mod webhook_attempt;
pub mod webhook_delivery;
