//! Messaging providers: the simulated one (default), WhatsApp's Cloud API, and the pacing
//! every sender number is subject to.

pub mod simulated;
pub mod whatsapp;

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};

use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use uuid::Uuid;

/// Messages per second per sender number, as the platform allows: the server's default
/// (`WM_PROVIDER_MPS`) or the number's own (`mps`, for numbers the platform upgraded).
#[derive(Clone)]
pub struct Pacer {
    default_mps: u32,
    limiters: Arc<Mutex<Limiters>>,
}

/// One limiter per (sender, pace): a number whose pace changes gets a fresh one.
type Limiters = HashMap<(Uuid, u32), Arc<DefaultDirectRateLimiter>>;

impl Pacer {
    /// `mps` messages per second per sender by default (0 turns pacing off, for benchmarks).
    pub fn new(mps: u32) -> Pacer {
        Pacer {
            default_mps: mps,
            limiters: Arc::default(),
        }
    }

    /// Waits for the sender's next slot; `own_mps` is the number's own pace, if it has one.
    pub async fn wait(&self, sender: Uuid, own_mps: Option<u32>) {
        let mps = own_mps.unwrap_or(self.default_mps);
        let Some(n) = NonZeroU32::new(mps) else {
            return;
        };
        let limiter = {
            let mut map = self.limiters.lock().unwrap_or_else(|p| p.into_inner());
            map.entry((sender, mps))
                // No burst: evenly spaced, so no second ever holds more than the pace.
                .or_insert_with(|| {
                    Arc::new(RateLimiter::direct(
                        Quota::per_second(n).allow_burst(NonZeroU32::MIN),
                    ))
                })
                .clone()
        };
        limiter.until_ready().await;
    }
}
