//! Visitor tokens: who a website chat's visitor is, signed with the chat's identity secret
//! so no one writes as another visitor (or reads their chat) by guessing: `payload.mac`,
//! both base64url, the payload `{c: chat, p: person, e: expiry}`. A person is `v.<uuid>`
//! (an anonymous visitor) or `u.<identifier>` (one the site vouched for with the
//! identifier's HMAC). Rotating the secret ends every token.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use hmac::{Hmac, KeyInit, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;
use uuid::Uuid;

/// How long a token lasts (the widget keeps it in the browser).
pub const TOKEN_TTL_MS: i64 = 180 * 24 * 3_600_000;

#[derive(Serialize, Deserialize)]
struct Claims {
    c: Uuid,
    p: String,
    e: i64,
}

fn mac(secret: &str) -> Option<Hmac<Sha256>> {
    <Hmac<Sha256> as KeyInit>::new_from_slice(secret.as_bytes()).ok()
}

/// A token for `person` on chat `chat`, valid from `now` for [`TOKEN_TTL_MS`].
pub fn issue(secret: &str, chat: Uuid, person: &str, now: i64) -> String {
    let claims = Claims {
        c: chat,
        p: person.to_owned(),
        e: now + TOKEN_TTL_MS,
    };
    let payload = B64.encode(serde_json::to_vec(&claims).unwrap_or_default());
    let signature = match mac(secret) {
        Some(mut m) => {
            m.update(payload.as_bytes());
            B64.encode(m.finalize().into_bytes())
        }
        None => String::new(),
    };
    format!("{payload}.{signature}")
}

/// The person a token names on chat `chat`, when it is signed with `secret` and not
/// expired at `now`.
pub fn read(secret: &str, chat: Uuid, token: &str, now: i64) -> Option<String> {
    let (payload, signature) = token.split_once('.')?;
    let signature = B64.decode(signature).ok()?;
    let mut m = mac(secret)?;
    m.update(payload.as_bytes());
    m.verify_slice(&signature).ok()?;
    let claims: Claims = serde_json::from_slice(&B64.decode(payload).ok()?).ok()?;
    (claims.c == chat && claims.e > now).then_some(claims.p)
}

/// Whether `hash` (hex) is the HMAC-SHA256 of `identifier` with `secret`, in constant time.
pub fn vouched(secret: &str, identifier: &str, hash: &str) -> bool {
    let Ok(given) = hex::decode(hash.trim()) else {
        return false;
    };
    let Some(mut m) = mac(secret) else {
        return false;
    };
    m.update(identifier.as_bytes());
    m.verify_slice(&given).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_names_its_person_on_its_chat_until_it_expires() {
        let chat = Uuid::now_v7();
        let t = issue("s3cret", chat, "v.123", 1_000);
        assert_eq!(read("s3cret", chat, &t, 2_000).as_deref(), Some("v.123"));
        assert_eq!(read("other", chat, &t, 2_000), None);
        assert_eq!(read("s3cret", Uuid::now_v7(), &t, 2_000), None);
        assert_eq!(read("s3cret", chat, &t, 1_000 + TOKEN_TTL_MS), None);
        let forged = format!(
            "{}.{}",
            B64.encode(br#"{"c":"x","p":"u.admin","e":9}"#),
            "AAAA"
        );
        assert_eq!(read("s3cret", chat, &forged, 2_000), None);
        assert_eq!(read("s3cret", chat, "garbage", 2_000), None);
    }

    #[test]
    fn only_the_secrets_hash_vouches_for_an_identifier() {
        let mut m = mac("s3cret").unwrap();
        m.update(b"user-42");
        let good = hex::encode(m.finalize().into_bytes());
        assert!(vouched("s3cret", "user-42", &good));
        assert!(!vouched("s3cret", "user-43", &good));
        assert!(!vouched("other", "user-42", &good));
        assert!(!vouched("s3cret", "user-42", "zz"));
    }
}
