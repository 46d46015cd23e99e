//! `AppState`: what every handler shares (cheap to clone), and [`health`], the heartbeats
//! and flags readiness reads.

pub mod health;

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use wm_core::provider::MessagingProvider;
use wm_core::time::Clock;
use wm_types::enums::ChannelType;

use crate::cache::LookupCache;
use crate::db::Db;
use crate::keys::KeyCache;
use crate::provider::{Pacer, Provider, Registry};
use crate::rate_limit::Limiter;

/// The objects of [`AppState::singleton`], by type.
#[derive(Default)]
struct Singletons(RwLock<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>);

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
    /// Messages one website chat visitor may send in any minute
    /// (`WM_WEBCHAT_MESSAGES_PER_MINUTE`).
    pub webchat_messages_per_minute: u32,
    /// Writes (new visitors, messages, files) one address may make to website chats in any
    /// minute (`WM_WEBCHAT_WRITES_PER_ADDRESS_PER_MINUTE`); many visitors share an office's
    /// address, so this is looser than the per-visitor limit.
    pub webchat_writes_per_address_per_minute: u32,
    /// The providers' settings (which one sends MESSAGING_APP_A, each platform's own).
    pub providers: crate::provider::Settings,
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
            webchat_messages_per_minute: 20,
            webchat_writes_per_address_per_minute: 120,
            providers: crate::provider::Settings::default(),
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
    /// The providers this process runs, by name and by channel.
    pub registry: Registry,
    /// Per-sender pacing.
    pub pacer: Pacer,
    /// Wakes the campaign worker when a send was accepted.
    pub campaign_wake: tokio::sync::Notify,
    /// Wakes the platform-webhook applier when a webhook was kept.
    pub intake_wake: tokio::sync::Notify,
    /// Wakes the media fetcher when a message with media was kept.
    pub media_wake: tokio::sync::Notify,
    /// Wakes the reply sender when a reply was queued.
    pub reply_wake: tokio::sync::Notify,
    /// Wakes the import worker when an upload was stored.
    pub imports_wake: tokio::sync::Notify,
    /// Encrypts platform access tokens at rest (`WM_SECRET_KEY`; none: tokens cannot be
    /// stored).
    pub secret_key: Option<crate::secrets::SecretKey>,
    /// Where inbound media is kept.
    pub media: crate::media::MediaStore,
    /// What modules keep for the life of the state (the writers that group commits), made
    /// on first use ([`AppState::singleton`]).
    singletons: Singletons,
    /// Worker heartbeats and the shutdown flag, read by the readiness probe.
    pub health: health::Health,
    /// Cancelled when the server begins to shut down: workers stop between messages and
    /// deliveries and hand their leases back, so another replica takes over at once.
    pub stop: tokio_util::sync::CancellationToken,
}

impl AppState {
    /// Builds the state with the providers its settings name.
    ///
    /// # Panics
    /// When the default messaging provider cannot be built (a bad Graph API URL): a
    /// configuration error, refused by `serve` before it gets here.
    pub fn new(db: Db, clock: Arc<dyn Clock>, settings: Settings) -> Self {
        let registry = crate::provider::registry(&settings.providers, &db, clock.clone())
            .unwrap_or_else(|e| panic!("the providers could not be built: {e}"));
        Self::with_registry(db, clock, settings, registry, None)
    }

    /// Builds the state with its settings' providers, MESSAGING_APP_A sending through
    /// `provider` (another client of its platform, a test's), and the key of platform
    /// tokens.
    pub fn build(
        db: Db,
        clock: Arc<dyn Clock>,
        settings: Settings,
        provider: Arc<dyn MessagingProvider>,
        secret_key: Option<crate::secrets::SecretKey>,
    ) -> Self {
        let mut registry = crate::provider::registry(&settings.providers, &db, clock.clone())
            .unwrap_or_else(|e| panic!("the providers could not be built: {e}"));
        registry.replace_sender(ChannelType::MessagingAppA, provider);
        Self::with_registry(db, clock, settings, registry, secret_key)
    }

    /// Builds the state with everything given: the providers, and the key of platform
    /// tokens.
    pub fn with_registry(
        db: Db,
        clock: Arc<dyn Clock>,
        settings: Settings,
        registry: Registry,
        secret_key: Option<crate::secrets::SecretKey>,
    ) -> Self {
        let media = crate::media::MediaStore::open(&settings.media).unwrap_or_else(|e| {
            tracing::error!(error = %format!("{e:#}"), "the media store cannot be opened; media is kept in memory");
            crate::media::MediaStore::in_memory()
        });
        let limiter = Limiter::for_db(&db, settings.rate_limit_per_minute);
        let pacer = Pacer::new(db.clone(), settings.provider_mps);
        AppState(Arc::new(Inner {
            pacer,
            limiter,
            secret_key,
            registry,
            media,
            db,
            clock,
            campaign_wake: tokio::sync::Notify::new(),
            intake_wake: tokio::sync::Notify::new(),
            imports_wake: tokio::sync::Notify::new(),
            media_wake: tokio::sync::Notify::new(),
            reply_wake: tokio::sync::Notify::new(),
            settings,
            keys: KeyCache::default(),
            lookups: LookupCache::default(),
            health: Default::default(),
            stop: Default::default(),
            singletons: Singletons::default(),
        }))
    }

    /// The provider a channel type sends through by default.
    pub fn provider_for(&self, channel: ChannelType) -> Option<Arc<Provider>> {
        self.registry.for_channel(channel).cloned()
    }

    /// The object of type `T` this state keeps, made with `make` the first time it is
    /// asked for: a module's long-lived helper (a writer that groups commits) without the
    /// state knowing the module.
    pub fn singleton<T: Any + Send + Sync>(&self, make: impl FnOnce(&AppState) -> T) -> Arc<T> {
        let id = TypeId::of::<T>();
        let found = self
            .singletons
            .0
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(&id)
            .cloned();
        if let Some(Ok(t)) = found.map(|a| a.downcast::<T>()) {
            return t;
        }
        let made = Arc::new(make(self));
        let mut all = self
            .singletons
            .0
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let kept = all.entry(id).or_insert_with(|| made.clone()).clone();
        kept.downcast::<T>().unwrap_or(made)
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
