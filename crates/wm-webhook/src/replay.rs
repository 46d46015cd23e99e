//! A replay guard: remembers delivery ids for a while so a retried or replayed delivery is
//! processed once.

use std::collections::HashMap;
use std::sync::Mutex;

/// Where a receiver remembers the delivery ids it has processed (a database table, Redis, …).
pub trait ReplayGuard: Send + Sync {
    /// Records `id` until `expires_at` (unix seconds); returns false when it was already seen
    /// and has not expired, i.e. when the delivery must be dropped.
    fn first_time(&self, id: &str, now: i64, expires_at: i64) -> bool;
}

/// How often (seconds) the in-memory guard drops expired ids.
const SWEEP_EVERY_SECS: i64 = 60;

/// An in-process [`ReplayGuard`]. Expired ids are dropped by a sweep at most once a
/// minute, so a call costs one lookup however many ids are live (the crate stays free of a
/// cache dependency; the server uses its own TTL map). Live ids are never dropped early: a
/// forgotten id would let its replay through.
#[derive(Debug, Default)]
pub struct InMemoryReplayGuard {
    seen: Mutex<Seen>,
}

#[derive(Debug, Default)]
struct Seen {
    ids: HashMap<String, i64>,
    swept_at: i64,
}

impl InMemoryReplayGuard {
    /// Ids remembered now (expired ones included until the next sweep).
    pub fn len(&self) -> usize {
        self.seen
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .ids
            .len()
    }

    /// Whether no id is remembered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl ReplayGuard for InMemoryReplayGuard {
    fn first_time(&self, id: &str, now: i64, expires_at: i64) -> bool {
        let mut guard = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        let seen = &mut *guard;
        if now - seen.swept_at >= SWEEP_EVERY_SECS {
            seen.ids.retain(|_, exp| *exp > now);
            seen.swept_at = now;
        }
        let seen = &mut seen.ids;
        match seen.get(id) {
            Some(exp) if *exp > now => false,
            _ => {
                seen.insert(id.to_owned(), expires_at);
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_delivery_id_passes_once_until_it_expires() {
        let g = InMemoryReplayGuard::default();
        assert!(g.first_time("d1", 0, 600));
        assert!(!g.first_time("d1", 10, 610));
        assert!(g.first_time("d2", 10, 610));
        assert!(g.first_time("d1", 600, 1200), "expired ids may pass again");
    }

    #[test]
    fn expired_ids_are_swept_and_live_ones_kept() {
        let g = InMemoryReplayGuard::default();
        for i in 0..20_000 {
            assert!(g.first_time(&format!("old{i}"), 0, 300));
        }
        assert!(g.first_time("live", 0, 10_000));
        assert_eq!(g.len(), 20_001, "nothing expired yet, nothing dropped");
        // A minute after the last sweep and past their expiry, the old ids go at once.
        assert!(g.first_time("new", 301, 900));
        assert_eq!(g.len(), 2);
        assert!(
            !g.first_time("live", 302, 10_302),
            "a live id is still refused"
        );
    }
}
