//! `/automations` — not typed yet: the wire types are being added to `wm-types`.
//!
//! Until then, [`crate::Client::get`] reaches the endpoints with the caller's own types.
//! To add them, follow `contacts.rs`: an `Automations<'c>` handle with `list()` (tab,
//! trigger, q, includeArchived; unpaginated, `{data, summary}`), `get(id)` and `logs(id)`
//! (page, pageSize, result; paginated, so a `.stream()` built on [`crate::pagination`]);
//! then make this module `pub` in `lib.rs`.
