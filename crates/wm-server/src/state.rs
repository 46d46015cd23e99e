//! `AppState`: what every handler shares (cheap to clone), and [`health`], the heartbeats
//! and flags readiness reads.

pub mod health;

use std::sync::Arc;

use wm_core::provider::MessagingProvider;
use wm_core::time::Clock;

use crate::cache::LookupCache;
use crate::db::Db;
use crate::keys::KeyCache;
use crate::provider::{Pacer, simulated::SimulatedProvider};
use crate::rate_limit::Limiter;

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
    /// Timeouts and caps of the HTTP listener ([`crate::run`]).
    pub limits: crate::listener::Limits,
    /// How long an attempt whose outcome is unknown waits for a status.
    pub reconcile_after: std::time::Duration,
    /// A crash-test aid (`WM_TEST_HOLD_KEYED_ANSWERS`): how long a request with an
    /// `Idempotency-Key` waits between its handler's end and its answer.
    pub hold_keyed_answers: Option<std::time::Duration>,
    /// WhatsApp Cloud API settings.
    pub whatsapp: WhatsAppSettings,
    /// Where inbound media is kept (`WM_MEDIA_*`).
    pub media: crate::media::MediaSettings,
    /// Recipients per step of a campaign batch too large for one transaction: read per
    /// step when priced, queued per step after the charge (`services::sending::queueing`).
    pub charge_step: u64,
    /// Contacts read, and recipients written, per step of `POST /campaigns/{id}/recipients`:
    /// each step is one short write transaction, so a million contacts neither sit in
    /// memory nor hold the writer.
    pub audience_step: u64,
    /// Steps of an audience written at once on PostgreSQL, each in its own transaction and
    /// backend (SQLite has one writer, so one).
    pub audience_writes: usize,
}

/// WhatsApp Cloud API settings (`WM_WHATSAPP_*`).
#[derive(Clone)]
pub struct WhatsAppSettings {
    /// Graph API base URL.
    pub graph_url: String,
    /// Graph API version (`v24.0`).
    pub api_version: String,
    /// The app secret that signs platform webhooks (none: the intake refuses them).
    pub app_secret: Option<String>,
    /// The verification handshake's token (none: the handshake is refused).
    pub verify_token: Option<String>,
}

impl std::fmt::Debug for WhatsAppSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WhatsAppSettings")
            .field("graph_url", &self.graph_url)
            .field("api_version", &self.api_version)
            .field("app_secret", &self.app_secret.as_ref().map(|_| "<set>"))
            .field("verify_token", &self.verify_token.as_ref().map(|_| "<set>"))
            .finish()
    }
}

impl Default for WhatsAppSettings {
    fn default() -> Self {
        WhatsAppSettings {
            graph_url: "https://graph.facebook.com".into(),
            api_version: "v24.0".into(),
            app_secret: None,
            verify_token: None,
        }
    }
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
            limits: crate::listener::Limits::default(),
            reconcile_after: std::time::Duration::from_secs(15 * 60),
            hold_keyed_answers: None,
            whatsapp: WhatsAppSettings::default(),
            media: crate::media::MediaSettings::default(),
            charge_step: 2_000,
            audience_step: 5_000,
            audience_writes: 2,
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
    /// Per-key sliding-window limiter (shared through the database on PostgreSQL).
    pub limiter: Limiter,
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
    /// Wakes the platform-webhook applier when a webhook was kept.
    pub intake_wake: tokio::sync::Notify,
    /// The platform intake's group commit: webhook bodies kept many per transaction.
    pub intake_commit: crate::services::platform::GroupCommit,
    /// The group commits of `Idempotency-Key`s (taken, then answered).
    pub idempotency: crate::idempotency::Groups,
    /// Wakes the media fetcher when a message with media was kept.
    pub media_wake: tokio::sync::Notify,
    /// Wakes the reply sender when a reply was queued.
    pub reply_wake: tokio::sync::Notify,
    /// Wakes the import worker when an upload was stored.
    pub imports_wake: tokio::sync::Notify,
    /// Encrypts platform access tokens at rest (`WM_SECRET_KEY`; none: tokens cannot be
    /// stored).
    pub secret_key: Option<crate::secrets::SecretKey>,
    /// The receiving side of the platforms wm talks to: webhook intakes, media sources and
    /// the template catalog ([`crate::provider::platforms`]).
    pub platforms: crate::provider::Platforms,
    /// Where inbound media is kept.
    pub media: crate::media::MediaStore,
    /// The writer of `POST /contacts` (grouped commits on SQLite).
    pub creates: crate::services::contacts::batch::Creates,
    /// Worker heartbeats and the shutdown flag, read by the readiness probe.
    pub health: health::Health,
    /// Cancelled when the server begins to shut down: workers stop between messages and
    /// deliveries and hand their leases back, so another replica takes over at once.
    pub stop: tokio_util::sync::CancellationToken,
}

impl AppState {
    /// Builds the state with the simulated messaging platform.
    pub fn new(db: Db, clock: Arc<dyn Clock>, settings: Settings) -> Self {
        let provider = Arc::new(SimulatedProvider::new(db.clone(), clock.clone()));
        Self::with_provider(db, clock, settings, provider)
    }

    /// Builds the state with a given messaging platform.
    pub fn with_provider(
        db: Db,
        clock: Arc<dyn Clock>,
        settings: Settings,
        provider: Arc<dyn MessagingProvider>,
    ) -> Self {
        Self::build(db, clock, settings, provider, None)
    }

    /// Builds the state with everything: the platform, and the key for platform tokens.
    pub fn build(
        db: Db,
        clock: Arc<dyn Clock>,
        settings: Settings,
        provider: Arc<dyn MessagingProvider>,
        secret_key: Option<crate::secrets::SecretKey>,
    ) -> Self {
        let platforms = crate::provider::platforms(&settings);
        let media = crate::media::MediaStore::open(&settings.media).unwrap_or_else(|e| {
            tracing::error!(error = %format!("{e:#}"), "the media store cannot be opened; media is kept in memory");
            crate::media::MediaStore::in_memory()
        });
        let limiter = Limiter::for_db(&db, settings.rate_limit_per_minute);
        let pacer = Pacer::new(db.clone(), settings.provider_mps);
        let creates = crate::services::contacts::batch::Creates::new(db.clone(), clock.clone());
        AppState(Arc::new(Inner {
            creates,
            pacer,
            limiter,
            secret_key,
            platforms,
            media,
            db,
            clock,
            provider,
            campaign_wake: tokio::sync::Notify::new(),
            intake_wake: tokio::sync::Notify::new(),
            intake_commit: Default::default(),
            idempotency: Default::default(),
            imports_wake: tokio::sync::Notify::new(),
            media_wake: tokio::sync::Notify::new(),
            reply_wake: tokio::sync::Notify::new(),
            settings,
            keys: KeyCache::default(),
            lookups: LookupCache::default(),
            health: Default::default(),
            stop: Default::default(),
        }))
    }

    /// Where media of the platform named `name` is fetched from.
    pub fn media_source(&self, name: &str) -> Option<Arc<dyn wm_core::platform::MediaSource>> {
        self.platforms
            .media_sources
            .iter()
            .find(|m| m.name() == name)
            .cloned()
    }

    /// The intake of the platform named `name`, if wm takes its webhooks.
    pub fn intake(&self, name: &str) -> Option<Arc<dyn wm_core::platform::PlatformIntake>> {
        self.platforms
            .intakes
            .iter()
            .find(|i| i.name() == name)
            .cloned()
    }

    /// Tells the campaign worker there is work now.
    pub fn wake_campaigns(&self) {
        self.0.campaign_wake.notify_one();
    }

    /// Whether the server is shutting down (workers start no new message or delivery).
    pub fn stopping(&self) -> bool {
        self.0.stop.is_cancelled()
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
