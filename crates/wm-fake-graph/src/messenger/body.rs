//! Request bodies as Graph takes them: JSON, `application/x-www-form-urlencoded`
//! (each value that parses as JSON — `recipient={"id":"…"}` — is read as that JSON, as
//! Meta's curl examples post them) or `multipart/form-data` (the same fields plus a
//! `filedata` file part, for uploads). The token may also come as an `access_token`
//! parameter of the body, as Graph allows.

use axum::body::{Body, Bytes};
use axum::extract::{FromRequest, Multipart, Request};
use axum::http::{HeaderMap, header};
use serde_json::{Map, Value};

use super::errors;
use crate::errors::GraphError;

/// Bodies read by the Messenger routes: the largest file (25 MB) plus framing.
pub(crate) const MAX_BODY: usize = 27 * 1024 * 1024;

/// A `filedata` part.
#[derive(Debug, Clone)]
pub(crate) struct FilePart {
    pub bytes: Vec<u8>,
    pub mime: Option<String>,
    pub filename: Option<String>,
}

/// A parsed request: its parameters and the uploaded file, if any.
#[derive(Debug, Clone, Default)]
pub(crate) struct Params {
    pub fields: Map<String, Value>,
    pub file: Option<FilePart>,
    /// The body exceeded [`MAX_BODY`].
    pub too_large: bool,
}

impl Params {
    /// A string parameter.
    pub fn str(&self, key: &str) -> Option<&str> {
        self.fields.get(key).and_then(Value::as_str)
    }
}

/// A form value: JSON when it parses as an object or array, else the string.
fn form_value(v: &str) -> Value {
    let t = v.trim_start();
    if (t.starts_with('{') || t.starts_with('['))
        && let Ok(parsed) = serde_json::from_str::<Value>(v)
    {
        return parsed;
    }
    Value::String(v.to_owned())
}

fn content_type(headers: &HeaderMap) -> String {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_ascii_lowercase()
}

/// Reads the body of `req` (never more than [`MAX_BODY`]).
pub(crate) async fn read(req: Request) -> Result<Params, GraphError> {
    let (parts, body) = req.into_parts();
    let ct = content_type(&parts.headers);
    let Ok(bytes) = axum::body::to_bytes(body, MAX_BODY).await else {
        return Ok(Params {
            too_large: true,
            ..Params::default()
        });
    };
    if ct.starts_with("multipart/form-data") {
        let req = Request::from_parts(parts, Body::from(bytes));
        return read_multipart(req).await;
    }
    if ct.starts_with("application/x-www-form-urlencoded") {
        return Ok(Params {
            fields: read_form(&bytes),
            ..Params::default()
        });
    }
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Params::default());
    }
    match serde_json::from_slice::<Value>(&bytes) {
        // Graph parameters are strings at heart: `"recipient":"{\"id\":…}"` is read
        // like the form value it would be.
        Ok(Value::Object(fields)) => Ok(Params {
            fields: fields
                .into_iter()
                .map(|(k, v)| match v {
                    Value::String(s) => (k, form_value(&s)),
                    other => (k, other),
                })
                .collect(),
            ..Params::default()
        }),
        _ => Err(errors::param(
            "The request body is not a valid JSON object.",
        )),
    }
}

fn read_form(bytes: &Bytes) -> Map<String, Value> {
    form_urlencoded::parse(bytes)
        .map(|(k, v)| (k.into_owned(), form_value(&v)))
        .collect()
}

async fn read_multipart(req: Request) -> Result<Params, GraphError> {
    let invalid = |e: axum::extract::multipart::MultipartError| {
        errors::param(&format!("Invalid multipart/form-data body: {e}"))
    };
    let mut mp = Multipart::from_request(req, &())
        .await
        .map_err(|e| errors::param(&format!("Invalid multipart/form-data body: {e}")))?;
    let mut params = Params::default();
    while let Some(field) = mp.next_field().await.map_err(invalid)? {
        let name = field.name().unwrap_or_default().to_owned();
        if name == "filedata" {
            let mime = field.content_type().map(str::to_owned);
            let filename = field.file_name().map(str::to_owned);
            let bytes = field.bytes().await.map_err(invalid)?;
            params.file = Some(FilePart {
                bytes: bytes.to_vec(),
                mime,
                filename,
            });
        } else {
            let text = field.text().await.map_err(invalid)?;
            params.fields.insert(name, form_value(&text));
        }
    }
    Ok(params)
}

/// The `access_token` of the query string.
pub(crate) fn query_token(query: Option<&str>) -> Option<String> {
    query_param(query, "access_token")
}

/// A query-string parameter.
pub(crate) fn query_param(query: Option<&str>, key: &str) -> Option<String> {
    query.and_then(|q| {
        form_urlencoded::parse(q.as_bytes())
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.into_owned())
    })
}

/// The token: `Authorization: Bearer`, else the query's, else the body's `access_token`.
pub(crate) fn token(headers: &HeaderMap, query: Option<&str>, params: &Params) -> Option<String> {
    crate::send::request_token(headers, query_token(query).as_deref())
        .or_else(|| params.str("access_token").map(str::to_owned))
}

/// A MIME type guessed from a file name (for a `filedata` part without one).
pub(crate) fn mime_from_name(name: &str) -> Option<&'static str> {
    let ext = name.rsplit('.').next()?.to_ascii_lowercase();
    Some(match ext.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "mp4" => "video/mp4",
        "mov" => "video/quicktime",
        "webm" => "video/webm",
        "mp3" => "audio/mpeg",
        "m4a" => "audio/mp4",
        "aac" => "audio/aac",
        "wav" => "audio/wav",
        "ogg" => "audio/ogg",
        "pdf" => "application/pdf",
        _ => return None,
    })
}
