//! The website chat's visitors: a chat (a WEBCHAT channel) found by its public token and
//! embedded only by its allowed sites; visitors known by a signed token ([`tokens`]) who
//! become contacts when they first write; their messages, files and button taps kept through
//! the one inbound path every channel uses; the site's vouched-for users followed across
//! browsers ([`visitors`]); what a visitor reads ([`reading`]).
//!
//! Abuse: per visitor and per address limits on messages, a cap on the conversations one
//! contact may open (6 in 12 hours, as Chatwoot does), bodies bounded, files typed by their
//! content; nothing is kept of a refused request.

pub mod reading;
pub mod tokens;
pub mod visitors;

use sha2::{Digest, Sha256};
use uuid::Uuid;
use wm_types::channels::WebchatSettings;
use wm_types::enums::ChannelType;

use crate::db::entities::channel;
use crate::error::{ApiError, ApiResult};
use crate::rate_limit::Limiter;
use crate::state::AppState;

/// Conversations one contact may open in [`NEW_CONVERSATIONS_WINDOW_MS`].
pub const NEW_CONVERSATIONS: u64 = 6;
/// The window of [`NEW_CONVERSATIONS`].
pub const NEW_CONVERSATIONS_WINDOW_MS: i64 = 12 * 3_600_000;

/// A chat, as its visitors reach it.
pub struct Site {
    /// Its channel row.
    pub channel: channel::Model,
    /// Its settings.
    pub settings: WebchatSettings,
    /// Its identity secret, decrypted: it signs visitor tokens and checks identifier hashes.
    secret: String,
}

impl Site {
    /// Whether a page of `origin` may use the chat (a request without an `Origin` is no
    /// browser's page: refused too, as the widget always sends one).
    pub fn allows(&self, origin: Option<&str>) -> bool {
        let Some(origin) = origin else {
            return false;
        };
        let origin = origin.trim_end_matches('/').to_ascii_lowercase();
        self.settings.allowed_origins.contains(&origin)
    }

    /// The person a visitor token names here; `401` otherwise.
    pub fn visitor(&self, token: Option<&str>, now: i64) -> ApiResult<String> {
        token
            .and_then(|t| tokens::read(&self.secret, self.channel.id, t, now))
            .ok_or_else(|| {
                ApiError::business(
                    axum::http::StatusCode::UNAUTHORIZED,
                    None,
                    "The visitor token is missing, forged or expired.",
                )
            })
    }

    /// A token for `person`.
    pub fn token_for(&self, person: &str, now: i64) -> String {
        tokens::issue(&self.secret, self.channel.id, person, now)
    }

    /// Whether `hash` vouches for `identifier`.
    pub fn vouches(&self, identifier: &str, hash: &str) -> bool {
        tokens::vouched(&self.secret, identifier, hash)
    }
}

/// The chat whose public token is `token` (active); `404` otherwise.
pub async fn site(state: &AppState, token: &str) -> ApiResult<Site> {
    let not_found = || ApiError::not_found("Website chat");
    let ch = crate::db::channels::by_public_token(&state.db.conn, token)
        .await?
        .filter(|c| c.active && c.channel_type == ChannelType::Webchat)
        .ok_or_else(not_found)?;
    let secret = match (&state.secret_key, ch.secret_enc.as_deref()) {
        (Some(key), Some(enc)) => key.decrypt(enc).map_err(|e| {
            ApiError::Internal(anyhow::anyhow!("the chat's secret cannot be read: {e}"))
        })?,
        _ => {
            return Err(ApiError::Internal(anyhow::anyhow!(
                "the chat's secret cannot be read: the server has no WM_SECRET_KEY"
            )));
        }
    };
    let settings = ch
        .settings
        .as_deref()
        .and_then(|s| serde_json::from_str(s).ok())
        .unwrap_or_default();
    Ok(Site {
        channel: ch,
        settings,
        secret,
    })
}

/// The bell key of a visitor who has not written yet (their watchers wait on it until their
/// first message makes them a contact, from whichever tab).
pub fn newcomer(site: &Site, person: &str) -> Uuid {
    let digest = Sha256::digest(format!("webchat:{}:{person}", site.channel.id).as_bytes());
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    Uuid::from_bytes(bytes)
}

/// The limiters of the chat's writers, shared by every replica on PostgreSQL.
struct Limits {
    visitor: Limiter,
    address: Limiter,
}

/// A stable limiter key for a name.
fn key(kind: &str, name: &str) -> Uuid {
    let digest = Sha256::digest(format!("webchat:{kind}:{name}").as_bytes());
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    Uuid::from_bytes(bytes)
}

/// A 429 with its `Retry-After` (seconds).
pub fn too_many(what: &str, retry_after: u64) -> ApiError {
    ApiError::business(
        axum::http::StatusCode::TOO_MANY_REQUESTS,
        None,
        format!("Too many {what}; try again in {retry_after} s."),
    )
    .with("retryAfter", retry_after)
}

/// Counts one write of `address` (and of `person`, when a message), refusing past the
/// limits.
pub async fn admit(state: &AppState, address: &str, person: Option<&str>) -> ApiResult<()> {
    let limits = state.singleton(|s| Limits {
        visitor: Limiter::for_db(&s.db, s.settings.webchat_messages_per_minute.max(1)),
        address: Limiter::for_db(
            &s.db,
            s.settings.webchat_writes_per_address_per_minute.max(1),
        ),
    });
    let now = state.now_ms();
    let d = limits.address.check(key("address", address), now).await?;
    if !d.allowed {
        return Err(too_many("requests from this address", d.reset_secs.max(1)));
    }
    if let Some(person) = person {
        let d = limits.visitor.check(key("visitor", person), now).await?;
        if !d.allowed {
            return Err(too_many("messages", d.reset_secs.max(1)));
        }
    }
    Ok(())
}
