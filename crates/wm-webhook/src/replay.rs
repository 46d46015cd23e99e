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

/// An in-process [`ReplayGuard`], swept of expired ids as it goes.
#[derive(Debug, Default)]
pub struct InMemoryReplayGuard {
    seen: Mutex<HashMap<String, i64>>,
}

impl ReplayGuard for InMemoryReplayGuard {
    fn first_time(&self, id: &str, now: i64, expires_at: i64) -> bool {
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        if seen.len() > 10_000 {
            seen.retain(|_, exp| *exp > now);
        }
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
}
