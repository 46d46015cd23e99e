//! The contact bell: rung when a contact's messages change (one came in, a reply was
//! queued, sent or moved on), so whoever is watching them — a visitor's website chat, an
//! agent's open thread — reads what changed at once instead of polling.
//!
//! A ring wakes this process's watchers of that contact and, on PostgreSQL, is announced
//! with `NOTIFY` on [`CHANNEL`] so every replica's watchers wake too (their listener rings
//! them here). A watcher reads from the database after each wake, so a ring lost to a
//! dropped listener is only a delay: when the listener reconnects it wakes every watcher
//! here, and watchers also look on their own every few minutes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use sea_orm::{ConnectionTrait, DbBackend, Statement};
use tokio::sync::Notify;
use uuid::Uuid;

/// The PostgreSQL notification channel of rings.
pub const CHANNEL: &str = "wm_bell";

/// The watchers of this process, by contact.
#[derive(Clone, Default)]
pub struct Bell(Arc<Mutex<Watchers>>);

#[derive(Default)]
struct Watchers {
    by_contact: HashMap<Uuid, Weak<Notify>>,
    /// Subscriptions since the map was last swept of dropped watchers.
    since_sweep: usize,
}

impl Bell {
    /// The notifier that wakes when `contact` is rung (shared by every watcher of them;
    /// forgotten once the last one is dropped).
    pub fn watch(&self, contact: Uuid) -> Arc<Notify> {
        let mut w = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        w.since_sweep += 1;
        if w.since_sweep > 1024 {
            w.by_contact.retain(|_, n| n.strong_count() > 0);
            w.since_sweep = 0;
        }
        if let Some(n) = w.by_contact.get(&contact).and_then(Weak::upgrade) {
            return n;
        }
        let n = Arc::new(Notify::new());
        w.by_contact.insert(contact, Arc::downgrade(&n));
        n
    }

    /// Wakes this process's watchers of `contact`.
    pub fn ring_here(&self, contact: Uuid) {
        let n = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .by_contact
            .get(&contact)
            .and_then(Weak::upgrade);
        if let Some(n) = n {
            n.notify_waiters();
        }
    }

    /// Wakes every watcher of this process: rings may have been missed (the listener of
    /// the other replicas' rings reconnected), so each looks again.
    pub fn ring_all_here(&self) {
        let all: Vec<Arc<Notify>> = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .by_contact
            .values()
            .filter_map(Weak::upgrade)
            .collect();
        for n in all {
            n.notify_waiters();
        }
    }

    /// Wakes the watchers of `contact` here and, on PostgreSQL, on every replica (a failed
    /// announcement is logged: the others see the change on their next look).
    pub async fn ring(&self, conn: &impl ConnectionTrait, contact: Uuid) {
        self.ring_here(contact);
        if conn.get_database_backend() != DbBackend::Postgres {
            return;
        }
        let notify = Statement::from_sql_and_values(
            DbBackend::Postgres,
            "SELECT pg_notify($1, $2)",
            [CHANNEL.into(), contact.to_string().into()],
        );
        if let Err(e) = conn.execute_raw(notify).await {
            tracing::warn!(error = %e, %contact, "a ring could not be announced to the other replicas");
        }
    }
}
