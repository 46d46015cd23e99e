//! `AppState`: what every handler shares (cheap to clone).

use std::sync::Arc;

use wm_core::time::Clock;

use crate::auth::KeyCache;
use crate::cache::LookupCache;
use crate::db::Db;
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
}

impl Settings {
    /// The defaults of DESIGN §3 with the given operator token.
    pub fn new(admin_token: impl Into<String>) -> Settings {
        Settings {
            admin_token: admin_token.into(),
            rate_limit_per_minute: 600,
            webhook_retry_schedule: wm_core::webhooks::DEFAULT_SCHEDULE.to_vec(),
            allow_insecure_webhooks: false,
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
}

impl AppState {
    /// Builds the state.
    pub fn new(db: Db, clock: Arc<dyn Clock>, settings: Settings) -> Self {
        AppState(Arc::new(Inner {
            db,
            clock,
            limiter: RateLimiter::new(settings.rate_limit_per_minute),
            settings,
            keys: KeyCache::default(),
            lookups: LookupCache::default(),
        }))
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
