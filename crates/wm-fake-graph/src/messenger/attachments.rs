//! The Attachment Upload API: `POST /{version}/{page_id|me}/message_attachments`.
//!
//! Bodies (saving-assets page; IG-FB attachment-upload page): multipart with a `message`
//! field (`{"attachment":{"type":…,"payload":{"is_reusable":true}}}`) and a `filedata`
//! file part, or JSON/form with `payload.url`; Instagram uploads add
//! `"platform":"instagram"`. Answer: `{"attachment_id":"<id>"}`. Limits: "Max file size
//! is 8 MB for images and 25 MB for all other file types" (binary megabytes assumed),
//! 100/2018109 beyond; a file whose type contradicts the declared `type` is 100/2018047.
//! Instagram formats (upload page): image png/jpeg/gif; video mp4/ogg/avi/mov/webm;
//! audio aac/m4a/wav/mp4; file pdf. An attachment id is private to the Page that
//! uploaded it (100/2018074 for anyone else).
//!
//! URL uploads: Meta fetches the URL ("Failed to fetch the file from the url",
//! 100/2018008). The fake fetches only loopback URLs (the machine it runs on); any other
//! URL is accepted unfetched and stored without bytes (an assumption that keeps tests
//! off the network).

use std::time::Duration;

use axum::Json;
use axum::extract::{Path, Request, State};
use axum::http::Uri;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::body::{self, mime_from_name};
use super::errors::{self, param};
use super::model::Platform;
use super::store::{Attachment, Store, numeric_id};
use super::{auth, routes::is_version};
use crate::FakeGraph;
use crate::errors::GraphError;

const MIB: usize = 1024 * 1024;
/// Largest image: 8 MB.
pub const IMAGE_LIMIT: usize = 8 * MIB;
/// Largest audio, video or file: 25 MB.
pub const OTHER_LIMIT: usize = 25 * MIB;

fn base_mime(mime: &str) -> String {
    mime.split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

fn instagram_format_ok(kind: &str, mime: &str) -> bool {
    let allowed: &[&str] = match kind {
        "image" => &["image/png", "image/jpeg", "image/gif"],
        "video" => &[
            "video/mp4",
            "video/ogg",
            "video/x-msvideo",
            "video/avi",
            "video/quicktime",
            "video/webm",
        ],
        "audio" => &[
            "audio/aac",
            "audio/mp4",
            "audio/x-m4a",
            "audio/m4a",
            "audio/wav",
            "audio/x-wav",
            "audio/wave",
            "video/mp4",
        ],
        "file" => &["application/pdf"],
        _ => return true,
    };
    allowed.contains(&mime)
}

/// Size and type checks of a file to attach as `kind`.
pub(crate) fn check_file(
    kind: &str,
    mime: &str,
    len: usize,
    platform: Platform,
) -> Result<(), GraphError> {
    let limit = if kind == "image" {
        IMAGE_LIMIT
    } else {
        OTHER_LIMIT
    };
    if len > limit {
        return Err(errors::attachment_too_large());
    }
    let base = base_mime(mime);
    let ok = match platform {
        Platform::Instagram => instagram_format_ok(kind, &base),
        Platform::Messenger => match kind {
            "image" => base.starts_with("image/"),
            "video" => base.starts_with("video/"),
            // "the Content-Type … must use type audio".
            "audio" => base.starts_with("audio/"),
            _ => true,
        },
    };
    if ok {
        Ok(())
    } else {
        Err(errors::type_mismatch())
    }
}

/// Stores an attachment of `page_id`; its new id.
pub(crate) fn store_attachment(store: &mut Store, attachment: Attachment) -> String {
    let id = numeric_id(16);
    store.attachments.insert(id.clone(), attachment);
    id
}

fn is_loopback(url: &reqwest::Url) -> bool {
    let host = url.host_str().unwrap_or_default();
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Fetches a loopback URL as Meta fetches upload URLs: `Some((bytes, mime))`, `None`
/// for a URL the fake does not fetch, 100/2018008 when it cannot be fetched.
pub(crate) async fn fetch(
    fake: &FakeGraph,
    url: &str,
    kind: &str,
) -> Result<Option<(Vec<u8>, String)>, GraphError> {
    let parsed = reqwest::Url::parse(url)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .ok_or_else(|| param("Param message[attachment][payload][url] must be a valid URL"))?;
    if !is_loopback(&parsed) {
        return Ok(None);
    }
    // "Timeout is 75 seconds for videos and 10 seconds for all other file types."
    let timeout = Duration::from_secs(if kind == "video" { 75 } else { 10 });
    let resp = fake
        .shared
        .http
        .get(parsed)
        .timeout(timeout)
        .send()
        .await
        .map_err(|_| errors::fetch_failed())?;
    if !resp.status().is_success() {
        return Err(errors::fetch_failed());
    }
    let mime = resp
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let bytes = resp.bytes().await.map_err(|_| errors::fetch_failed())?;
    let mime = mime
        .or_else(|| mime_from_name(url.split('?').next().unwrap_or_default()).map(str::to_owned))
        .unwrap_or_else(|| "application/octet-stream".to_owned());
    Ok(Some((bytes.to_vec(), mime)))
}

/// `POST /{version}/{page_id|me}/message_attachments`.
pub(crate) async fn upload(
    State(fake): State<FakeGraph>,
    Path((version, id)): Path<(String, String)>,
    uri: Uri,
    req: Request,
) -> Response {
    if !is_version(&version) {
        return crate::server::unknown_path(uri).await;
    }
    match upload_inner(&fake, &id, req).await {
        Ok(attachment_id) => Json(json!({ "attachment_id": attachment_id })).into_response(),
        Err(e) => e.into_response(),
    }
}

async fn upload_inner(fake: &FakeGraph, id: &str, req: Request) -> Result<String, GraphError> {
    let headers = req.headers().clone();
    let query = req.uri().query().map(str::to_owned);
    let params = body::read(req).await;
    let token = match &params {
        Ok(p) => body::token(&headers, query.as_deref(), p),
        Err(_) => body::token(&headers, query.as_deref(), &body::Params::default()),
    };
    let page = auth::page_for_path(&fake.msgr(), token.as_deref(), id, "post")?;
    let params = params?;
    if params.too_large {
        return Err(errors::attachment_too_large());
    }
    let platform = match params.str("platform") {
        Some(p) if p.eq_ignore_ascii_case("instagram") => {
            if page.instagram_id.is_none() {
                return Err(errors::page_not_linked());
            }
            Platform::Instagram
        }
        _ => Platform::Messenger,
    };
    let Some(att) = params
        .fields
        .get("message")
        .and_then(|m| m.get("attachment"))
    else {
        return Err(param("The parameter message[attachment] is required"));
    };
    let kind = att
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_ascii_lowercase();
    if !matches!(kind.as_str(), "image" | "video" | "audio" | "file") {
        return Err(param(
            "Param message[attachment][type] must be one of {image, video, audio, file}",
        ));
    }
    let url = att
        .get("payload")
        .and_then(|p| p.get("url"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let (bytes, mime, url) = if let Some(file) = params.file {
        let mime = file
            .mime
            .or_else(|| {
                file.filename
                    .as_deref()
                    .and_then(mime_from_name)
                    .map(str::to_owned)
            })
            .unwrap_or_else(|| "application/octet-stream".to_owned());
        (file.bytes, mime, None)
    } else if let Some(url) = url {
        match fetch(fake, &url, &kind).await? {
            Some((bytes, mime)) => (bytes, mime, Some(url)),
            None => {
                let mime = mime_from_name(url.split('?').next().unwrap_or_default())
                    .unwrap_or("application/octet-stream");
                (Vec::new(), mime.to_owned(), Some(url))
            }
        }
    } else {
        return Err(param(
            "Param message[attachment][payload] must have a url, or the request a filedata part",
        ));
    };
    if !(url.is_some() && bytes.is_empty()) {
        check_file(&kind, &mime, bytes.len(), platform)?;
    }
    let attachment = Attachment {
        page_id: page.page_id.clone(),
        platform,
        kind,
        mime,
        bytes,
        url,
    };
    Ok(store_attachment(&mut fake.msgr(), attachment))
}
