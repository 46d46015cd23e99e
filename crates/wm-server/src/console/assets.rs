//! The console's stylesheet and script, compiled into the binary (no CDN: the console works
//! with no internet) and served under a name that carries their hash, so browsers keep
//! them for a year and a new build is fetched at once.

use std::sync::LazyLock;

use axum::extract::Path;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

/// One compiled-in file.
pub struct Asset {
    stem: &'static str,
    ext: &'static str,
    mime: &'static str,
    body: &'static str,
    path: LazyLock<String>,
}

impl Asset {
    /// Where the page links it (`/console/assets/console-<hash>.css`).
    pub fn path(&self) -> &str {
        &self.path
    }
}

macro_rules! asset {
    ($stem:literal, $ext:literal, $mime:literal) => {
        Asset {
            stem: $stem,
            ext: $ext,
            mime: $mime,
            body: include_str!(concat!("assets/", $stem, ".", $ext)),
            path: LazyLock::new(|| {
                let body = include_str!(concat!("assets/", $stem, ".", $ext));
                let hash = hex::encode(Sha256::digest(body.as_bytes()));
                format!("/console/assets/{}-{}.{}", $stem, &hash[..12], $ext)
            }),
        }
    };
}

/// The stylesheet.
pub static CSS: Asset = asset!("console", "css", "text/css; charset=utf-8");
/// The script: live parts and the import's column mapping.
pub static JS: Asset = asset!("console", "js", "text/javascript; charset=utf-8");

/// `GET /console/assets/{file}`.
pub async fn serve(Path(file): Path<String>) -> Response {
    for asset in [&CSS, &JS] {
        let wanted = format!("/console/assets/{file}");
        if asset.path() == wanted {
            return (
                [
                    (header::CONTENT_TYPE, HeaderValue::from_static(asset.mime)),
                    (
                        header::CACHE_CONTROL,
                        HeaderValue::from_static("public, max-age=31536000, immutable"),
                    ),
                    (
                        header::X_CONTENT_TYPE_OPTIONS,
                        HeaderValue::from_static("nosniff"),
                    ),
                ],
                asset.body,
            )
                .into_response();
        }
        // An older build's name: the current file, not cached for long.
        if file.starts_with(asset.stem) && file.ends_with(asset.ext) {
            return (
                [
                    (header::CONTENT_TYPE, HeaderValue::from_static(asset.mime)),
                    (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
                ],
                asset.body,
            )
                .into_response();
        }
    }
    (StatusCode::NOT_FOUND, "no such file").into_response()
}
