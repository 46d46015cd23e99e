//! Meta's Webhooks product, shared by every Meta platform (WhatsApp, Messenger,
//! Instagram): the subscription handshake (`hub.mode=subscribe`, `hub.verify_token`,
//! `hub.challenge`) and the `X-Hub-Signature-256` check of a delivered body
//! (<https://developers.facebook.com/docs/graph-api/webhooks/getting-started>).

use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use wm_core::platform::Handshake;

/// A Meta app as a platform reaches it: the Graph API's address and version, and the app's
/// webhook secrets. WhatsApp, Messenger and Instagram each have one (`WM_WHATSAPP_*`,
/// `WM_MESSENGER_*`), usually the same app.
#[derive(Clone, Default)]
pub struct MetaApp {
    /// Graph API base URL.
    pub graph_url: String,
    /// Graph API version (`v24.0`).
    pub api_version: String,
    /// The app secret that signs the webhooks (none: every body is refused).
    pub app_secret: Option<String>,
    /// The handshake's verify token (none: the handshake is refused).
    pub verify_token: Option<String>,
}

impl MetaApp {
    /// This app with `base`'s values where this one sets none (an empty address or
    /// version, a missing secret): Messenger's settings default to WhatsApp's.
    pub fn or(&self, base: &MetaApp) -> MetaApp {
        let pick = |a: &str, b: &str| if a.is_empty() { b } else { a }.to_owned();
        MetaApp {
            graph_url: pick(&self.graph_url, &base.graph_url),
            api_version: pick(&self.api_version, &base.api_version),
            app_secret: self.app_secret.clone().or_else(|| base.app_secret.clone()),
            verify_token: self
                .verify_token
                .clone()
                .or_else(|| base.verify_token.clone()),
        }
    }
}

impl std::fmt::Debug for MetaApp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MetaApp")
            .field("graph_url", &self.graph_url)
            .field("api_version", &self.api_version)
            .field("app_secret", &self.app_secret.as_ref().map(|_| "<set>"))
            .field("verify_token", &self.verify_token.as_ref().map(|_| "<set>"))
            .finish()
    }
}

/// Checks `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>` with the app
/// secret, in constant time; false when the secret is empty or the header is missing or
/// malformed.
pub fn verify_signature(app_secret: &str, header: Option<&str>, body: &[u8]) -> bool {
    if app_secret.is_empty() {
        return false;
    }
    let Some(hex_sig) = header
        .map(str::trim)
        .and_then(|h| h.strip_prefix("sha256="))
    else {
        return false;
    };
    let Ok(signature) = hex::decode(hex_sig) else {
        return false;
    };
    let Ok(mut mac) = <Hmac<Sha256> as KeyInit>::new_from_slice(app_secret.as_bytes()) else {
        return false;
    };
    mac.update(body);
    mac.verify_slice(&signature).is_ok()
}

/// Whether the GET handshake's `hub.verify_token` is ours, in constant time (both sides are
/// hashed first, so not even the length leaks); an empty expected token never matches.
pub fn verify_token_matches(expected: &str, given: &str) -> bool {
    if expected.is_empty() {
        return false;
    }
    let (a, b) = (
        Sha256::digest(expected.as_bytes()),
        Sha256::digest(given.as_bytes()),
    );
    a.as_slice().ct_eq(b.as_slice()).into()
}

/// Answers the GET handshake: the challenge when the mode is `subscribe` and the token is
/// `expected`; refused otherwise (and always without a token configured).
pub fn handshake(expected: Option<&str>, query: &[(String, String)]) -> Handshake {
    let get = |k: &str| query.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    match (
        expected,
        get("hub.mode"),
        get("hub.verify_token"),
        get("hub.challenge"),
    ) {
        (Some(expected), Some("subscribe"), Some(given), Some(challenge))
            if verify_token_matches(expected, given) =>
        {
            Handshake::Accept(challenge.to_owned())
        }
        _ => Handshake::Refuse,
    }
}

/// Whether a delivered body is signed with `app_secret` (none configured: refused).
pub fn verify(
    app_secret: Option<&str>,
    header: &dyn Fn(&str) -> Option<String>,
    body: &[u8],
) -> bool {
    let signature = header("x-hub-signature-256");
    app_secret.is_some_and(|secret| verify_signature(secret, signature.as_deref(), body))
}
