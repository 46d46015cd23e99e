//! Media held by the fake: files users "sent" (registered by tests) and files the
//! business uploaded, with the Graph media lifetimes, short-lived download URLs and
//! knobs to make downloads fail.
//!
//! Why a separate store: media traffic (retrievals, downloads) must never contend with
//! the send path's lock, and the bytes can be large. Lock order, when both are needed:
//! the registry (`state::Shared::lock`) is never held while this one is taken.
//!
//! Documented behaviour followed (Media reference,
//! <https://developers.facebook.com/docs/whatsapp/cloud-api/reference/media>):
//! media ids are numeric strings; uploaded media persists 30 days; the URL from
//! `GET /{media-id}` is valid 5 minutes and needs the access token; the retrieval
//! answer reports `sha256` as the hex digest while webhooks carry the base64 digest.
//! Media received from users is kept 7 days here (the lifetime wm is told to expect).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use chrono::{DateTime, Utc};
use rand::Rng;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::FakeGraph;
use crate::model::InboundKind;

/// How long media received from users can be retrieved.
pub const INBOUND_MEDIA_LIFETIME: Duration = Duration::from_secs(7 * 24 * 3600);
/// How long uploaded media persists (Meta: 30 days unless deleted earlier).
pub const UPLOADED_MEDIA_LIFETIME: Duration = Duration::from_secs(30 * 24 * 3600);
/// Default lifetime of a download URL (Meta: 5 minutes).
pub const DEFAULT_MEDIA_URL_TTL: Duration = Duration::from_secs(300);

/// A file to hold as if a WhatsApp user had sent it to a business number.
///
/// In the control API (`POST /_fake/media`) `bytes` is a base64 string.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MediaSpec {
    /// The business number that owns it; only that number's token can read it.
    pub phone_number_id: String,
    /// The file's content.
    #[serde(with = "b64")]
    pub bytes: Vec<u8>,
    /// Its MIME type, e.g. `image/jpeg`.
    pub mime_type: String,
    /// Its file name (documents have one).
    #[serde(default)]
    pub filename: Option<String>,
}

/// Where a held file came from; decides its lifetime.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MediaOrigin {
    /// Sent by a user ([`FakeGraph::add_media`]): 7 days.
    Inbound,
    /// Uploaded by the business (`POST /{phone-number-id}/media`): 30 days.
    Uploaded,
}

/// What the fake knows about a held file, for building matching inbound messages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MediaInfo {
    /// The media id (a numeric string).
    pub id: String,
    /// The owning business number.
    pub phone_number_id: String,
    /// Its MIME type.
    pub mime_type: String,
    /// Hex SHA-256, as `GET /{media-id}` reports it.
    pub sha256_hex: String,
    /// Base64 SHA-256, as webhooks report it.
    pub sha256_b64: String,
    /// Size in bytes.
    pub file_size: u64,
    /// Its file name, if any.
    pub filename: Option<String>,
    /// Inbound or uploaded.
    pub origin: MediaOrigin,
    /// When it stops being retrievable.
    pub expires_at: DateTime<Utc>,
    /// Already expired (by time or [`FakeGraph::expire_media`]).
    pub expired: bool,
}

/// How often the media endpoints were hit, so tests can assert how often wm fetched.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MediaStats {
    /// `GET /{version}/{media-id}` requests (answered or refused).
    pub retrievals: usize,
    /// Requests to download URLs, including injected failures and refusals.
    pub downloads: usize,
    /// `POST /{version}/{phone-number-id}/media` requests (accepted or refused).
    pub uploads: usize,
}

/// One held file.
#[derive(Debug)]
pub(crate) struct Stored {
    pub info: MediaInfo,
    pub bytes: Bytes,
    pub expires: Instant,
    pub forced_expired: bool,
}

impl Stored {
    pub(crate) fn is_expired(&self, now: Instant) -> bool {
        self.forced_expired || now >= self.expires
    }

    fn snapshot(&self, now: Instant) -> MediaInfo {
        MediaInfo {
            expired: self.is_expired(now),
            ..self.info.clone()
        }
    }
}

/// A download URL handed out by a retrieval.
#[derive(Debug)]
pub(crate) struct Grant {
    pub media_id: String,
    pub expires: Instant,
}

/// Everything media-related, behind its own lock.
#[derive(Debug)]
pub(crate) struct MediaStore {
    pub items: HashMap<String, Stored>,
    /// Download URLs by their `hash` parameter.
    pub grants: HashMap<String, Grant>,
    pub url_ttl: Duration,
    /// The next N downloads answer 500.
    pub fail_downloads: usize,
    /// The next N downloads lose their connection.
    pub drop_downloads: usize,
    pub stats: MediaStats,
}

impl Default for MediaStore {
    fn default() -> Self {
        Self {
            items: HashMap::new(),
            grants: HashMap::new(),
            url_ttl: DEFAULT_MEDIA_URL_TTL,
            fail_downloads: 0,
            drop_downloads: 0,
            stats: MediaStats::default(),
        }
    }
}

impl MediaStore {
    /// Stores a file under a fresh numeric id and returns its description.
    pub(crate) fn insert(&mut self, spec: MediaSpec, origin: MediaOrigin) -> MediaInfo {
        let mut rng = rand::rng();
        let id = loop {
            let id = rng
                .random_range(1_000_000_000_000_000u64..10_000_000_000_000_000)
                .to_string();
            if !self.items.contains_key(&id) {
                break id;
            }
        };
        let digest = Sha256::digest(&spec.bytes);
        let lifetime = match origin {
            MediaOrigin::Inbound => INBOUND_MEDIA_LIFETIME,
            MediaOrigin::Uploaded => UPLOADED_MEDIA_LIFETIME,
        };
        let expires_at = Utc::now()
            + chrono::Duration::from_std(lifetime).unwrap_or_else(|_| chrono::Duration::days(7));
        let info = MediaInfo {
            id: id.clone(),
            phone_number_id: spec.phone_number_id,
            mime_type: spec.mime_type,
            sha256_hex: hex::encode(digest),
            sha256_b64: STANDARD.encode(digest),
            file_size: spec.bytes.len() as u64,
            filename: spec.filename,
            origin,
            expires_at,
            expired: false,
        };
        self.items.insert(
            id,
            Stored {
                info: info.clone(),
                bytes: Bytes::from(spec.bytes),
                expires: Instant::now() + lifetime,
                forced_expired: false,
            },
        );
        info
    }

    /// A live (not expired) file.
    pub(crate) fn live(&self, media_id: &str) -> Option<&Stored> {
        self.items
            .get(media_id)
            .filter(|m| !m.is_expired(Instant::now()))
    }

    /// Mints a download URL token for a file; returns `(hash, unix expiry)`.
    pub(crate) fn grant(&mut self, media_id: &str) -> (String, i64) {
        let now = Instant::now();
        self.grants.retain(|_, g| g.expires > now);
        let hash = format!(
            "AT{}",
            URL_SAFE_NO_PAD.encode(rand::rng().random::<[u8; 18]>())
        );
        self.grants.insert(
            hash.clone(),
            Grant {
                media_id: media_id.to_owned(),
                expires: now + self.url_ttl,
            },
        );
        let ttl = i64::try_from(self.url_ttl.as_secs()).unwrap_or(i64::MAX / 2);
        (hash, Utc::now().timestamp().saturating_add(ttl))
    }
}

impl FakeGraph {
    /// Holds a file as if a user had sent it to `spec.phone_number_id` (retrievable for
    /// 7 days); returns its media id. Put [`FakeGraph::media_info`]'s `id`, `mime_type`
    /// and `sha256_b64` into an inbound media message (or use [`InboundKind::image_of`]).
    pub fn add_media(&self, spec: MediaSpec) -> String {
        self.shared.media().insert(spec, MediaOrigin::Inbound).id
    }

    /// What the fake holds under `media_id` (also when expired; `None` once deleted).
    pub fn media_info(&self, media_id: &str) -> Option<MediaInfo> {
        self.shared
            .media()
            .items
            .get(media_id)
            .map(|m| m.snapshot(Instant::now()))
    }

    /// The bytes held under `media_id` (to check what an upload stored).
    pub fn media_bytes(&self, media_id: &str) -> Option<Vec<u8>> {
        self.shared
            .media()
            .items
            .get(media_id)
            .map(|m| m.bytes.to_vec())
    }

    /// Ends a file's lifetime now, as 7 (or 30) days passing would: retrievals answer
    /// 100/33 and its download URLs 404. Returns false for an unknown id.
    pub fn expire_media(&self, media_id: &str) -> bool {
        match self.shared.media().items.get_mut(media_id) {
            Some(m) => {
                m.forced_expired = true;
                true
            }
            None => false,
        }
    }

    /// Sets how long download URLs stay valid (Meta: 5 minutes); applies to new URLs.
    pub fn set_media_url_ttl(&self, ttl: Duration) {
        self.shared.media().url_ttl = ttl;
    }

    /// The next `n` download requests answer HTTP 500 (to test download retries).
    pub fn fail_media_downloads(&self, n: usize) {
        self.shared.media().fail_downloads = n;
    }

    /// The next `n` download requests lose their connection without any response.
    pub fn drop_media_downloads(&self, n: usize) {
        self.shared.media().drop_downloads = n;
    }

    /// How often media was retrieved, downloaded and uploaded.
    pub fn media_requests(&self) -> MediaStats {
        self.shared.media().stats
    }
}

impl InboundKind {
    /// An image message carrying held media (id, MIME type and base64 hash match it).
    pub fn image_of(media: &MediaInfo, caption: Option<&str>) -> Self {
        Self::Image {
            media_id: media.id.clone(),
            mime_type: media.mime_type.clone(),
            sha256: media.sha256_b64.clone(),
            caption: caption.map(str::to_owned),
        }
    }

    /// A document message carrying held media (its file name included).
    pub fn document_of(media: &MediaInfo, caption: Option<&str>) -> Self {
        Self::Document {
            media_id: media.id.clone(),
            mime_type: media.mime_type.clone(),
            sha256: media.sha256_b64.clone(),
            filename: media.filename.clone(),
            caption: caption.map(str::to_owned),
        }
    }

    /// An audio message (a voice note when `voice`) carrying held media.
    pub fn audio_of(media: &MediaInfo, voice: bool) -> Self {
        Self::Audio {
            media_id: media.id.clone(),
            mime_type: media.mime_type.clone(),
            sha256: media.sha256_b64.clone(),
            voice,
        }
    }

    /// A video message carrying held media.
    pub fn video_of(media: &MediaInfo, caption: Option<&str>) -> Self {
        Self::Video {
            media_id: media.id.clone(),
            mime_type: media.mime_type.clone(),
            sha256: media.sha256_b64.clone(),
            caption: caption.map(str::to_owned),
        }
    }

    /// A sticker message carrying held media.
    pub fn sticker_of(media: &MediaInfo, animated: bool) -> Self {
        Self::Sticker {
            media_id: media.id.clone(),
            mime_type: media.mime_type.clone(),
            sha256: media.sha256_b64.clone(),
            animated,
        }
    }
}

/// `bytes` as a base64 string in JSON (the control API's form).
mod b64 {
    use base64::Engine;
    use base64::engine::general_purpose::STANDARD;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&STANDARD.encode(bytes))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(d)?;
        STANDARD
            .decode(text.trim())
            .map_err(serde::de::Error::custom)
    }
}
