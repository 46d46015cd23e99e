//! Outbound messages, sent one way whatever asks for them (a campaign's chunk, a reply, an
//! automation's step, a bot): the asker builds the message; the rest is written once here.
//!
//! ```text
//! campaign chunk ─┐                     ┌─ recipients::Attempt (campaign_recipients)
//! reply worker ───┼─▶ send::send ───────┤
//! automation step ┘   pace → claim →    └─ messages::Attempt (messages)
//!                     provider (sender.rs: the account's provider and platform account)
//!                     → call → settle
//! platform statuses ─▶ status (one at a time) │ grouped (a burst) ─▶ the same stores,
//!                      forward only, refunds on failure, `message.sent` announced
//! worker pass ───────▶ reconcile: attempts whose outcome stayed unknown fail, refunded
//! ```
//!
//! At most once, reconciled: an attempt is committed before its call and never made again;
//! an answer that may have been sent waits for a status carrying its correlation id, or the
//! reconciliation window.

pub mod failed;
pub mod grouped;
pub mod messages;
pub mod recipients;
pub mod reconcile;
pub mod send;
pub mod sender;
pub mod status;
