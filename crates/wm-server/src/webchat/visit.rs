//! Who calls the widget's API: the chat a path names, whether the calling page may use it,
//! the visitor's token, CORS, and the refusals the widget reads.

use axum::extract::{FromRequestParts, Path, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;
use crate::services::webchat::{self, Site};
use crate::state::AppState;

/// The request's `Origin`, when it has one.
fn origin(headers: &HeaderMap) -> Option<String> {
    headers
        .get(header::ORIGIN)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

/// CORS for the widget's calls: a preflight is answered here; every answer names the
/// asking page as allowed to read it, except the 403 to a page the chat does not allow
/// (which the browser then keeps from it: the widget there only learns the chat is not
/// available). Which pages may use the chat is the extractors' check ([`Visit`]).
pub async fn cors(req: Request, next: Next) -> Response {
    let asked = origin(req.headers());
    let mut response = if req.method() == Method::OPTIONS {
        let mut r = StatusCode::NO_CONTENT.into_response();
        let h = r.headers_mut();
        h.insert(
            header::ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static("GET, POST, OPTIONS"),
        );
        h.insert(
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            HeaderValue::from_static("authorization, content-type, last-event-id"),
        );
        h.insert(
            header::ACCESS_CONTROL_MAX_AGE,
            HeaderValue::from_static("600"),
        );
        r
    } else {
        next.run(req).await
    };
    let refused = response.extensions().get::<ForeignOrigin>().is_some();
    if let Some(v) = asked
        .filter(|_| !refused)
        .and_then(|o| HeaderValue::from_str(&o).ok())
    {
        let h = response.headers_mut();
        h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, v);
        h.insert(
            header::ACCESS_CONTROL_EXPOSE_HEADERS,
            HeaderValue::from_static("retry-after"),
        );
        h.append(header::VARY, HeaderValue::from_static("origin"));
    }
    response
}

/// A call of a chat from one of its allowed sites: the chat, and the caller's address (for
/// the limits per address). A chat that does not exist is a 404; a site not allowed, 403.
pub struct Visit {
    /// The chat.
    pub site: Site,
    /// Where the call came from.
    pub address: String,
}

/// The chat a path names.
async fn site_of(parts: &mut Parts, state: &AppState) -> Result<Site, Refusal> {
    let Path(params) = Path::<Vec<(String, String)>>::from_request_parts(parts, state)
        .await
        .map_err(|_| Refusal::from(ApiError::not_found("Website chat")))?;
    let token = params
        .iter()
        .find(|(k, _)| k == "site")
        .map(|(_, v)| v.clone())
        .unwrap_or_default();
    Ok(webchat::site(state, &token).await?)
}

/// A file of a chat, asked for by an `<img>` or a link, which send no `Origin`: the
/// visitor's token (in the URL) is what lets it be read.
pub struct FileOf {
    /// The chat.
    pub site: Site,
}

impl FromRequestParts<AppState> for FileOf {
    type Rejection = Refusal;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Refusal> {
        Ok(FileOf {
            site: site_of(parts, state).await?,
        })
    }
}

impl FromRequestParts<AppState> for Visit {
    type Rejection = Refusal;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Refusal> {
        let site = site_of(parts, state).await?;
        if !site.allows(origin(&parts.headers).as_deref()) {
            return Err(Refusal::foreign());
        }
        let address = parts
            .extensions
            .get::<crate::listener::Peer>()
            .map_or_else(|| "unknown".to_owned(), |p| p.0.ip().to_string());
        Ok(Visit { site, address })
    }
}

/// An [`ApiError`] as the widget reads it: a 429 also says when to try again
/// (`Retry-After`).
pub struct Refusal {
    error: ApiError,
    /// The caller's page may not embed the chat.
    foreign: bool,
}

/// Marks the answer to a page whose origin the chat does not allow, so [`cors`] leaves out
/// `Access-Control-Allow-Origin` and the browser keeps even the refusal from that page.
#[derive(Clone, Copy)]
struct ForeignOrigin;

impl Refusal {
    /// The 403 to a page that may not embed the chat.
    fn foreign() -> Self {
        Refusal {
            error: ApiError::business(
                StatusCode::FORBIDDEN,
                None,
                "This site may not embed this chat.",
            ),
            foreign: true,
        }
    }
}

impl From<ApiError> for Refusal {
    fn from(e: ApiError) -> Self {
        Refusal {
            error: e,
            foreign: false,
        }
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let retry = match &self.error {
            ApiError::Business { status, extra, .. }
                if *status == StatusCode::TOO_MANY_REQUESTS =>
            {
                extra.get("retryAfter").and_then(serde_json::Value::as_u64)
            }
            _ => None,
        };
        let mut r = self.error.into_response();
        if self.foreign {
            r.extensions_mut().insert(ForeignOrigin);
        }
        if let Some(v) = retry.and_then(|s| HeaderValue::from_str(&s.to_string()).ok()) {
            r.headers_mut().insert(header::RETRY_AFTER, v);
        }
        r
    }
}

/// The visitor token of a call: `Authorization: Bearer`, or `?token=` (what an event
/// stream can send).
pub fn bearer(headers: &HeaderMap, query: Option<&str>) -> Option<String> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(|t| t.trim().to_owned())
        .or_else(|| query.map(str::to_owned))
}
