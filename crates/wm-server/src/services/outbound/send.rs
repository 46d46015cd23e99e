//! One message's platform call, at most once, whatever asked for it (a campaign, a reply,
//! an automation, a bot): paced by its account, claimed before the call (the attempt is
//! committed first, so nothing ever calls twice), called through its provider, and settled
//! right after by the store that holds the attempt ([`Store`]: a campaign recipient, a
//! message). An answer that may have been sent is never retried: a status or the
//! reconciliation settles it ([`super::reconcile`]).

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};

use sea_orm::{DatabaseTransaction, DbErr};
use wm_core::provider::{Accepted, OutboundMessage, SendError};

use super::sender::Sender;
use crate::observe::metrics::{self, Source};
use crate::state::AppState;

/// What became of one message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Settled {
    /// The platform took it.
    Sent,
    /// Refused for good: failed, and refunded when it had cost something.
    Rejected {
        /// Whether money went back to the wallet.
        refunded: bool,
    },
    /// Not sent; back in the queue until this time (ms).
    Retry(i64),
    /// Not sent; no message of this account goes through until someone acts.
    Paused {
        /// The campaign's `stopReason`.
        stop_reason: String,
        /// What the platform said.
        reason: String,
    },
    /// Maybe sent: left for a status or the reconciliation.
    Ambiguous,
    /// Not called: another worker has it, it moved on, or the call was stopped before it
    /// began (shutdown, the account paused meanwhile).
    NotCalled,
}

/// Where an attempt is kept: the claim before the call and the record of its answer, each
/// in the transaction given.
pub trait Store: Sync {
    /// Where its messages come from (for the metrics).
    fn source(&self) -> Source;

    /// Records the attempt before the call; `false` when it may not be made (taken by
    /// another worker, or no longer due).
    fn claim(
        &self,
        txn: &DatabaseTransaction,
        now: i64,
    ) -> impl Future<Output = Result<bool, DbErr>> + Send;

    /// Records the platform's answer to `sent`, sent from `sender`.
    fn settle(
        &self,
        txn: &DatabaseTransaction,
        answer: Result<Accepted, SendError>,
        sent: &OutboundMessage,
        sender: &Sender,
        now: i64,
    ) -> impl Future<Output = Result<Settled, DbErr>> + Send;
}

/// Paces, claims, builds (`build`: the message, once claimed; its error is the answer, with
/// no call), calls and settles one message. A call is not begun once `halt` is raised
/// (another message of the same run was told to stop), and an answer that stops the account
/// raises it.
pub async fn send<S: Store>(
    state: &AppState,
    store: &S,
    sender: &Sender,
    halt: &AtomicBool,
    build: impl Future<Output = Result<OutboundMessage, SendError>>,
) -> anyhow::Result<Settled> {
    if halt.load(Ordering::SeqCst) {
        return Ok(Settled::NotCalled);
    }
    state.pacer.wait(sender.id, sender.own_mps).await?;
    if state.stopping() || halt.load(Ordering::SeqCst) {
        // Not claimed: whoever takes the work over (or the next pass) sends it.
        return Ok(Settled::NotCalled);
    }
    {
        let txn = state.db.write().await?;
        let claimed = store.claim(&txn, state.now_ms()).await?;
        txn.commit().await?;
        if !claimed {
            return Ok(Settled::NotCalled);
        }
    }
    let (answer, message) = match build.await {
        Ok(m) => (sender.provider.sender.send(&m).await, Some(m)),
        Err(e) => (Err(e), None),
    };
    if matches!(
        answer,
        Err(SendError::RetryLater(_) | SendError::Paused { .. })
    ) {
        halt.store(true, Ordering::SeqCst);
    }
    let message = message.unwrap_or_else(|| unsent(sender));
    let txn = state.db.write().await?;
    let settled = store
        .settle(&txn, answer, &message, sender, state.now_ms())
        .await?;
    txn.commit().await?;
    count(sender.name(), store.source(), &settled);
    Ok(settled)
}

/// The stand-in for a message that was never built (its build failed): only its sender is
/// read when such an answer is recorded.
fn unsent(sender: &Sender) -> OutboundMessage {
    OutboundMessage {
        correlation_id: String::new(),
        from: sender.from.clone(),
        account: None,
        to: wm_core::address::Address::UserId(String::new()),
        content: wm_core::provider::OutboundContent::Text,
        reply_to: None,
        body: String::new(),
        human_agent: false,
    }
}

/// One message's outcome in the metrics.
fn count(provider: &'static str, source: Source, settled: &Settled) {
    match settled {
        Settled::Sent => metrics::messages_sent(provider, source, 1),
        Settled::Rejected { refunded } => {
            metrics::messages_failed(provider, source, "rejected", 1);
            metrics::messages_refunded(provider, source, usize::from(*refunded));
        }
        Settled::Retry(_) => metrics::messages_failed(provider, source, "unavailable", 1),
        Settled::Paused { .. } => metrics::messages_failed(provider, source, "paused", 1),
        Settled::Ambiguous => metrics::messages_failed(provider, source, "ambiguous", 1),
        Settled::NotCalled => {}
    }
}

/// The backoff before the `n`th retry asked by the platform: 2 s doubling, at most 5 min.
pub fn backoff_ms(n: i32) -> i64 {
    Ord::min(2_000i64.saturating_mul(1i64 << n.clamp(0, 20)), 300_000)
}
