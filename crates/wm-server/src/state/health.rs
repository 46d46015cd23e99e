//! What readiness reads besides the database, kept in the state so the workers, the
//! change listener and the shutdown can report to it without depending on
//! [`crate::observe`]: worker heartbeats and the draining and listening flags.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::Duration;

/// How long a started worker may go without a sign of life (a finished pass, a chunk of
/// messages, a webhook attempt) before readiness fails. A pass polls every 200 ms, and one
/// chunk or attempt takes seconds at most, so this is far beyond a healthy gap.
pub const STALE_AFTER: Duration = Duration::from_secs(30);

/// The background workers that report heartbeats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Worker {
    /// Campaign sending.
    Campaigns,
    /// Webhook deliveries.
    Webhooks,
    /// Automation runs.
    Automations,
    /// Contact imports.
    Imports,
}

impl Worker {
    /// Every worker, in the order readiness lists them.
    pub const ALL: [Worker; 4] = [
        Worker::Campaigns,
        Worker::Webhooks,
        Worker::Automations,
        Worker::Imports,
    ];

    /// The name in readiness bodies, log spans and metric labels.
    pub fn as_str(self) -> &'static str {
        match self {
            Worker::Campaigns => "campaigns",
            Worker::Webhooks => "webhooks",
            Worker::Automations => "automations",
            Worker::Imports => "imports",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

#[derive(Default)]
struct Beat {
    started: AtomicBool,
    last_ms: AtomicI64,
}

/// What readiness reads besides the database: worker heartbeats (in ms of the state's
/// clock) and whether the server is shutting down. Lives in [`super::AppState`].
#[derive(Default)]
pub struct Health {
    draining: AtomicBool,
    listening: AtomicBool,
    beats: [Beat; 4],
}

impl Health {
    /// A worker's loop started in this process: from now on readiness requires its
    /// heartbeat. Workers never started here (a host app that mounts only the router) are
    /// reported and not held against readiness.
    pub fn started(&self, w: Worker, now_ms: i64) {
        let b = &self.beats[w.index()];
        b.last_ms.store(now_ms, Ordering::Relaxed);
        b.started.store(true, Ordering::Relaxed);
    }

    /// A sign of life from a worker.
    pub fn beat(&self, w: Worker, now_ms: i64) {
        self.beats[w.index()]
            .last_ms
            .store(now_ms, Ordering::Relaxed);
    }

    /// Readiness answers 503 from now on (the server is shutting down).
    pub fn set_draining(&self) {
        self.draining.store(true, Ordering::Relaxed);
    }

    /// Whether the server is shutting down.
    pub fn is_draining(&self) -> bool {
        self.draining.load(Ordering::Relaxed)
    }

    /// Whether this replica hears the others' changes ([`crate::changes::listen`]).
    pub fn set_listening(&self, on: bool) {
        self.listening.store(on, Ordering::Relaxed);
    }

    /// Whether this replica hears the others' changes right now.
    pub fn is_listening(&self) -> bool {
        self.listening.load(Ordering::Relaxed)
    }

    /// `Ok(description)` or `Err(what is wrong)` for one worker.
    pub fn worker_check(&self, w: Worker, now_ms: i64) -> Result<String, String> {
        let b = &self.beats[w.index()];
        if !b.started.load(Ordering::Relaxed) {
            return Ok("not running in this process".to_owned());
        }
        let age_ms = now_ms.saturating_sub(b.last_ms.load(Ordering::Relaxed));
        let limit = i64::try_from(STALE_AFTER.as_millis()).unwrap_or(i64::MAX);
        if age_ms > limit {
            Err(format!("stale {}s", age_ms / 1000))
        } else {
            Ok("ok".to_owned())
        }
    }
}
