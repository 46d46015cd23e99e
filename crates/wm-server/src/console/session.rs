//! Signed-in sessions: a random token in an HttpOnly, SameSite=Strict cookie (Secure behind
//! https), kept in the database as its SHA-256 beside the hash of the API key it acts as
//! and a CSRF token, so every replica knows every session and a revoked key ends them.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, header};
use rand::Rng;
use sea_orm::{ActiveValue::Set, ColumnTrait, EntityTrait, QueryFilter, QuerySelect};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use wm_types::enums::Scope;

use super::answer::ConsoleError;
use super::api::Api;
use super::context::Console;
use crate::db::entities::{console_session, organization};
use crate::keys::AuthContext;
use crate::state::AppState;

/// The session cookie.
pub const SESSION_COOKIE: &str = "wm_console";
/// The sign-in form's CSRF cookie (before there is a session to hold the token).
pub const SIGN_IN_COOKIE: &str = "wm_console_sign_in";
/// A message for the next page (set before a redirect).
pub const FLASH_COOKIE: &str = "wm_console_flash";
/// How long a session lasts from sign-in; the key's own expiry ends it sooner.
pub const SESSION_TTL_MS: i64 = 12 * 60 * 60 * 1000;

/// A signed-in browser: the key's caller, the API as that key, the CSRF token its forms
/// carry, and the message left for this page.
pub struct Session {
    /// Who the key is (organisation, user, scopes).
    pub caller: AuthContext,
    /// The API as this key.
    pub api: Api,
    /// The token every form of this session carries.
    pub csrf: String,
    /// A message left by the previous request (shown once).
    pub flash: Option<Flash>,
    /// Whether the browser came over https (cookies set now are Secure).
    pub secure: bool,
    /// The organisation's time zone: times are shown, and a scheduled time is read, in it.
    pub tz: chrono_tz::Tz,
    now_ms: i64,
}

/// A one-time message: what a form did, or why it did not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flash {
    /// True for a failure.
    pub error: bool,
    /// The words shown.
    pub text: String,
}

impl Session {
    /// The server's clock, in ms (windows and expiries are judged by it).
    pub fn now(&self) -> i64 {
        self.now_ms
    }

    /// Whether the key holds `scope` (pages hide what it does not).
    pub fn can(&self, scope: Scope) -> bool {
        self.caller.scopes.contains(&scope)
    }
}

/// A fresh random token (hex of 32 bytes).
pub fn random_token() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill(&mut bytes);
    hex::encode(bytes)
}

/// The stored form of a session token.
fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// Constant-time equality of two tokens.
pub fn same_token(a: &str, b: &str) -> bool {
    !a.is_empty() && bool::from(Sha256::digest(a).ct_eq(&Sha256::digest(b)))
}

/// The value of cookie `name`, if the request has it.
pub fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

/// A `Set-Cookie` value: HttpOnly, SameSite=Strict, path `/console`, Secure when the
/// request came over https (directly or through a proxy that says so).
pub fn set_cookie(secure: bool, name: &str, value: &str, max_age_s: i64) -> HeaderValue {
    let value = format!(
        "{name}={value}; Path=/console; Max-Age={max_age_s}; HttpOnly; SameSite=Strict{}",
        if secure { "; Secure" } else { "" }
    );
    // Names and values are ours (hex tokens, percent-encoded text): always a valid header.
    HeaderValue::from_str(&value).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// A cookie that removes `name`.
pub fn clear_cookie(secure: bool, name: &str) -> HeaderValue {
    set_cookie(secure, name, "", 0)
}

/// Whether the request came over https (directly or through a proxy that says so).
pub fn is_https(headers: &HeaderMap) -> bool {
    headers
        .get("x-forwarded-proto")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("https"))
}

/// A flash as its cookie value (percent-encoded, `!` first for an error).
pub fn flash_value(flash: &Flash) -> String {
    let text: String = form_urlencoded::byte_serialize(flash.text.as_bytes()).collect();
    if flash.error {
        format!("!{text}")
    } else {
        text
    }
}

/// The flash the request carries, if any.
pub fn read_flash(headers: &HeaderMap) -> Option<Flash> {
    let raw = cookie(headers, FLASH_COOKIE).filter(|v| !v.is_empty())?;
    let (error, raw) = match raw.strip_prefix('!') {
        Some(rest) => (true, rest),
        None => (false, raw),
    };
    let text: String = form_urlencoded::parse(format!("t={raw}").as_bytes())
        .map(|(_, v)| v.into_owned())
        .next()?;
    Some(Flash { error, text })
}

/// Opens a session for a key (by hash); returns the browser's token. Expired sessions of
/// anyone are swept on the way (sign-ins are rare, the index makes it cheap).
pub async fn open(state: &AppState, key_hash: String, ttl_ms: i64) -> anyhow::Result<String> {
    let now = state.now_ms();
    console_session::Entity::delete_many()
        .filter(console_session::Column::ExpiresAt.lte(now))
        .exec(&state.db.conn)
        .await?;
    let token = random_token();
    console_session::Entity::insert(console_session::ActiveModel {
        token_hash: Set(token_hash(&token)),
        key_hash: Set(key_hash),
        csrf: Set(random_token()),
        expires_at: Set(now + ttl_ms),
        created_at: Set(now),
    })
    .exec(&state.db.conn)
    .await?;
    Ok(token)
}

/// Ends the session whose cookie the request carries, if any.
pub async fn close(state: &AppState, headers: &HeaderMap) -> anyhow::Result<()> {
    if let Some(token) = cookie(headers, SESSION_COOKIE) {
        console_session::Entity::delete_by_id(token_hash(token))
            .exec(&state.db.conn)
            .await?;
    }
    Ok(())
}

impl FromRequestParts<Console> for Session {
    type Rejection = ConsoleError;

    async fn from_request_parts(
        parts: &mut Parts,
        console: &Console,
    ) -> Result<Self, Self::Rejection> {
        let state = &console.state;
        let row = match parts.extensions.remove::<console_session::Model>() {
            Some(row) => Some(row),
            None => find(state, &parts.headers)
                .await
                .map_err(|e| ConsoleError::Internal(e.into()))?,
        };
        let row = row.ok_or(ConsoleError::SignedOut)?;
        let caller = crate::auth::lookup_hash(state, row.key_hash.clone())
            .await
            .map_err(|e| ConsoleError::Internal(anyhow::anyhow!("{e}")))?
            .filter(|c| c.expires_at.is_none_or(|exp| exp > state.now_ms()));
        let Some(caller) = caller else {
            // The key was revoked or has expired: the session ends with it.
            console_session::Entity::delete_by_id(row.token_hash)
                .exec(&state.db.conn)
                .await
                .map_err(|e| ConsoleError::Internal(e.into()))?;
            return Err(ConsoleError::SignedOut);
        };
        // Read with the session, never cached: a changed time zone shows on the next page
        // on every replica.
        let tz: Option<String> = organization::Entity::find_by_id(caller.org_id)
            .select_only()
            .column(organization::Column::Timezone)
            .into_tuple()
            .one(&state.db.conn)
            .await
            .map_err(|e| ConsoleError::Internal(e.into()))?;
        Ok(Session {
            tz: tz.and_then(|t| t.parse().ok()).unwrap_or(chrono_tz::UTC),
            caller,
            api: Api::new(console.api.clone(), row.key_hash),
            csrf: row.csrf,
            flash: read_flash(&parts.headers),
            secure: is_https(&parts.headers),
            now_ms: state.now_ms(),
        })
    }
}

/// The live session row of the request's cookie, if any. The CSRF guard finds it first
/// and leaves it in the request for the [`Session`] extractor, so a form costs one read.
pub async fn find(
    state: &AppState,
    headers: &HeaderMap,
) -> Result<Option<console_session::Model>, sea_orm::DbErr> {
    let Some(token) = cookie(headers, SESSION_COOKIE) else {
        return Ok(None);
    };
    Ok(console_session::Entity::find_by_id(token_hash(token))
        .one(&state.db.conn)
        .await?
        .filter(|row| row.expires_at > state.now_ms()))
}
