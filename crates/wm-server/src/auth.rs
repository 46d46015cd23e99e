//! API keys and the operator token: generation, hashing, the authentication middlewares
//! and a short-lived cache of authenticated keys.
//!
//! Check order for API routes (DESIGN §4): authenticate (401) → rate limit (429) → scope
//! (403, in the handler's [`crate::extract::Authed`] extractor) → validation → handler.

use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rand::Rng;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use uuid::Uuid;
use wm_types::enums::ErrorCode;
use wm_types::enums::Scope;

use crate::db::entities::{api_key, user};
use crate::error::ApiError;
use crate::state::AppState;
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

/// Authenticated keys by hash, kept [`CACHE_TTL`] after they are read.
pub struct KeyCache(TtlMap<String, AuthContext>);

impl Default for KeyCache {
    fn default() -> Self {
        KeyCache(crate::ttl::expiring(CACHE_TTL, KEY_CACHE_CAPACITY))
    }
}

impl KeyCache {
    fn get(&self, hash: &str) -> Option<AuthContext> {
        self.0.get(hash)
    }

    fn put(&self, hash: String, ctx: AuthContext) {
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

fn bearer(headers: &HeaderMap) -> Option<&str> {
    let v = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = v.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

fn invalid_key() -> ApiError {
    ApiError::business(
        StatusCode::UNAUTHORIZED,
        Some(ErrorCode::ApiKeyInvalid),
        "The API key is missing, invalid or revoked.",
    )
}

/// Looks a presented key up. `Ok(None)`: no such active key (unknown or revoked).
async fn lookup(state: &AppState, key: &str) -> Result<Option<AuthContext>, ApiError> {
    let hash = hash_key(key);
    if let Some(ctx) = state.keys.get(&hash) {
        return Ok(Some(ctx));
    }
    let Some(row) = api_key::Entity::find()
        .filter(api_key::Column::KeyHash.eq(&hash))
        .filter(api_key::Column::RevokedAt.is_null())
        .one(&state.db.conn)
        .await?
    else {
        return Ok(None);
    };
    let user_name = user::Entity::find_by_id(row.user_id)
        .one(&state.db.conn)
        .await?
        .map(|u| u.full_name)
        .unwrap_or_default();
    let ctx = AuthContext {
        key_id: row.id,
        org_id: row.organization_id,
        user_id: row.user_id,
        user_name,
        scopes: scopes_from_db(&row.scopes),
        expires_at: row.expires_at,
    };
    state.keys.put(hash, ctx.clone());
    Ok(Some(ctx))
}

/// Middleware of the API-key routes: authenticates, applies the rate limit, stores the
/// [`AuthContext`] for the handler and adds the `RateLimit-*` headers to every answer.
pub async fn api_key_auth(State(state): State<AppState>, mut req: Request, next: Next) -> Response {
    let Some(key) = bearer(req.headers()) else {
        return invalid_key().into_response();
    };
    let ctx = match lookup(&state, key).await {
        Ok(Some(ctx)) => ctx,
        Ok(None) => return invalid_key().into_response(),
        Err(e) => return e.into_response(),
    };
    crate::observe::request_log::record_caller(&ctx);
    let now = state.now_ms();
    if ctx.expires_at.is_some_and(|exp| exp <= now) {
        return ApiError::business(
            StatusCode::UNAUTHORIZED,
            Some(ErrorCode::ApiKeyExpired),
            "The API key has expired.",
        )
        .into_response();
    }
    let decision = match state.limiter.check(ctx.key_id, now).await {
        Ok(d) => d,
        Err(e) => return ApiError::from(e).into_response(),
    };
    let mut response = if decision.allowed {
        req.extensions_mut().insert(ctx);
        next.run(req).await
    } else {
        crate::observe::metrics::rate_limited();
        let mut r = ApiError::business(
            StatusCode::TOO_MANY_REQUESTS,
            Some(ErrorCode::ApiKeyRateLimited),
            format!(
                "More than {} requests in one minute with this API key.",
                decision.limit
            ),
        )
        .into_response();
        r.headers_mut().insert(
            header::RETRY_AFTER,
            HeaderValue::from(decision.reset_secs.max(1)),
        );
        r
    };
    let h = response.headers_mut();
    h.insert("ratelimit-limit", HeaderValue::from(decision.limit));
    h.insert("ratelimit-remaining", HeaderValue::from(decision.remaining));
    h.insert("ratelimit-reset", HeaderValue::from(decision.reset_secs));
    response
}

/// Middleware of the operator routes: the operator token passes; a valid API key answers
/// 403 `API_KEY_NOT_ALLOWED_HERE`; anything else 401.
pub async fn admin_auth(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let Some(token) = bearer(req.headers()) else {
        return admin_unauthorized().into_response();
    };
    let expected = state.settings.admin_token.as_bytes();
    if constant_time_eq(token.as_bytes(), expected) {
        return next.run(req).await;
    }
    match lookup(&state, token).await {
        Ok(Some(_)) => ApiError::business(
            StatusCode::FORBIDDEN,
            Some(ErrorCode::ApiKeyNotAllowedHere),
            "This route is not open to API keys.",
        )
        .into_response(),
        Ok(None) => admin_unauthorized().into_response(),
        Err(e) => e.into_response(),
    }
}

fn admin_unauthorized() -> ApiError {
    ApiError::business(
        StatusCode::UNAUTHORIZED,
        Some(ErrorCode::AdminTokenInvalid),
        "The operator token is missing or wrong.",
    )
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    // Compare digests so the length of the token does not leak either.
    bool::from(Sha256::digest(a).ct_eq(&Sha256::digest(b)))
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

    #[test]
    fn token_comparison() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"abcd"));
    }
}
