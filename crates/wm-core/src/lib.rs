//! The storage-free domain engine of wm.
//!
//! Decisions live here as pure functions over wm-types; the server only does I/O around them.
//!
//! - [`validate`]: declarative schemas that answer in class-validator's words.
//! - [`phone`]: the [`phone::Phone`] newtype (normalised international numbers).
//! - [`address`]: where a message goes: a phone, or the platform's id of the person.
//! - [`tags`]: tag normalisation and merging.
//! - [`contacts`]: contact request schemas and the create/update rules.
//! - [`imports`]: contact import options, CSV column mapping and what an import row does.
//! - [`admin`]: schemas of the operator API bodies.
//! - [`automations`]: automation definitions, their wording, and ([`automations::run`]) how a
//!   run executes: each step's plan, what its outcome logs, how the run ends.
//! - [`campaigns`]: campaign request schemas, audiences, send plans and the state machine.
//! - [`messaging`]: who may be messaged (opt-out, consent, phone), one rule for every path.
//! - [`templates`]: template variable positions, their sources and rendering.
//! - [`pricing`]: the shipped rate card, markets of phone numbers, the UTILITY allowance.
//! - [`webhooks`]: webhook schemas, URL checks, retry schedule.
//! - [`provider`]: the `MessagingProvider` trait the sending pipeline calls.
//! - [`time`]: the injectable [`time::Clock`] and ISO 8601 parsing.
//! - [`whatsapp`]: what WhatsApp's error codes, template and quality events mean.
//! - [`wa_id`]: the forms one WhatsApp number takes (Mexico `521`, Brazil's ninth digit…).
//!
//! ```
//! use wm_core::phone::Phone;
//! assert_eq!(Phone::parse("+52 (55) 1234-5678").unwrap().as_str(), "+525512345678");
//! ```

pub mod address;
pub mod admin;
pub mod automations;
pub mod campaigns;
pub mod contacts;
pub mod conversations;
pub mod imports;
pub mod messaging;
pub mod phone;
pub mod platform;
pub mod pricing;
pub mod provider;
pub mod reports;
pub mod tags;
pub mod templates;
pub mod time;
pub mod validate;
pub mod wa_id;
pub mod webhooks;
pub mod whatsapp;

pub use validate::Validated;
