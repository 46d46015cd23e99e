//! `/conversations` — not typed yet: the wire types are being added to `wm-types`.
//!
//! Until then, [`crate::Client::get`] reaches the endpoints with the caller's own types.
//! To add them, follow `contacts.rs`: an `impl Client { pub fn conversations(&self) }`
//! accessor returning a `Conversations<'c>` handle, a `ListConversations` builder over
//! `wm_types`' query struct (filter, status, channelId, channelType, contactId,
//! assignedToUserId, q, page, pageSize) with `.send()` and a `.stream()` built on
//! [`crate::pagination`], and `get(id)`; then make this module `pub` in `lib.rs`.
