//! The authentication middlewares: API keys (through [`crate::keys`]) and the operator
//! token.
//!
//! Check order for API routes (DESIGN §4): authenticate (401) → rate limit (429) → scope
//! (403, in the handler's [`crate::extract::Authed`] extractor) → validation → handler.

use crate::db::Unique;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use wm_types::enums::ErrorCode;

use crate::db::entities::{api_key, user};
use crate::error::ApiError;
use crate::state::AppState;

use crate::keys::{AuthContext, hash_key, scopes_from_db};

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

/// A request the console makes in-process for a signed-in session: the API key it acts
/// as, by its stored hash. Request extensions never come from the network, so only code in
/// this process can set it; the key itself is kept nowhere.
#[derive(Debug, Clone)]
pub struct KeyByHash(pub String);

/// Looks a presented key up. `Ok(None)`: no such active key (unknown or revoked).
async fn lookup(state: &AppState, key: &str) -> Result<Option<AuthContext>, ApiError> {
    lookup_hash(state, hash_key(key)).await
}

/// `lookup` by the key's hash (the console's sessions hold only that).
pub async fn lookup_hash(state: &AppState, hash: String) -> Result<Option<AuthContext>, ApiError> {
    if let Some(ctx) = state.keys.get(&hash) {
        return Ok(Some(ctx));
    }
    let Some(row) = api_key::Entity::find()
        .filter(api_key::Column::KeyHash.eq(&hash))
        .filter(api_key::Column::RevokedAt.is_null())
        .unique(&state.db.conn)
        .await?
    else {
        return Ok(None);
    };
    let user_name = user::Entity::find_by_id(row.user_id)
        .unique(&state.db.conn)
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
    let hash = match (req.extensions().get::<KeyByHash>(), bearer(req.headers())) {
        (Some(KeyByHash(hash)), _) => hash.clone(),
        (None, Some(key)) => hash_key(key),
        (None, None) => return invalid_key().into_response(),
    };
    let ctx = match lookup_hash(&state, hash).await {
        Ok(Some(ctx)) => ctx,
        Ok(None) => return invalid_key().into_response(),
        Err(e) => return e.into_response(),
    };
    crate::observe::request_log::record_caller(req.extensions(), &ctx);
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
        let key_id = ctx.key_id;
        req.extensions_mut().insert(ctx);
        crate::idempotency::guard(&state, key_id, req, next).await
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
        // The operator's Idempotency-Keys are a scope of their own.
        return crate::idempotency::guard(&state, uuid::Uuid::nil(), req, next).await;
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
    fn token_comparison() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"abcd"));
    }
}
