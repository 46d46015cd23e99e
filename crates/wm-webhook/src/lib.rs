//! Signing and verification of wm webhook deliveries, usable alone by any receiver.
//!
//! The scheme is Stripe's: the `X-WM-Signature` header is `t=<unix seconds>,v1=<hex>`, where
//! the signature is HMAC-SHA256 over `"<t>.<raw body>"` keyed with the whole secret string
//! (`whsec_…`). Several `v1=` entries may be present while a secret is rotated; any match
//! passes. Comparison is constant-time, and timestamps further than the tolerance (300 s by
//! default) from "now" are refused, which bounds replays.
//!
//! With the `axum` feature, [`extract::VerifiedEvent`] does all of it for an axum receiver,
//! dropping deliveries already seen ([`ReplayGuard`]).
//!
//! ```
//! use wm_webhook::{sign_header, verify};
//! let secret = "whsec_test";
//! let body = br#"{"id":"1","event":"contact.created"}"#;
//! let header = sign_header(secret, 1_795_000_000, body);
//! assert!(verify(secret, &header, body, 1_795_000_010).is_ok());
//! assert!(verify(secret, &header, b"tampered", 1_795_000_010).is_err());
//! ```

#[cfg(feature = "axum")]
pub mod extract;
mod replay;

pub use replay::{InMemoryReplayGuard, ReplayGuard};

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use subtle::ConstantTimeEq;

/// How far a signature's timestamp may be from now, in seconds.
pub const DEFAULT_TOLERANCE_SECS: u64 = 300;

/// Why a delivery was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// The header is not `t=…,v1=…`.
    #[error("malformed signature header")]
    MalformedHeader,
    /// The timestamp is further from now than the tolerance.
    #[error("timestamp outside the tolerance ({age_secs} s from now)")]
    OutsideTolerance {
        /// Distance between the timestamp and now.
        age_secs: u64,
    },
    /// No `v1` entry matches the body and secret.
    #[error("no signature matches")]
    NoMatchingSignature,
}

/// The hex HMAC-SHA256 of `"<timestamp>.<body>"` keyed with the whole secret string.
pub fn sign(secret: &str, timestamp: i64, body: &[u8]) -> String {
    hex::encode(mac(secret, timestamp, body))
}

/// The full header value `t=<timestamp>,v1=<signature>`.
pub fn sign_header(secret: &str, timestamp: i64, body: &[u8]) -> String {
    format!("t={timestamp},v1={}", sign(secret, timestamp, body))
}

fn mac(secret: &str, timestamp: i64, body: &[u8]) -> Vec<u8> {
    // HMAC accepts keys of any length, so this cannot fail.
    let mut m = <Hmac<Sha256> as KeyInit>::new_from_slice(secret.as_bytes())
        .unwrap_or_else(|_| unreachable!("HMAC takes any key length"));
    m.update(timestamp.to_string().as_bytes());
    m.update(b".");
    m.update(body);
    m.finalize().into_bytes().to_vec()
}

/// A parsed `X-WM-Signature` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureHeader {
    /// `t`, unix seconds.
    pub timestamp: i64,
    /// Every `v1` signature, decoded.
    pub signatures: Vec<Vec<u8>>,
}

impl SignatureHeader {
    /// Parses `t=…,v1=…[,v1=…]`; other schemes (`v0=`) are ignored.
    pub fn parse(header: &str) -> Result<SignatureHeader, VerifyError> {
        let mut timestamp = None;
        let mut signatures = Vec::new();
        for part in header.split(',') {
            let (k, v) = part
                .trim()
                .split_once('=')
                .ok_or(VerifyError::MalformedHeader)?;
            match k {
                "t" => timestamp = Some(v.parse().map_err(|_| VerifyError::MalformedHeader)?),
                "v1" => signatures.push(hex::decode(v).map_err(|_| VerifyError::MalformedHeader)?),
                _ => {}
            }
        }
        match timestamp {
            Some(timestamp) if !signatures.is_empty() => Ok(SignatureHeader {
                timestamp,
                signatures,
            }),
            _ => Err(VerifyError::MalformedHeader),
        }
    }
}

/// Verifies a delivery with the default 300 s tolerance. `now` is unix seconds (injected so
/// tests and replays of stored deliveries can choose it).
pub fn verify(secret: &str, header: &str, body: &[u8], now: i64) -> Result<(), VerifyError> {
    verify_with_tolerance(secret, header, body, now, DEFAULT_TOLERANCE_SECS)
}

/// Verifies a delivery against one secret with a chosen tolerance.
pub fn verify_with_tolerance(
    secret: &str,
    header: &str,
    body: &[u8],
    now: i64,
    tolerance_secs: u64,
) -> Result<(), VerifyError> {
    let parsed = SignatureHeader::parse(header)?;
    let age_secs = now.abs_diff(parsed.timestamp);
    if age_secs > tolerance_secs {
        return Err(VerifyError::OutsideTolerance { age_secs });
    }
    let expected = mac(secret, parsed.timestamp, body);
    let matched = parsed
        .signatures
        .iter()
        .fold(subtle::Choice::from(0), |acc, sig| {
            acc | sig.as_slice().ct_eq(&expected)
        });
    if bool::from(matched) {
        Ok(())
    } else {
        Err(VerifyError::NoMatchingSignature)
    }
}

/// A webhook secret whose `Debug` output never shows the value.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret (`whsec_…`).
    pub fn new(s: impl Into<String>) -> Secret {
        Secret(s.into())
    }
    /// The secret itself, to sign or verify with.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(\"whsec_…redacted\")")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const T: i64 = 1_795_000_000;
    const BODY: &[u8] = br#"{"id":"7c1","event":"contact.created","data":{"a":1}}"#;

    #[test]
    fn signs_like_the_spec_says() {
        // HMAC-SHA256("<t>.<body>") keyed with the whole secret string, hex.
        let sig = sign(SECRET, T, BODY);
        assert_eq!(sig.len(), 64);
        assert_eq!(sign_header(SECRET, T, BODY), format!("t={T},v1={sig}"));
        assert_ne!(sign("whsec_other", T, BODY), sig);
        assert_ne!(sign(SECRET, T + 1, BODY), sig);
    }

    #[test]
    fn accepts_a_fresh_genuine_delivery() {
        let h = sign_header(SECRET, T, BODY);
        assert_eq!(verify(SECRET, &h, BODY, T), Ok(()));
        assert_eq!(verify(SECRET, &h, BODY, T + 300), Ok(()));
        assert_eq!(
            verify(SECRET, &h, BODY, T - 300),
            Ok(()),
            "small clock skew is fine"
        );
    }

    #[test]
    fn refuses_tampering_wrong_secret_and_reserialised_json() {
        let h = sign_header(SECRET, T, BODY);
        let mut tampered = BODY.to_vec();
        tampered[10] ^= 1;
        assert_eq!(
            verify(SECRET, &h, &tampered, T),
            Err(VerifyError::NoMatchingSignature)
        );
        assert_eq!(
            verify("whsec_wrong", &h, BODY, T),
            Err(VerifyError::NoMatchingSignature)
        );
        let reserialised = br#"{"id": "7c1", "event": "contact.created", "data": {"a": 1}}"#;
        assert_eq!(
            verify(SECRET, &h, reserialised, T),
            Err(VerifyError::NoMatchingSignature)
        );
        let forged_t = h.replacen(&format!("t={T}"), &format!("t={}", T + 1), 1);
        assert_eq!(
            verify(SECRET, &forged_t, BODY, T),
            Err(VerifyError::NoMatchingSignature)
        );
    }

    #[test]
    fn refuses_old_and_future_timestamps() {
        let h = sign_header(SECRET, T, BODY);
        assert_eq!(
            verify(SECRET, &h, BODY, T + 301),
            Err(VerifyError::OutsideTolerance { age_secs: 301 })
        );
        assert_eq!(
            verify(SECRET, &h, BODY, T - 301),
            Err(VerifyError::OutsideTolerance { age_secs: 301 })
        );
        assert_eq!(
            verify_with_tolerance(SECRET, &h, BODY, T + 301, 600),
            Ok(())
        );
    }

    #[test]
    fn any_v1_entry_may_match_during_rotation() {
        let old = sign("whsec_old", T, BODY);
        let new = sign(SECRET, T, BODY);
        let h = format!("t={T},v1={old},v1={new}");
        assert_eq!(verify(SECRET, &h, BODY, T), Ok(()));
        assert_eq!(verify("whsec_old", &h, BODY, T), Ok(()));
        let with_v0 = format!("t={T},v0=abcd,v1={new}");
        assert_eq!(verify(SECRET, &with_v0, BODY, T), Ok(()));
    }

    #[test]
    fn malformed_headers() {
        for h in ["", "t=1", "v1=abcd", "t=x,v1=abcd", "t=1,v1=zz", "garbage"] {
            assert_eq!(
                verify(SECRET, h, BODY, T),
                Err(VerifyError::MalformedHeader),
                "{h:?}"
            );
        }
    }

    #[test]
    fn secrets_are_redacted_in_debug() {
        let s = Secret::new(SECRET);
        assert!(!format!("{s:?}").contains("MfKQ"));
        assert_eq!(s.expose(), SECRET);
    }
}
