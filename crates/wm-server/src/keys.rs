//! API keys as stored and cached: their format, their hash, their scopes' stored form,
//! the caller they stand for, and a short-lived cache of authenticated keys. The
//! middlewares that use them are in [`crate::auth`].

use std::time::Duration;

use rand::Rng;
use sha2::{Digest, Sha256};
use uuid::Uuid;
use wm_types::enums::Scope;

use crate::ttl::TtlMap;

/// Prefix of every API key.
pub const KEY_PREFIX: &str = "wm_live_";
const BASE62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
/// How long an authenticated key is trusted without a database read. Revocation through
/// this process clears it at once; other replicas notice within this time.
const CACHE_TTL: Duration = Duration::from_secs(5);
/// Most keys cached at once (least recently used go first).
const KEY_CACHE_CAPACITY: u64 = 100_000;

/// The caller behind an API key.
#[derive(Debug, Clone)]
pub struct AuthContext {
    /// Key id.
    pub key_id: Uuid,
    /// The organisation the key belongs to.
    pub org_id: Uuid,
    /// The user who created the key (notes and timeline entries are theirs).
    pub user_id: Uuid,
    /// That user's name.
    pub user_name: String,
    /// Granted scopes.
    pub scopes: Vec<Scope>,
    /// Expiry, ms since epoch.
    pub expires_at: Option<i64>,
}

/// A fresh key: `wm_live_` + 32 random base62 characters (~190 bits).
pub fn generate_key() -> String {
    let mut rng = rand::rng();
    let body: String = (0..32)
        .map(|_| BASE62[rng.random_range(0..BASE62.len())] as char)
        .collect();
    format!("{KEY_PREFIX}{body}")
}

/// The stored form of a key: SHA-256, hex. Keys are random and long, so a fast hash is
/// enough; the plaintext is never stored.
pub fn hash_key(key: &str) -> String {
    hex::encode(Sha256::digest(key.as_bytes()))
}

/// Scopes as stored (space-separated).
pub fn scopes_to_db(scopes: &[Scope]) -> String {
    let mut v: Vec<&str> = scopes.iter().map(Scope::as_str).collect();
    v.sort_unstable();
    v.dedup();
    v.join(" ")
}

/// Scopes from their stored form.
pub fn scopes_from_db(s: &str) -> Vec<Scope> {
    s.split_whitespace().filter_map(Scope::parse).collect()
}

/// Authenticated keys by hash, kept `CACHE_TTL` after they are read.
pub struct KeyCache(TtlMap<String, AuthContext>);

impl Default for KeyCache {
    fn default() -> Self {
        KeyCache(crate::ttl::expiring(CACHE_TTL, KEY_CACHE_CAPACITY))
    }
}

impl KeyCache {
    /// A key authenticated within the last few seconds.
    pub fn get(&self, hash: &str) -> Option<AuthContext> {
        self.0.get(hash)
    }

    /// Remembers an authenticated key.
    pub fn put(&self, hash: String, ctx: AuthContext) {
        self.0.insert(hash, ctx);
    }

    /// Forgets every key (after announcements may have been missed).
    pub fn clear(&self) {
        self.0.invalidate_all();
    }

    /// Forgets a key (on revocation).
    pub fn forget(&self, key_id: Uuid) {
        // Only fails when the cache was built without invalidation closures; it was not.
        let _ = self
            .0
            .invalidate_entries_if(move |_, ctx| ctx.key_id == key_id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_have_the_documented_format() {
        let k = generate_key();
        assert!(k.starts_with("wm_live_"));
        assert_eq!(k.len(), 8 + 32);
        assert!(k[8..].bytes().all(|b| b.is_ascii_alphanumeric()));
        assert_ne!(generate_key(), k);
        assert_eq!(hash_key(&k).len(), 64);
    }

    #[test]
    fn scopes_round_trip() {
        let s = scopes_to_db(&[
            Scope::ContactsWrite,
            Scope::ContactsRead,
            Scope::ContactsRead,
        ]);
        assert_eq!(s, "contacts:read contacts:write");
        assert_eq!(
            scopes_from_db(&s),
            vec![Scope::ContactsRead, Scope::ContactsWrite]
        );
    }
}
