//! CSRF protection of every console form. A POST must come from the console's own origin
//! (when the browser says where it comes from) and carry the session's token in `_csrf`
//! (the sign-in form: the token of its own cookie, as there is no session yet). Multipart
//! forms (the import upload) are checked by their handler, whose first part is `_csrf`, so
//! the file streams through untouched.

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};

use super::answer::{ConsoleError, SIGN_IN};
use super::context::Console;
use super::session::{self, SIGN_IN_COOKIE};

/// Largest URL-encoded form the console takes (a list of 20,000 contact ids fits).
const MAX_FORM: usize = 2 * 1024 * 1024;

/// The middleware; see the module.
pub async fn guard(State(console): State<Console>, mut req: Request, next: Next) -> Response {
    if matches!(*req.method(), Method::GET | Method::HEAD) {
        return next.run(req).await;
    }
    if !same_origin(&req) {
        return refused("This form came from another site; it was not sent.");
    }
    let multipart = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("multipart/form-data"));
    let sign_in = req.uri().path() == SIGN_IN;
    let expected = if sign_in {
        session::cookie(req.headers(), SIGN_IN_COOKIE).map(str::to_owned)
    } else {
        match session::find(&console.state, req.headers()).await {
            Ok(Some(row)) => {
                let csrf = row.csrf.clone();
                req.extensions_mut().insert(row);
                Some(csrf)
            }
            Ok(None) => None,
            Err(e) => return ConsoleError::Internal(e.into()).into_response(),
        }
    };
    let Some(expected) = expected else {
        // A sign-in form this browser was never given is refused; any other form without
        // a session (signed out, expired) sends the browser to sign in first.
        if sign_in {
            return expired();
        }
        return Redirect::to(SIGN_IN).into_response();
    };
    if multipart {
        return next.run(req).await;
    }
    let (parts, body) = req.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_FORM).await else {
        return (StatusCode::PAYLOAD_TOO_LARGE, "The form is too large.").into_response();
    };
    let sent = form_urlencoded::parse(&bytes)
        .find(|(k, _)| k == "_csrf")
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default();
    if !session::same_token(&sent, &expected) {
        return expired();
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// Whether the form's `Origin` (sent by every current browser on a POST) names this host:
/// the `Host` the request came with, or the `X-Forwarded-Host` a reverse proxy in front
/// says the browser used (a page of another site cannot set that header on a form).
fn same_origin(req: &Request) -> bool {
    let h = req.headers();
    let Some(origin) = h.get(header::ORIGIN).and_then(|v| v.to_str().ok()) else {
        return true;
    };
    let origin_host = origin
        .split_once("://")
        .map(|(_, rest)| rest)
        .unwrap_or_default();
    [header::HOST.as_str(), "x-forwarded-host"]
        .iter()
        .filter_map(|name| h.get(*name).and_then(|v| v.to_str().ok()))
        .any(|host| !host.is_empty() && origin_host.eq_ignore_ascii_case(host.trim()))
}

/// The answer to a form whose token is missing or stale.
pub fn expired() -> Response {
    refused("This form has expired. Reload the page and send it again.")
}

fn refused(message: &str) -> Response {
    super::answer::bare_answer(
        StatusCode::FORBIDDEN,
        super::answer::bare_page("Refused", message),
    )
}
