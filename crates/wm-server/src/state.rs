//! `AppState`: what every handler shares (cheap to clone).

use std::sync::Arc;

use wm_core::provider::MessagingProvider;
use wm_core::time::Clock;

use crate::auth::KeyCache;
use crate::cache::LookupCache;
use crate::db::Db;
use crate::provider::{Pacer, simulated::SimulatedProvider};
use crate::rate_limit::RateLimiter;

/// Settings the running server needs.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Bearer token of the operator API.
    pub admin_token: String,
    /// Requests per key in any 60 s.
    pub rate_limit_per_minute: u32,
    /// Delays of the webhook retries after the first attempt.
    pub webhook_retry_schedule: Vec<std::time::Duration>,
    /// Allow http:// and private/loopback webhook targets (development and tests).
    pub allow_insecure_webhooks: bool,
    /// Messages per second per sender number (0 = unpaced).
    pub provider_mps: u32,
}

impl Settings {
    /// The defaults of DESIGN §3 with the given operator token.
    pub fn new(admin_token: impl Into<String>) -> Settings {
        Settings {
            admin_token: admin_token.into(),
            rate_limit_per_minute: 600,
            webhook_retry_schedule: wm_core::webhooks::DEFAULT_SCHEDULE.to_vec(),
            allow_insecure_webhooks: false,
            provider_mps: 80,
        }
    }
}

/// Shared state; `Arc` inside so clones are free.
#[derive(Clone)]
pub struct AppState(Arc<Inner>);

/// The contents of [`AppState`].
pub struct Inner {
    /// The database.
    pub db: Db,
    /// The clock (injected so tests control time).
    pub clock: Arc<dyn Clock>,
    /// Settings.
    pub settings: Settings,
    /// Per-key sliding-window limiter.
    pub limiter: RateLimiter,
    /// Recently authenticated keys.
    pub keys: KeyCache,
    /// Each organisation's stages, users and channels.
    pub lookups: LookupCache,
    /// The messaging platform.
    pub provider: Arc<dyn MessagingProvider>,
    /// Per-sender pacing.
    pub pacer: Pacer,
    /// Wakes the campaign worker when a send was accepted.
    pub campaign_wake: tokio::sync::Notify,
    /// Worker heartbeats and the shutdown flag, read by the readiness probe.
    pub health: crate::observe::health::Health,
}

impl AppState {
    /// Builds the state with the simulated messaging platform.
    pub fn new(db: Db, clock: Arc<dyn Clock>, settings: Settings) -> Self {
        let provider = Arc::new(SimulatedProvider::new(db.clone()));
        Self::with_provider(db, clock, settings, provider)
    }

    /// Builds the state with a given messaging platform.
    pub fn with_provider(
        db: Db,
        clock: Arc<dyn Clock>,
        settings: Settings,
        provider: Arc<dyn MessagingProvider>,
    ) -> Self {
        AppState(Arc::new(Inner {
            db,
            clock,
            provider,
            pacer: Pacer::new(settings.provider_mps),
            campaign_wake: tokio::sync::Notify::new(),
            limiter: RateLimiter::new(settings.rate_limit_per_minute),
            settings,
            keys: KeyCache::default(),
            lookups: LookupCache::default(),
            health: Default::default(),
        }))
    }

    /// Tells the campaign worker there is work now.
    pub fn wake_campaigns(&self) {
        self.0.campaign_wake.notify_one();
    }

    /// Now, in storage form (ms since epoch).
    pub fn now_ms(&self) -> i64 {
        self.0.clock.now().timestamp_millis()
    }
}

impl std::ops::Deref for AppState {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.0
    }
}
