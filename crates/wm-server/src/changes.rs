//! Shared-state changes every replica must see at once: a revoked key, an organisation's
//! stages, users or channels; and the contact bell's rings ([`crate::db::bell`]), heard on
//! the same listening connection.
//!
//! A change clears this process's caches right away and, on PostgreSQL, is announced with
//! `NOTIFY` on [`CHANNEL`]; every replica runs [`listen`], which clears its own caches when
//! the announcement arrives (milliseconds later). If the listening connection drops, the
//! announcements sent meanwhile are lost, so the listener clears every cache when it
//! reconnects; and the caches' short TTLs stay as the last fallback.

use std::time::Duration;

use sea_orm::{ConnectionTrait, DbBackend, Statement};
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

use crate::state::AppState;

/// The PostgreSQL notification channel.
pub const CHANNEL: &str = "wm_changes";

/// What changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// An API key was revoked.
    Key(Uuid),
    /// An organisation's stages, users or channels changed.
    Org(Uuid),
}

impl Change {
    fn encode(self) -> String {
        match self {
            Change::Key(id) => format!("key:{id}"),
            Change::Org(id) => format!("org:{id}"),
        }
    }

    fn decode(s: &str) -> Option<Change> {
        let (kind, id) = s.split_once(':')?;
        let id = Uuid::parse_str(id).ok()?;
        match kind {
            "key" => Some(Change::Key(id)),
            "org" => Some(Change::Org(id)),
            _ => None,
        }
    }

    /// Clears what this change makes stale in this process.
    fn apply(self, state: &AppState) {
        match self {
            Change::Key(id) => state.keys.forget(id),
            Change::Org(id) => state.lookups.invalidate(id),
        }
    }
}

/// Applies a committed change here and announces it to the other replicas. An
/// announcement that fails is logged: the others then catch up within the caches' TTL.
pub async fn publish(state: &AppState, change: Change) {
    change.apply(state);
    if state.db.backend() != DbBackend::Postgres {
        return;
    }
    let notify = Statement::from_sql_and_values(
        DbBackend::Postgres,
        "SELECT pg_notify($1, $2)",
        [CHANNEL.into(), change.encode().into()],
    );
    if let Err(e) = state.db.conn.execute_raw(notify).await {
        tracing::warn!(error = %e, ?change, "a change could not be announced to the other replicas");
    }
}

/// Listens for the other replicas' changes until cancelled (PostgreSQL; returns at once on
/// SQLite, where one process owns the database).
pub async fn listen(state: AppState, cancel: CancellationToken) {
    if state.db.backend() != DbBackend::Postgres {
        return;
    }
    loop {
        tokio::select! {
            _ = cancel.cancelled() => return,
            r = listen_once(&state) => {
                if let Err(e) = r {
                    tracing::warn!(error = %e, "listening for other replicas' changes failed; retrying");
                }
            }
        }
        // Whatever was announced while not listening is unknown: forget everything.
        clear_all(&state);
        tokio::select! {
            _ = cancel.cancelled() => return,
            _ = tokio::time::sleep(Duration::from_secs(1)) => {}
        }
    }
}

/// One listening connection, until it fails or drops.
async fn listen_once(state: &AppState) -> Result<(), sea_orm::sqlx::Error> {
    use sea_orm::sqlx::postgres::PgListener;
    let pool = state.db.conn.get_postgres_connection_pool();
    let mut listener = PgListener::connect_with(pool).await?;
    listener
        .listen_all([CHANNEL, crate::db::bell::CHANNEL])
        .await?;
    // Announcements made before this point were missed; so were rings: every watcher
    // looks again.
    clear_all(state);
    state.db.bell().ring_all_here();
    state.health.set_listening(true);
    let out = loop {
        match listener.try_recv().await {
            // Another replica rang a contact: wake their watchers here.
            Ok(Some(n)) if n.channel() == crate::db::bell::CHANNEL => {
                if let Ok(contact) = Uuid::parse_str(n.payload()) {
                    state.db.bell().ring_here(contact);
                }
            }
            Ok(Some(n)) => match Change::decode(n.payload()) {
                Some(change) => change.apply(state),
                None => tracing::warn!(payload = n.payload(), "unknown change announced"),
            },
            // The connection dropped: announcements may have been lost.
            Ok(None) => break Ok(()),
            Err(e) => break Err(e),
        }
    };
    state.health.set_listening(false);
    out
}

fn clear_all(state: &AppState) {
    state.keys.clear();
    state.lookups.clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_round_trip() {
        for c in [Change::Key(Uuid::now_v7()), Change::Org(Uuid::now_v7())] {
            assert_eq!(Change::decode(&c.encode()), Some(c));
        }
        assert_eq!(Change::decode("key:nope"), None);
        assert_eq!(
            Change::decode("user:0190f3a0-0000-7000-8000-000000000000"),
            None
        );
    }
}
