//! Shared state behind the fake and the knob/read API of [`FakeGraph`].
//!
//! One `std::sync::Mutex` guards the registry and logs; it is only ever held
//! for short, synchronous sections (never across an `.await`), which keeps the
//! send path fast. Counters are atomics so reading them never contends.

use std::collections::{HashMap, HashSet, VecDeque};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use tokio::sync::{Semaphore, watch};
use tokio::task::JoinHandle;

use chrono::{DateTime, Utc};

use crate::model::{
    AcceptedMessage, Ambiguity, AmbiguityKind, Attempt, Injection, NumberSpec, Posted, ReadMark,
    Stats, TemplateInfo, TemplateSpec, TemplateStatus, WebhookConfig,
};
use crate::templates::count_placeholders;

/// A registered business number plus its throttling knobs.
#[derive(Debug)]
pub(crate) struct Number {
    pub spec: NumberSpec,
    /// Next N sends answer this throttling code (130429, 4 or 80007).
    pub burst: Option<(u32, i64)>,
    /// Accepted sends per second beyond which sends get 130429.
    pub mps_cap: Option<u32>,
    /// Acceptance instants within the last second (only kept with a cap).
    pub recent: VecDeque<Instant>,
}

/// A WABA: its tokens and its templates in creation order.
#[derive(Debug, Default)]
pub(crate) struct Waba {
    pub tokens: HashSet<String>,
    pub templates: Vec<TemplateInfo>,
}

/// Everything behind the lock.
#[derive(Debug, Default)]
pub(crate) struct Inner {
    pub numbers: HashMap<String, Number>,
    /// People whose WhatsApp id is another spelling of the number they are sent to (digits
    /// of the number → their `wa_id`), as Mexican and Brazilian accounts registered before
    /// a numbering change are.
    pub wa_ids: HashMap<String, String>,
    pub wabas: HashMap<String, Waba>,
    /// WhatsApp users: phone, BSUID, parent BSUID, username (see [`crate::users`]).
    pub users: crate::users::Registry,
    /// Every known token and whether it is expired.
    pub tokens: HashMap<String, bool>,
    /// Error injections by user key ([`crate::users::key`]) or `"*"`.
    pub injections: HashMap<String, VecDeque<Injection>>,
    /// Ambiguous outcomes by user key ([`crate::users::key`]) or `"*"`.
    pub ambiguities: HashMap<String, VecDeque<Ambiguity>>,
    pub accepted: Vec<AcceptedMessage>,
    pub accepted_by_to: HashMap<String, usize>,
    pub attempts: Vec<Attempt>,
    pub webhook: Option<WebhookConfig>,
    pub webhook_log: VecDeque<Posted>,
    pub next_template_id: u64,
    /// Inbound messages posted by [`FakeGraph::post_inbound`], by wamid.
    pub inbound: HashMap<String, InboundRecord>,
    /// Time of each user's last inbound message, by (business number, user key
    /// ([`crate::users::key`])).
    pub last_inbound: HashMap<(String, String), DateTime<Utc>>,
    /// Accepted mark-as-read requests, in arrival order.
    pub reads: Vec<ReadMark>,
}

/// An inbound message the fake posted: mark-as-read must name one sent to that number.
#[derive(Debug, Clone)]
pub(crate) struct InboundRecord {
    pub phone_number_id: String,
}

/// Atomic counters.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub attempts: AtomicU64,
    pub accepted: AtomicU64,
    pub refused: AtomicU64,
    pub webhooks: AtomicU64,
    pub webhook_posts: AtomicU64,
    pub webhook_acked: AtomicU64,
    pub webhook_failed: AtomicU64,
    pub in_flight: AtomicU64,
}

/// The state shared by the server, the background tasks and every handle.
#[derive(Debug)]
pub(crate) struct Shared {
    pub inner: Mutex<Inner>,
    pub counters: Counters,
    pub started: Instant,
    pub http: reqwest::Client,
    pub base_url: OnceLock<String>,
    pub addr: OnceLock<SocketAddr>,
    pub shutdown: watch::Sender<bool>,
    pub server: Mutex<Option<JoinHandle<()>>>,
    pub deliveries: Semaphore,
    pub webhook_log_cap: usize,
    pub batcher: OnceLock<tokio::sync::mpsc::UnboundedSender<crate::webhooks::BatchItem>>,
    /// Held media, download URLs and media knobs (their own lock; see [`crate::media`]).
    pub media: Mutex<crate::media::MediaStore>,
    /// Messenger / Instagram state (its own lock; see [`crate::messenger`]).
    pub messenger: Mutex<crate::messenger::Store>,
}

impl Shared {
    pub(crate) fn new(
        http: reqwest::Client,
        webhook: Option<WebhookConfig>,
        log_cap: usize,
    ) -> Self {
        let (shutdown, _) = watch::channel(false);
        let inner = Inner {
            webhook,
            next_template_id: 1_000_000_000_000_001,
            ..Inner::default()
        };
        Self {
            inner: Mutex::new(inner),
            counters: Counters::default(),
            started: Instant::now(),
            http,
            base_url: OnceLock::new(),
            addr: OnceLock::new(),
            shutdown,
            server: Mutex::new(None),
            deliveries: Semaphore::new(256),
            webhook_log_cap: log_cap,
            batcher: OnceLock::new(),
            media: Mutex::new(crate::media::MediaStore::default()),
            messenger: Mutex::new(crate::messenger::Store::default()),
        }
    }

    /// Locks the registry; a poisoned lock is recovered (the data stays usable).
    pub(crate) fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Locks the media store (never while holding [`Shared::lock`]'s guard).
    pub(crate) fn media(&self) -> MutexGuard<'_, crate::media::MediaStore> {
        self.media.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn base_url(&self) -> String {
        self.base_url.get().cloned().unwrap_or_default()
    }

    /// Resolves when the fake is shutting down.
    pub(crate) async fn shutting_down(&self) {
        let mut rx = self.shutdown.subscribe();
        while !*rx.borrow_and_update() {
            if rx.changed().await.is_err() {
                return;
            }
        }
    }
}

/// The key injections and ambiguities are stored under: `"*"`, else the user's key.
fn recipient_key(inner: &mut Inner, to: &str) -> String {
    if to == "*" {
        to.to_owned()
    } else {
        crate::users::key(inner, to)
    }
}

/// A running fake Graph API. Cheap to clone; every clone drives the same server.
#[derive(Debug, Clone)]
pub struct FakeGraph {
    pub(crate) shared: Arc<Shared>,
}

impl FakeGraph {
    /// Registers (or replaces) a business number; its token also grants access
    /// to its WABA's `message_templates`.
    pub fn register_number(&self, spec: NumberSpec) {
        let mut inner = self.shared.lock();
        inner
            .tokens
            .entry(spec.access_token.clone())
            .or_insert(false);
        let waba = inner.wabas.entry(spec.waba_id.clone()).or_default();
        waba.tokens.insert(spec.access_token.clone());
        let number = Number {
            spec: spec.clone(),
            burst: None,
            mps_cap: None,
            recent: VecDeque::new(),
        };
        inner.numbers.insert(spec.phone_number_id, number);
    }

    /// Registers a person whose WhatsApp id differs from the digits of their number (an
    /// account from before Mexico dropped the mobile `1`, or before Brazil's ninth digit):
    /// sends to `number` answer with this `wa_id`, and its statuses carry it as
    /// `recipient_id`, as the platform does.
    pub fn register_wa_id(&self, number: &str, wa_id: &str) {
        self.shared
            .lock()
            .wa_ids
            .insert(crate::validate::wa_id(number), wa_id.to_owned());
    }

    /// Registers a WABA token without a number (for template listing tests).
    pub fn register_waba(&self, waba_id: &str, access_token: &str) {
        let mut inner = self.shared.lock();
        inner.tokens.entry(access_token.to_owned()).or_insert(false);
        let waba = inner.wabas.entry(waba_id.to_owned()).or_default();
        waba.tokens.insert(access_token.to_owned());
    }

    /// Registers a template (or updates the one with the same name+language,
    /// keeping its id). Returns what is stored.
    pub fn register_template(&self, spec: TemplateSpec) -> TemplateInfo {
        let mut inner = self.shared.lock();
        let param_count = count_placeholders(&spec.body_text);
        let next_id = inner.next_template_id;
        let waba = inner.wabas.entry(spec.waba_id.clone()).or_default();
        if let Some(t) = waba
            .templates
            .iter_mut()
            .find(|t| t.spec.name == spec.name && t.spec.language == spec.language)
        {
            t.spec = spec;
            t.param_count = param_count;
            return t.clone();
        }
        let info = TemplateInfo {
            id: next_id.to_string(),
            spec,
            param_count,
        };
        waba.templates.push(info.clone());
        inner.next_template_id += 1;
        info
    }

    /// Changes a template's status; returns false if it is not registered.
    pub fn set_template_status(
        &self,
        waba_id: &str,
        name: &str,
        language: &str,
        status: TemplateStatus,
    ) -> bool {
        let mut inner = self.shared.lock();
        let Some(waba) = inner.wabas.get_mut(waba_id) else {
            return false;
        };
        match waba
            .templates
            .iter_mut()
            .find(|t| t.spec.name == name && t.spec.language == language)
        {
            Some(t) => {
                t.spec.status = status;
                true
            }
            None => false,
        }
    }

    /// Deletes a template, as the business can in WhatsApp Manager; returns false if it is
    /// not registered.
    pub fn delete_template(&self, waba_id: &str, name: &str, language: &str) -> bool {
        let mut inner = self.shared.lock();
        let Some(waba) = inner.wabas.get_mut(waba_id) else {
            return false;
        };
        let before = waba.templates.len();
        waba.templates
            .retain(|t| !(t.spec.name == name && t.spec.language == language));
        waba.templates.len() < before
    }

    /// The templates of a WABA in creation order.
    pub fn templates(&self, waba_id: &str) -> Vec<TemplateInfo> {
        let inner = self.shared.lock();
        inner
            .wabas
            .get(waba_id)
            .map(|w| w.templates.clone())
            .unwrap_or_default()
    }

    /// Marks the number's token as expired: every request with it gets code 190.
    pub fn expire_token(&self, phone_number_id: &str) -> bool {
        let mut inner = self.shared.lock();
        let Some(token) = inner
            .numbers
            .get(phone_number_id)
            .map(|n| n.spec.access_token.clone())
        else {
            return false;
        };
        inner.tokens.insert(token, true);
        true
    }

    /// The next `count` sends from the number answer `code` (130429 by
    /// default in the control API; 4 and 80007 are the other throttling codes).
    pub fn throttle_next(&self, phone_number_id: &str, count: u32, code: i64) -> bool {
        let mut inner = self.shared.lock();
        match inner.numbers.get_mut(phone_number_id) {
            Some(n) => {
                n.burst = (count > 0).then_some((count, code));
                true
            }
            None => false,
        }
    }

    /// Caps accepted sends per second for the number (130429 beyond it); `None` removes the cap.
    pub fn set_mps_cap(&self, phone_number_id: &str, mps: Option<u32>) -> bool {
        let mut inner = self.shared.lock();
        match inner.numbers.get_mut(phone_number_id) {
            Some(n) => {
                n.mps_cap = mps;
                n.recent.clear();
                true
            }
            None => false,
        }
    }

    /// Adds an error injection (checked in insertion order per recipient). Its `to` names
    /// the user (a phone in any spelling, a BSUID or a parent BSUID), so it matches sends
    /// addressed to them either way.
    pub fn inject(&self, injection: Injection) {
        let mut inner = self.shared.lock();
        let key = recipient_key(&mut inner, &injection.to);
        inner
            .injections
            .entry(key)
            .or_default()
            .push_back(injection);
    }

    /// Removes every error injection.
    pub fn clear_injections(&self) {
        self.shared.lock().injections.clear();
    }

    /// Makes the next `times` accepted sends to `to` ambiguous (dropped
    /// connection, delayed or hung response) while still counting them. `to` names the
    /// user, as for [`FakeGraph::inject`].
    pub fn ambiguous(&self, ambiguity: Ambiguity) {
        let mut inner = self.shared.lock();
        let key = recipient_key(&mut inner, &ambiguity.to);
        inner
            .ambiguities
            .entry(key)
            .or_default()
            .push_back(ambiguity);
    }

    /// Shorthand: the next send to `to` is accepted but its connection is dropped.
    pub fn drop_next_response(&self, to: &str) {
        self.ambiguous(Ambiguity {
            to: to.to_owned(),
            kind: AmbiguityKind::DropConnection,
            times: 1,
        });
    }

    /// Shorthand: the next send to `to` is accepted but answered after `delay`.
    pub fn delay_next_response(&self, to: &str, delay: Duration) {
        let kind = AmbiguityKind::Delay {
            secs: delay.as_secs_f64(),
        };
        self.ambiguous(Ambiguity {
            to: to.to_owned(),
            kind,
            times: 1,
        });
    }

    /// Shorthand: the next send to `to` is accepted and never answered.
    pub fn hang_next_response(&self, to: &str) {
        self.ambiguous(Ambiguity {
            to: to.to_owned(),
            kind: AmbiguityKind::Hang,
            times: 1,
        });
    }

    /// Sets (or clears) the webhook target and status knobs.
    pub fn configure_webhook(&self, config: Option<WebhookConfig>) {
        self.shared.lock().webhook = config;
    }

    /// The current webhook configuration.
    pub fn webhook_config(&self) -> Option<WebhookConfig> {
        self.shared.lock().webhook.clone()
    }

    /// Counters.
    pub fn stats(&self) -> Stats {
        let c = &self.shared.counters;
        Stats {
            attempts: c.attempts.load(Ordering::Relaxed),
            accepted: c.accepted.load(Ordering::Relaxed),
            refused: c.refused.load(Ordering::Relaxed),
            webhooks: c.webhooks.load(Ordering::Relaxed),
            webhook_posts: c.webhook_posts.load(Ordering::Relaxed),
            webhook_acked: c.webhook_acked.load(Ordering::Relaxed),
            webhook_failed: c.webhook_failed.load(Ordering::Relaxed),
        }
    }

    /// Every accepted message, in acceptance order.
    pub fn accepted(&self) -> Vec<AcceptedMessage> {
        self.shared.lock().accepted.clone()
    }

    /// How many sends were accepted in total.
    pub fn accepted_count(&self) -> usize {
        self.shared.lock().accepted.len()
    }

    /// How many sends to `to` (as written by the sender) were accepted.
    pub fn accepted_to(&self, to: &str) -> usize {
        self.shared
            .lock()
            .accepted_by_to
            .get(to)
            .copied()
            .unwrap_or(0)
    }

    /// The accepted message with this wamid.
    pub fn message(&self, wamid: &str) -> Option<AcceptedMessage> {
        self.shared
            .lock()
            .accepted
            .iter()
            .find(|m| m.wamid == wamid)
            .cloned()
    }

    /// Every send attempt, accepted or refused, in arrival order.
    pub fn attempts(&self) -> Vec<Attempt> {
        self.shared.lock().attempts.clone()
    }

    /// Acceptance times of the number's sends, in ms since the fake started.
    pub fn send_times(&self, phone_number_id: &str) -> Vec<f64> {
        let inner = self.shared.lock();
        inner
            .accepted
            .iter()
            .filter(|m| m.phone_number_id == phone_number_id)
            .map(|m| m.elapsed_ms)
            .collect()
    }

    /// The highest number of accepted sends from the number within any
    /// one-second window (to check a sender's mps limiter).
    pub fn max_mps(&self, phone_number_id: &str) -> usize {
        let times = self.send_times(phone_number_id);
        let (mut best, mut lo) = (0, 0);
        for hi in 0..times.len() {
            while times[hi] - times[lo] >= 1000.0 {
                lo += 1;
            }
            best = best.max(hi - lo + 1);
        }
        best
    }

    /// The webhooks posted so far (most recent `webhook_log_cap` kept).
    pub fn webhook_log(&self) -> Vec<Posted> {
        self.shared.lock().webhook_log.iter().cloned().collect()
    }

    /// Clears logs and counters (registrations and knobs stay).
    pub fn reset_logs(&self) {
        let mut inner = self.shared.lock();
        inner.accepted.clear();
        inner.accepted_by_to.clear();
        inner.attempts.clear();
        inner.webhook_log.clear();
        inner.reads.clear();
        drop(inner);
        self.shared.media().stats = crate::media::MediaStats::default();
        let c = &self.shared.counters;
        for a in [
            &c.attempts,
            &c.accepted,
            &c.refused,
            &c.webhooks,
            &c.webhook_posts,
            &c.webhook_acked,
            &c.webhook_failed,
        ] {
            a.store(0, Ordering::Relaxed);
        }
    }

    /// Waits until no webhook delivery is in flight (or `timeout` passes);
    /// returns whether the fake went idle.
    pub async fn wait_webhooks_idle(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            if self.shared.counters.in_flight.load(Ordering::SeqCst) == 0 {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}
