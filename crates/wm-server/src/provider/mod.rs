//! Messaging providers: the simulated one (default) and the pacing every sender number
//! is subject to.

pub mod simulated;

use std::num::NonZeroU32;
use std::sync::Arc;

use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use uuid::Uuid;

/// Messages per second per sender number, as the platform allows; `None` = unpaced.
#[derive(Clone)]
pub struct Pacer(Option<Arc<DefaultKeyedRateLimiter<Uuid>>>);

impl Pacer {
    /// `mps` messages per second per sender (0 turns pacing off, for benchmarks).
    pub fn new(mps: u32) -> Pacer {
        Pacer(NonZeroU32::new(mps).map(|n| Arc::new(RateLimiter::keyed(Quota::per_second(n)))))
    }

    /// Waits for the sender's next slot.
    pub async fn wait(&self, sender: Uuid) {
        if let Some(l) = &self.0 {
            l.until_key_ready(&sender).await;
        }
    }
}
