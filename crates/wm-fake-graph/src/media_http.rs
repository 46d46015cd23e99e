//! The media endpoints: `GET`/`DELETE /{version}/{media-id}`, the download URL
//! (`GET /whatsapp_business/attachments/?mid&ext&hash`, shaped like Meta's lookaside
//! URL) and `POST /{version}/{phone-number-id}/media` (multipart upload).
//!
//! Why these answers: Graph checks the token first (401, code 190), then whether the
//! object can be seen with it; media that is unknown, deleted, expired, owned by another
//! number or filtered out by `?phone_number_id=` all look the same from outside (400,
//! code 100, subcode 33). The download URL answers 401 without the owner's token and 404
//! once it (or the media) has expired, after which a client must retrieve a new URL.
//! Upload validation follows "Supported Media Types" (types and per-type size limits,
//! sizes in binary units) and reports a refused file with 131053 "Media upload error".

use std::time::Instant;

use axum::Json;
use axum::body::Bytes;
use axum::extract::multipart::{MultipartError, MultipartRejection};
use axum::extract::{ConnectInfo, Multipart, Path, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::FakeGraph;
use crate::errors::GraphError;
use crate::media::{MediaOrigin, MediaSpec};
use crate::send::{AuthCheck, check_token, request_token};
use crate::server::{ConnHandle, unknown_path};

const KIB: usize = 1024;
const MIB: usize = 1024 * 1024;

/// Request bodies accepted by the upload route: the largest file (a 100 MB document)
/// plus room for the multipart framing.
pub(crate) const MAX_UPLOAD_BODY: usize = 101 * MIB;

/// The MIME types of "Supported Media Types", in the order the error lists them.
const SUPPORTED: &[&str] = &[
    "audio/aac",
    "audio/amr",
    "audio/mpeg",
    "audio/mp4",
    "audio/ogg",
    "text/plain",
    "application/pdf",
    "application/vnd.ms-powerpoint",
    "application/msword",
    "application/vnd.ms-excel",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "image/jpeg",
    "image/png",
    "image/webp",
    "video/3gpp",
    "video/mp4",
];

fn query_param(query: Option<&str>, key: &str) -> Option<String> {
    query.and_then(|q| {
        form_urlencoded::parse(q.as_bytes())
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.into_owned())
    })
}

/// `v23.0`-like: a plain `GET /{a}/{b}` that is not versioned stays an unknown path.
fn is_version(v: &str) -> bool {
    v.strip_prefix('v').is_some_and(|rest| {
        !rest.is_empty() && rest.chars().all(|c| c.is_ascii_digit() || c == '.')
    })
}

/// The token, then whether the media is live and visible to it (see the module docs).
fn authorize(
    fake: &FakeGraph,
    token: Option<&str>,
    media_id: &str,
    number_filter: Option<&str>,
    method: &str,
) -> Result<(), GraphError> {
    if let AuthCheck::Fail(e) = check_token(&fake.shared.lock(), token) {
        return Err(e);
    }
    let not_found = || GraphError::unknown_object(method, media_id);
    let owner = fake
        .shared
        .media()
        .live(media_id)
        .map(|m| m.info.phone_number_id.clone())
        .ok_or_else(not_found)?;
    if number_filter.is_some_and(|p| p != owner) {
        return Err(not_found());
    }
    let owner_token = fake
        .shared
        .lock()
        .numbers
        .get(&owner)
        .map(|n| n.spec.access_token.clone());
    match (owner_token, token) {
        (Some(o), Some(t)) if o == t => Ok(()),
        _ => Err(not_found()),
    }
}

/// [`authorize`] with the token (header or `access_token`) and the `phone_number_id`
/// filter read from the request.
fn authorize_request(
    fake: &FakeGraph,
    headers: &HeaderMap,
    query: Option<&str>,
    media_id: &str,
    method: &str,
) -> Result<(), GraphError> {
    let token = request_token(headers, query_param(query, "access_token").as_deref());
    let filter = query_param(query, "phone_number_id");
    authorize(fake, token.as_deref(), media_id, filter.as_deref(), method)
}

/// `GET /{version}/{media-id}`: a fresh download URL plus the file's metadata.
/// `file_size` is a JSON number, as live responses carry it (the reference's example
/// quotes it; clients should accept both).
pub(crate) async fn retrieve(
    State(fake): State<FakeGraph>,
    Path((version, media_id)): Path<(String, String)>,
    uri: Uri,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    if !is_version(&version) {
        return unknown_path(uri).await;
    }
    fake.shared.media().stats.retrievals += 1;
    if let Err(e) = authorize_request(&fake, &headers, query.as_deref(), &media_id, "get") {
        return e.into_response();
    }
    let mut media = fake.shared.media();
    let Some(info) = media.live(&media_id).map(|m| m.info.clone()) else {
        return GraphError::unknown_object("get", &media_id).into_response();
    };
    let (hash, ext) = media.grant(&media_id);
    drop(media);
    let url = format!(
        "{}/whatsapp_business/attachments/?mid={media_id}&ext={ext}&hash={hash}",
        fake.url()
    );
    Json(json!({
        "messaging_product": "whatsapp",
        "url": url,
        "mime_type": info.mime_type,
        "sha256": info.sha256_hex,
        "file_size": info.file_size,
        "id": info.id,
    }))
    .into_response()
}

/// `DELETE /{version}/{media-id}`: `{"success": true}`; the id and its URLs are gone.
pub(crate) async fn delete(
    State(fake): State<FakeGraph>,
    Path((version, media_id)): Path<(String, String)>,
    uri: Uri,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    if !is_version(&version) {
        return unknown_path(uri).await;
    }
    if let Err(e) = authorize_request(&fake, &headers, query.as_deref(), &media_id, "delete") {
        return e.into_response();
    }
    let mut media = fake.shared.media();
    media.items.remove(&media_id);
    media.grants.retain(|_, g| g.media_id != media_id);
    Json(json!({ "success": true })).into_response()
}

fn not_found() -> Response {
    (StatusCode::NOT_FOUND, "Not Found").into_response()
}

/// `GET {url}` with the owner's bearer token: the bytes with their `Content-Type`.
pub(crate) async fn download(
    State(fake): State<FakeGraph>,
    ConnectInfo(conn): ConnectInfo<ConnHandle>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    let (drop_it, fail_it) = {
        let mut m = fake.shared.media();
        m.stats.downloads += 1;
        if m.drop_downloads > 0 {
            m.drop_downloads -= 1;
            (true, false)
        } else if m.fail_downloads > 0 {
            m.fail_downloads -= 1;
            (false, true)
        } else {
            (false, false)
        }
    };
    if drop_it {
        conn.kill();
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    }
    if fail_it {
        return (StatusCode::INTERNAL_SERVER_ERROR, "Internal Server Error").into_response();
    }
    let q = query.as_deref();
    let (mid, hash) = (query_param(q, "mid"), query_param(q, "hash"));
    let now = Instant::now();
    let (owner, live) = {
        let m = fake.shared.media();
        let Some(grant) = hash.as_deref().and_then(|h| m.grants.get(h)) else {
            return not_found();
        };
        if mid.as_deref() != Some(grant.media_id.as_str()) {
            return not_found();
        }
        let Some(item) = m.items.get(&grant.media_id) else {
            return not_found();
        };
        let live = grant.expires > now && !item.is_expired(now);
        (item.info.phone_number_id.clone(), live)
    };
    // The lookaside URL takes the token in the header only.
    let token = request_token(&headers, None);
    let authorized = {
        let inner = fake.shared.lock();
        matches!(check_token(&inner, token.as_deref()), AuthCheck::Ok)
            && inner
                .numbers
                .get(&owner)
                .is_some_and(|n| Some(n.spec.access_token.as_str()) == token.as_deref())
    };
    if !authorized {
        return GraphError::oauth("Invalid OAuth access token - Cannot parse access token")
            .into_response();
    }
    if !live {
        return not_found();
    }
    let found = mid.as_deref().and_then(|id| {
        fake.shared
            .media()
            .live(id)
            .map(|m| (m.bytes.clone(), m.info.mime_type.clone()))
    });
    let Some((bytes, mime)) = found else {
        return not_found();
    };
    let content_type = HeaderValue::from_str(&mime)
        .unwrap_or_else(|_| HeaderValue::from_static("application/octet-stream"));
    ([(header::CONTENT_TYPE, content_type)], bytes).into_response()
}

/// The fields of an upload form the endpoint reads.
#[derive(Default)]
struct UploadForm {
    messaging_product: Option<String>,
    mime: Option<String>,
    file: Option<(Bytes, Option<String>)>,
}

fn multipart_error(e: MultipartError) -> GraphError {
    if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
        GraphError::whatsapp(131053, Some("File is too large to be uploaded."), None)
    } else {
        GraphError::param_message(&format!("(#100) Invalid multipart/form-data body: {e}"))
    }
}

/// Reads the form; a body that is not multipart reads as an empty form (so the first
/// missing required parameter is reported, as Graph does).
async fn read_form(
    multipart: Result<Multipart, MultipartRejection>,
) -> Result<UploadForm, GraphError> {
    let mut form = UploadForm::default();
    let Ok(mut mp) = multipart else {
        return Ok(form);
    };
    while let Some(field) = mp.next_field().await.map_err(multipart_error)? {
        match field.name().unwrap_or_default() {
            "file" => {
                let filename = field.file_name().map(str::to_owned);
                let bytes = field.bytes().await.map_err(multipart_error)?;
                form.file = Some((bytes, filename));
            }
            "messaging_product" => {
                form.messaging_product = Some(field.text().await.map_err(multipart_error)?);
            }
            "type" => form.mime = Some(field.text().await.map_err(multipart_error)?),
            _ => {}
        }
    }
    Ok(form)
}

/// WebP with the VP8X "animation" flag (bit 1 of the flags byte).
fn animated_webp(b: &[u8]) -> bool {
    b.get(0..4) == Some(b"RIFF".as_slice())
        && b.get(8..12) == Some(b"WEBP".as_slice())
        && b.get(12..16) == Some(b"VP8X".as_slice())
        && b.get(20).is_some_and(|flags| flags & 0x02 != 0)
}

/// The documented size limit for a (normalized) supported type, with its label.
fn size_limit(mime: &str, bytes: &[u8]) -> (usize, &'static str) {
    match mime {
        "image/jpeg" | "image/png" => (5 * MIB, "5MB"),
        "image/webp" if animated_webp(bytes) => (500 * KIB, "500KB (animated sticker)"),
        "image/webp" => (100 * KIB, "100KB (static sticker)"),
        m if m.starts_with("audio/") || m.starts_with("video/") => (16 * MIB, "16MB"),
        _ => (100 * MIB, "100MB"),
    }
}

/// Validates an upload form as the platform does; the spec to store on success.
fn validate_upload(phone_number_id: &str, form: UploadForm) -> Result<MediaSpec, GraphError> {
    match form.messaging_product.as_deref().map(str::trim) {
        None => {
            return Err(GraphError::param_message(
                "(#100) The parameter messaging_product is required.",
            ));
        }
        Some("whatsapp") => {}
        Some(other) => {
            return Err(GraphError::param_message(&format!(
                "(#100) Param messaging_product must be one of {{WHATSAPP}} - got \"{other}\"."
            )));
        }
    }
    let Some((bytes, filename)) = form.file else {
        return Err(GraphError::param_message(
            "(#100) The parameter file is required.",
        ));
    };
    let Some(mime) = form.mime.map(|m| m.trim().to_owned()) else {
        return Err(GraphError::param_message(
            "(#100) The parameter type is required.",
        ));
    };
    // `audio/ogg; codecs=opus` is audio/ogg; `video/3gp` is how some pages spell 3GPP.
    let base = mime
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    let base = if base == "video/3gp" {
        "video/3gpp".to_owned()
    } else {
        base
    };
    if !SUPPORTED.contains(&base.as_str()) {
        let details = format!(
            "Unsupported file type {mime}. Supported types: {}.",
            SUPPORTED.join(", ")
        );
        return Err(GraphError::whatsapp(131053, Some(&details), None));
    }
    let (limit, label) = size_limit(&base, &bytes);
    if bytes.len() > limit {
        let details = format!(
            "File size {} bytes exceeds the {label} limit for {base}.",
            bytes.len()
        );
        return Err(GraphError::whatsapp(131053, Some(&details), None));
    }
    Ok(MediaSpec {
        phone_number_id: phone_number_id.to_owned(),
        bytes: bytes.to_vec(),
        mime_type: mime,
        filename,
    })
}

/// `POST /{version}/{phone-number-id}/media` (multipart: `messaging_product`, `type`,
/// `file`): `{"id": "<media-id>"}`. A token other than the number's own answers 100/33,
/// as for an object the token cannot see.
pub(crate) async fn upload(
    State(fake): State<FakeGraph>,
    Path((version, phone_number_id)): Path<(String, String)>,
    uri: Uri,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
    multipart: Result<Multipart, MultipartRejection>,
) -> Response {
    if !is_version(&version) {
        return unknown_path(uri).await;
    }
    fake.shared.media().stats.uploads += 1;
    let token = request_token(
        &headers,
        query_param(query.as_deref(), "access_token").as_deref(),
    );
    {
        let inner = fake.shared.lock();
        if let AuthCheck::Fail(e) = check_token(&inner, token.as_deref()) {
            return e.into_response();
        }
        let owns = inner
            .numbers
            .get(&phone_number_id)
            .is_some_and(|n| Some(n.spec.access_token.as_str()) == token.as_deref());
        if !owns {
            return GraphError::unknown_object("post", &phone_number_id).into_response();
        }
    }
    let spec = match read_form(multipart)
        .await
        .and_then(|form| validate_upload(&phone_number_id, form))
    {
        Ok(spec) => spec,
        Err(e) => return e.into_response(),
    };
    let id = fake.shared.media().insert(spec, MediaOrigin::Uploaded).id;
    Json(json!({ "id": id })).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_and_webp_flags() {
        assert!(is_version("v23.0") && is_version("v9"));
        assert!(!is_version("_fake") && !is_version("v") && !is_version("whatsapp_business"));
        let mut webp = b"RIFF\0\0\0\0WEBPVP8X\0\0\0\0".to_vec();
        webp.push(0x02);
        assert!(animated_webp(&webp));
        webp[20] = 0x10;
        assert!(!animated_webp(&webp));
        assert_eq!(size_limit("image/webp", &webp).0, 100 * KIB);
        assert_eq!(size_limit("audio/ogg", &[]).0, 16 * MIB);
        assert_eq!(size_limit("application/pdf", &[]).0, 100 * MIB);
    }
}
