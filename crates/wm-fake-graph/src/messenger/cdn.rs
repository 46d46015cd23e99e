//! The CDN-like URLs the fake serves files at: attachments people send (webhook
//! `payload.url`) and echoes of stored attachments.
//!
//! Shapes: Messenger files get an fbcdn-style path
//! `/fbcdn/v/t1.15752-9/<asset>_n.<ext>?_nc_cat=1&oh=<signature>&oe=<expiry, hex unix
//! seconds>` and Instagram files Meta's lookaside shape
//! `/ig_messaging_cdn/?asset_id=<asset>&signature=<signature>` (the `ig_messaging_cdn`
//! URL seen in Meta's share-payload example). Neither needs a token, as CDN URLs do not.
//! Lifetime: Meta documents none for Messenger and only "privacy-aware … will not return
//! the media when the content is deleted or expired" for Instagram; the fake keeps a
//! file for [`crate::FakeGraph::set_messenger_cdn_ttl`] (default one hour, assumed) and
//! answers an expired URL 403 `URL signature expired` and an unknown one 404.

use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use chrono::Utc;
use rand::Rng;

use super::body::query_param;
use super::model::Platform;
use super::store::{CdnFile, Store, numeric_id};
use crate::FakeGraph;

fn extension(mime: &str) -> &'static str {
    match mime.split(';').next().unwrap_or_default().trim() {
        "image/png" => "png",
        "image/jpeg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "video/mp4" => "mp4",
        "audio/mpeg" => "mp3",
        "audio/mp4" => "m4a",
        "audio/aac" => "aac",
        "audio/wav" => "wav",
        "audio/ogg" => "ogg",
        "application/pdf" => "pdf",
        _ => "bin",
    }
}

fn signature() -> String {
    hex::encode(rand::rng().random::<[u8; 16]>())
}

/// Holds `bytes` and returns the URL serving them on the fake at `base`.
pub(crate) fn publish(
    store: &mut Store,
    base: &str,
    platform: Platform,
    mime: &str,
    bytes: Vec<u8>,
) -> String {
    let asset = numeric_id(17);
    let sig = signature();
    let ttl =
        chrono::Duration::from_std(store.cdn_ttl).unwrap_or_else(|_| chrono::Duration::hours(1));
    let expires = Utc::now() + ttl;
    let url = match platform {
        Platform::Messenger => format!(
            "{base}/fbcdn/v/t1.15752-9/{asset}_n.{}?_nc_cat=1&oh={sig}&oe={:X}",
            extension(mime),
            expires.timestamp()
        ),
        Platform::Instagram => {
            format!("{base}/ig_messaging_cdn/?asset_id={asset}&signature={sig}")
        }
    };
    store.cdn.insert(
        asset,
        CdnFile {
            signature: sig,
            mime: mime.to_owned(),
            bytes,
            expires,
        },
    );
    url
}

fn serve(fake: &FakeGraph, asset: &str, sig: Option<&str>) -> Response {
    let store = fake.msgr();
    let Some(file) = store.cdn.get(asset) else {
        return (StatusCode::NOT_FOUND, "Not Found").into_response();
    };
    if sig != Some(file.signature.as_str()) {
        return (StatusCode::FORBIDDEN, "Bad URL hash").into_response();
    }
    if file.expires <= Utc::now() {
        return (StatusCode::FORBIDDEN, "URL signature expired").into_response();
    }
    let ct = HeaderValue::from_str(&file.mime)
        .unwrap_or_else(|_| HeaderValue::from_static("application/octet-stream"));
    ([(header::CONTENT_TYPE, ct)], file.bytes.clone()).into_response()
}

/// `GET /fbcdn/v/{dir}/{file}?oh=`.
pub(crate) async fn messenger_file(
    State(fake): State<FakeGraph>,
    Path((_dir, file)): Path<(String, String)>,
    RawQuery(query): RawQuery,
) -> Response {
    let asset = file.split('_').next().unwrap_or_default();
    serve(&fake, asset, query_param(query.as_deref(), "oh").as_deref())
}

/// `GET /ig_messaging_cdn/?asset_id=&signature=`.
pub(crate) async fn instagram_file(
    State(fake): State<FakeGraph>,
    RawQuery(query): RawQuery,
) -> Response {
    let q = query.as_deref();
    let asset = query_param(q, "asset_id").unwrap_or_default();
    serve(&fake, &asset, query_param(q, "signature").as_deref())
}
