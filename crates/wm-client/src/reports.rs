//! `/reports` — not typed yet: the wire types are being added to `wm-types`.
//!
//! Until then, [`crate::Client::get`] reaches the endpoints (`/reports/{commercial,
//! lifecycle,campaigns,wallet,team,conversations}?from&to`) with the caller's own types.
//! To add them, follow `lookups.rs`: a `Reports<'c>` handle with one method per report
//! taking a `from`/`to` builder; then make this module `pub` in `lib.rs`.
