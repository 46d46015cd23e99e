//! Encryption at rest of platform secrets (access tokens) with `WM_SECRET_KEY`.
//!
//! A leaked database dump must not hand out working platform tokens, so each token is
//! sealed with XChaCha20-Poly1305 (RustCrypto's `chacha20poly1305`) under a 32-byte server
//! key and a fresh random 24-byte nonce: the random nonce is safe at that size without a
//! counter, and the tag makes a wrong key or an altered value an error instead of garbage.
//! Stored form: `v1:` + base64(nonce ‖ ciphertext ‖ tag); the prefix leaves room for a key
//! rotation scheme.

use base64::Engine;
use base64::alphabet;
use base64::engine::general_purpose::STANDARD;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use chacha20poly1305::aead::{Aead, KeyInit};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use rand::Rng;

/// The version prefix of stored values.
const PREFIX: &str = "v1:";
/// Nonce and tag sizes of XChaCha20-Poly1305.
const NONCE_LEN: usize = 24;
const TAG_LEN: usize = 16;

/// The server key that seals platform secrets. Its `Debug` never shows the key.
#[derive(Clone)]
pub struct SecretKey([u8; 32]);

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretKey(<redacted>)")
    }
}

/// Why a stored secret could not be opened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecretError {
    /// Not something [`SecretKey::encrypt`] produced.
    #[error("not an encrypted secret (expected v1:<base64>)")]
    Format,
    /// Sealed under another key, or altered since.
    #[error("the secret could not be decrypted (another WM_SECRET_KEY, or an altered value)")]
    Decrypt,
}

/// Base64 decoders that accept padded and unpadded input, for both alphabets.
fn lenient(alphabet: &alphabet::Alphabet) -> GeneralPurpose {
    let config =
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent);
    GeneralPurpose::new(alphabet, config)
}

impl SecretKey {
    /// Reads `WM_SECRET_KEY`: 32 bytes in base64 (standard or URL-safe, padded or not).
    pub fn from_base64(s: &str) -> Result<SecretKey, String> {
        let s = s.trim();
        let bytes = lenient(&alphabet::STANDARD)
            .decode(s)
            .or_else(|_| lenient(&alphabet::URL_SAFE).decode(s))
            .map_err(|_| {
                "WM_SECRET_KEY must be 32 bytes in base64 (not valid base64)".to_owned()
            })?;
        let key: [u8; 32] = bytes.as_slice().try_into().map_err(|_| {
            format!(
                "WM_SECRET_KEY must be 32 bytes in base64 (got {} bytes)",
                bytes.len()
            )
        })?;
        Ok(SecretKey(key))
    }

    /// A new random key (for tests and for printing a key to configure).
    pub fn generate() -> SecretKey {
        SecretKey(rand::rng().random())
    }

    /// The key in standard padded base64, as `WM_SECRET_KEY` takes it.
    pub fn to_base64(&self) -> String {
        STANDARD.encode(self.0)
    }

    fn cipher(&self) -> XChaCha20Poly1305 {
        XChaCha20Poly1305::new(&self.0.into())
    }

    /// Seals `plaintext`: `v1:` + base64(nonce ‖ ciphertext); two calls never give the same
    /// value (random nonce).
    pub fn encrypt(&self, plaintext: &str) -> String {
        let nonce_bytes: [u8; NONCE_LEN] = rand::rng().random();
        let nonce = XNonce::from(nonce_bytes);
        // The AEAD only refuses plaintexts over 256 GiB, which no `&str` here can be.
        let sealed = self
            .cipher()
            .encrypt(&nonce, plaintext.as_bytes())
            .unwrap_or_else(|_| unreachable!("XChaCha20-Poly1305 seals any practical length"));
        let mut out = Vec::with_capacity(NONCE_LEN + sealed.len());
        out.extend_from_slice(&nonce_bytes);
        out.extend_from_slice(&sealed);
        format!("{PREFIX}{}", STANDARD.encode(out))
    }

    /// Opens a value [`SecretKey::encrypt`] produced; a wrong key, an altered value or a
    /// value of another format is an error, never a panic.
    pub fn decrypt(&self, stored: &str) -> Result<String, SecretError> {
        let encoded = stored
            .trim()
            .strip_prefix(PREFIX)
            .ok_or(SecretError::Format)?;
        let raw = STANDARD.decode(encoded).map_err(|_| SecretError::Format)?;
        if raw.len() < NONCE_LEN + TAG_LEN {
            return Err(SecretError::Format);
        }
        let (nonce, sealed) = raw.split_at(NONCE_LEN);
        let nonce: [u8; NONCE_LEN] = nonce.try_into().map_err(|_| SecretError::Format)?;
        let plain = self
            .cipher()
            .decrypt(&XNonce::from(nonce), sealed)
            .map_err(|_| SecretError::Decrypt)?;
        String::from_utf8(plain).map_err(|_| SecretError::Decrypt)
    }
}

#[cfg(test)]
mod tests {
    use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};

    use super::*;

    fn key() -> SecretKey {
        SecretKey::generate()
    }

    #[test]
    fn round_trip() {
        let k = key();
        for plain in ["EAAG-token-123", "", "ünïcødé ✓", &"x".repeat(10_000)] {
            let sealed = k.encrypt(plain);
            assert!(sealed.starts_with("v1:"));
            assert!(!sealed.contains(plain) || plain.is_empty());
            assert_eq!(k.decrypt(&sealed).as_deref(), Ok(plain));
        }
    }

    #[test]
    fn two_encryptions_differ() {
        let k = key();
        assert_ne!(k.encrypt("same"), k.encrypt("same"));
    }

    #[test]
    fn wrong_key_fails() {
        let sealed = key().encrypt("EAAG-token");
        assert_eq!(key().decrypt(&sealed), Err(SecretError::Decrypt));
    }

    #[test]
    fn tampered_fails() {
        let k = key();
        let sealed = k.encrypt("EAAG-token");
        let mut raw = STANDARD.decode(&sealed[3..]).unwrap_or_default();
        for i in [0, NONCE_LEN, raw.len() - 1] {
            raw[i] ^= 1;
            let altered = format!("v1:{}", STANDARD.encode(&raw));
            assert_eq!(k.decrypt(&altered), Err(SecretError::Decrypt), "byte {i}");
            raw[i] ^= 1;
        }
        let truncated = format!("v1:{}", STANDARD.encode(&raw[..raw.len() - 1]));
        assert_eq!(k.decrypt(&truncated), Err(SecretError::Decrypt));
    }

    #[test]
    fn bad_formats_are_errors() {
        let k = key();
        for bad in ["", "v1:", "v1:!!!", "v2:AAAA", "plain-token", "v1:AAAA"] {
            assert_eq!(k.decrypt(bad), Err(SecretError::Format), "{bad:?}");
        }
    }

    #[test]
    fn keys_in_every_base64_form() {
        let bytes = [7u8; 32];
        let k = SecretKey(bytes);
        let sealed = k.encrypt("t");
        for engine in [STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD] {
            let parsed = SecretKey::from_base64(&format!(" {} ", engine.encode(bytes)));
            assert_eq!(parsed.map(|p| p.decrypt(&sealed)), Ok(Ok("t".to_owned())));
        }
        // Bytes that differ between the alphabets ('+/' vs '-_').
        let k = SecretKey([0xfb; 32]);
        let parsed = SecretKey::from_base64(&URL_SAFE_NO_PAD.encode([0xfb; 32]));
        assert_eq!(parsed.map(|p| p.to_base64()), Ok(k.to_base64()));
    }

    #[test]
    fn bad_lengths_are_refused() {
        for n in [0usize, 16, 31, 33, 64] {
            let err = SecretKey::from_base64(&STANDARD.encode(vec![1u8; n])).err();
            let want = format!("WM_SECRET_KEY must be 32 bytes in base64 (got {n} bytes)");
            assert_eq!(err, Some(want));
        }
        let err = SecretKey::from_base64("not base64 at all!").err();
        assert!(err.is_some_and(|e| e.contains("not valid base64")));
    }

    #[test]
    fn debug_is_redacted() {
        let k = SecretKey([0x41; 32]);
        let shown = format!("{k:?}");
        assert_eq!(shown, "SecretKey(<redacted>)");
        assert!(!shown.contains(&k.to_base64()));
    }
}
