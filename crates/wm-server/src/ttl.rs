//! The one TTL map of the server — the API key cache, the organisation lookups and both
//! rate limiters use it: moka's concurrent cache, sharded (no global lock on the request
//! path), capacity-capped, and cleaned by its own amortised housekeeping, so no call ever
//! scans every entry.

use std::hash::Hash;
use std::time::Duration;

/// The map itself.
pub type TtlMap<K, V> = moka::sync::Cache<K, V>;

/// Entries live `ttl` after they are written (a cache of something that may change).
pub fn expiring<K, V>(ttl: Duration, capacity: u64) -> TtlMap<K, V>
where
    K: Hash + Eq + Send + Sync + 'static,
    V: Clone + Send + Sync + 'static,
{
    moka::sync::Cache::builder()
        .time_to_live(ttl)
        .max_capacity(capacity)
        .support_invalidation_closures()
        .build()
}

/// Entries live until unused for `idle` (per-key state such as a rate-limit window).
pub fn idle<K, V>(idle: Duration, capacity: u64) -> TtlMap<K, V>
where
    K: Hash + Eq + Send + Sync + 'static,
    V: Clone + Send + Sync + 'static,
{
    moka::sync::Cache::builder()
        .time_to_idle(idle)
        .max_capacity(capacity)
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_expire_and_the_map_stays_within_its_capacity() {
        let m: TtlMap<u32, u32> = expiring(Duration::from_millis(50), 100);
        m.insert(1, 10);
        assert_eq!(m.get(&1), Some(10));
        std::thread::sleep(Duration::from_millis(80));
        assert_eq!(m.get(&1), None, "expired");
        for i in 0..1_000 {
            m.insert(i, i);
        }
        m.run_pending_tasks();
        assert!(m.entry_count() <= 100, "{}", m.entry_count());
        m.insert(7, 7);
        m.invalidate_entries_if(|k, _| *k == 7).unwrap();
        m.run_pending_tasks();
        assert_eq!(m.get(&7), None);
    }
}
