//! The send pipeline, one stage a file, one entry per concern (the map is
//! `docs/ARCHITECTURE.md`):
//!
//! ```text
//! request / worker ─▶ charging::charge ─▶ (small) priced, charged, queued in one transaction
//!                         │                (large) reserved; queueing::queue_step queues it
//!                         ▼
//!                    pricing (rate card, allowance, cost, who may be messaged)
//! worker::dispatch ─▶ attempts (claim before the call, record after, reconcile)
//! platform webhooks ─▶ receipts (statuses forward only, refunds, replies)
//!                    lifecycle (transitions, completion)
//! ```
//!
//! A batch is charged and its recipients marked queued with a conditional balance update,
//! before the platform is called; a message is claimed before its call and never sent
//! twice; statuses only move a recipient forward, and a receipt is never dropped.

/// The channel campaigns are sent on: the contract's MESSAGING_APP_A templates only.
pub const CAMPAIGNS: crate::services::contacts::platform::On =
    crate::services::contacts::platform::On {
        kind: wm_types::enums::ChannelType::MessagingAppA,
        by_phone: true,
        channel: None,
    };

pub mod charging;
pub mod lifecycle;
pub mod pricing;
pub mod queueing;
pub mod replied;

pub use charging::{
    Charge, batch_limit, charge_batch, is_open, next_batch_at, paid_batch_waiting, prepare,
};
pub use lifecycle::{
    Batch, Outcome, apply, charge_and_transition, complete_if_done, has_pending, transition_update,
};
pub use pricing::{
    BatchCost, NextBatch, Priced, READ_STEP, UNPRICEABLE, allowance_used, card_of, category, cost,
    ineligible_contacts, month_of, next_batch, price_all, price_batch, price_next_batch, rate_card,
};
pub use queueing::{UNPAID, queue_step};
pub use replied::mark_replied;
