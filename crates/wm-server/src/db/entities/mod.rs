//! sea-orm entities: storage rows, never sent on the wire (see wm-types for that).
//! Times are milliseconds since the Unix epoch, which sort and compare the same way on
//! SQLite and PostgreSQL.

pub mod allowance_usage;
pub mod api_key;
pub mod automation;
pub mod automation_run;
pub mod campaign;
pub mod channel;
pub mod console_session;
pub mod contact;
pub mod contact_count;
pub mod contact_import;
pub mod contact_import_chunk;
pub mod contact_tag;
pub mod conversation;
pub mod deal;
pub mod idempotency_key;
pub mod identity;
pub mod ledger_entry;
pub mod lifecycle_stage;
pub mod media;
pub mod message;
pub mod note;
pub mod organization;
pub mod outbox_event;
pub mod pending_status;
pub mod phone_number;
pub mod platform_event;
pub mod platform_inbound_seen;
pub mod platform_unapplied;
pub mod recipient;
pub mod simulated_send;
pub mod template;
pub mod timeline_entry;
pub mod user;
pub mod wallet;
pub mod webhook;
pub mod webhook_attempt;
pub mod webhook_delivery;
