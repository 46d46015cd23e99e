//! Where inbound media files are kept: a directory by default (`WM_MEDIA_DIR`), or an
//! S3-compatible bucket (`WM_MEDIA_S3_BUCKET`, with the standard `AWS_*` variables for the
//! endpoint, region and credentials) so every replica reads what another fetched. Never
//! the database: a thread of photos would swell every backup and every page of the table.
//!
//! The store is [`object_store`]'s: one well-kept interface for a directory and every
//! S3-compatible service, so wm writes no file or S3 code of its own.

use std::path::PathBuf;
use std::sync::Arc;

use object_store::aws::AmazonS3Builder;
use object_store::local::LocalFileSystem;
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};

/// Where media goes (`WM_MEDIA_*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MediaSettings {
    /// A directory (created if missing), when no bucket is set.
    pub dir: PathBuf,
    /// An S3-compatible bucket; the endpoint, region and credentials come from `AWS_*`.
    pub s3_bucket: Option<String>,
    /// The largest file fetched (Meta's largest media, a document, is 100 MB).
    pub max_bytes: u64,
}

impl Default for MediaSettings {
    fn default() -> Self {
        MediaSettings {
            dir: std::env::temp_dir().join("wm-media"),
            s3_bucket: None,
            max_bytes: 100 * 1024 * 1024,
        }
    }
}

/// The media store.
#[derive(Clone)]
pub struct MediaStore {
    store: Arc<dyn ObjectStore>,
    what: String,
}

impl std::fmt::Debug for MediaStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MediaStore")
            .field("at", &self.what)
            .finish()
    }
}

impl MediaStore {
    /// Opens the store the settings name.
    pub fn open(s: &MediaSettings) -> anyhow::Result<MediaStore> {
        if let Some(bucket) = &s.s3_bucket {
            // reqwest is built without a bundled crypto backend; ring is the process default.
            let _ = rustls::crypto::ring::default_provider().install_default();
            let store = AmazonS3Builder::from_env()
                .with_bucket_name(bucket)
                .build()
                .map_err(|e| anyhow::anyhow!("the media bucket {bucket:?}: {e}"))?;
            return Ok(MediaStore {
                store: Arc::new(store),
                what: format!("s3://{bucket}"),
            });
        }
        std::fs::create_dir_all(&s.dir).map_err(|e| {
            anyhow::anyhow!(
                "the media directory {} (WM_MEDIA_DIR) cannot be created: {e}",
                s.dir.display()
            )
        })?;
        let store = LocalFileSystem::new_with_prefix(&s.dir).map_err(|e| {
            anyhow::anyhow!(
                "the media directory {} (WM_MEDIA_DIR): {e}",
                s.dir.display()
            )
        })?;
        Ok(MediaStore {
            store: Arc::new(store),
            what: s.dir.display().to_string(),
        })
    }

    /// A store in memory, when the configured one cannot be opened by a constructor that
    /// cannot fail (the server checks the real one at start-up).
    pub fn in_memory() -> MediaStore {
        MediaStore {
            store: Arc::new(InMemory::new()),
            what: "memory".into(),
        }
    }

    /// Writes a file under `key`.
    pub async fn put(&self, key: &str, bytes: Vec<u8>) -> anyhow::Result<()> {
        self.store
            .put(&Path::from(key), PutPayload::from(bytes))
            .await
            .map_err(|e| anyhow::anyhow!("media {key} not written to {}: {e}", self.what))?;
        Ok(())
    }

    /// Reads the file under `key`; `None` when it is not there.
    pub async fn get(&self, key: &str) -> anyhow::Result<Option<axum::body::Bytes>> {
        match self.store.get(&Path::from(key)).await {
            Ok(r) => Ok(Some(r.bytes().await.map_err(|e| {
                anyhow::anyhow!("media {key} not read from {}: {e}", self.what)
            })?)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(anyhow::anyhow!(
                "media {key} not read from {}: {e}",
                self.what
            )),
        }
    }
}
