//! Forms that carry a file (`multipart/form-data`: a CSV to import, a file to send in a
//! reply). The CSRF guard leaves their body unread so the file can stream on to the API
//! without being held whole in memory; so here the hidden fields, which every such page puts
//! first, are checked before anything else is read, and the API's own multipart body is
//! written part by part as the file arrives.

use axum::extract::Request;
use axum::http::header;
use axum::response::Response;
use uuid::Uuid;

use super::page::{problem, redirect};
use super::session::{self, Session};

/// A file form whose hidden fields held: the parts still to read.
pub struct Upload {
    /// The browser's parts after `_csrf` and `_idem`, in the page's order.
    pub parts: multer::Multipart<'static>,
    /// The form's Idempotency-Key (`_idem`), so sending it twice creates once.
    pub idempotency: Option<String>,
}

/// Checks a file form's first parts: the session's CSRF token (`_csrf`), then the form's
/// Idempotency-Key (`_idem`). `Err` is the answer to give: a form not sent as multipart goes
/// back to `back` with a problem; a missing or wrong token is refused as an expired form.
pub async fn open(s: &Session, req: Request, back: &str) -> Result<Upload, Response> {
    let boundary = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| multer::parse_boundary(v).ok());
    let Some(boundary) = boundary else {
        return Err(redirect(
            s,
            back,
            problem("Send the form as the page gives it."),
        ));
    };
    let mut parts = multer::Multipart::new(req.into_body().into_data_stream(), boundary);
    let mut idempotency = None;
    for expected in ["_csrf", "_idem"] {
        let field = parts.next_field().await.ok().flatten();
        let Some(field) = field.filter(|f| f.name() == Some(expected)) else {
            return Err(super::csrf::expired());
        };
        let value = field.text().await.unwrap_or_default();
        if expected == "_csrf" && !session::same_token(&value, &s.csrf) {
            return Err(super::csrf::expired());
        }
        if expected == "_idem" {
            idempotency = Some(value);
        }
    }
    Ok(Upload { parts, idempotency })
}

/// A fresh boundary for a body the console writes to the API.
pub fn boundary() -> String {
    format!("wm-console-{}", Uuid::new_v4().simple())
}

/// The `Content-Type` of a multipart body with `boundary`.
pub fn content_type(boundary: &str) -> String {
    format!("multipart/form-data; boundary={boundary}")
}

/// A multipart part's header, the name and file name quoted safely.
pub fn part_header(boundary: &str, name: &str, file_name: Option<&str>, kind: &str) -> String {
    let clean = |v: &str| v.replace(['"', '\r', '\n'], "_");
    let file = file_name
        .map(|f| format!("; filename=\"{}\"", clean(f)))
        .unwrap_or_default();
    format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"{}\"{file}\r\nContent-Type: {}\r\n\r\n",
        clean(name),
        clean(kind)
    )
}

/// The line that ends a multipart body after its last part.
pub fn closing(boundary: &str) -> String {
    format!("\r\n--{boundary}--\r\n")
}
