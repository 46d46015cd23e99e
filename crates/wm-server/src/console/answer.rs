//! The console's plainest answers, which everything else in it may use: the headers of
//! every HTML answer, the `<head>`, pages without a session (sign-in, refusals), live
//! fragments, and why a request could not get its page ([`ConsoleError`]).

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use maud::{DOCTYPE, Markup, html};

use super::api::Failure;
use super::assets;

/// The sign-in page, where every signed-out request goes.
pub const SIGN_IN: &str = "/console/sign-in";

/// Headers of every HTML answer: no caching of private pages, no framing, and a CSP that
/// allows only the console's own files (no inline script or style anywhere).
pub fn html_headers() -> [(header::HeaderName, HeaderValue); 5] {
    [
        (
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        ),
        (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
        (
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(
                "default-src 'self'; img-src 'self' data:; media-src 'self'; style-src 'self'; script-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
            ),
        ),
        (
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ),
        (
            header::REFERRER_POLICY,
            HeaderValue::from_static("same-origin"),
        ),
    ]
}

/// The `<head>` of every console page: its title, the stylesheet and the script.
pub fn head(title: &str) -> Markup {
    html! {
        head {
            meta charset="utf-8";
            meta name="viewport" content="width=device-width, initial-scale=1";
            title { (title) " · wm console" }
            link rel="stylesheet" href=(assets::CSS.path());
            link rel="icon" href="data:,";
            script src=(assets::JS.path()) defer {}
        }
    }
}

/// A live part alone (what a page's `data-live` fetches).
pub fn fragment(markup: Markup) -> Response {
    (html_headers(), markup.into_string()).into_response()
}

/// A page without a session (sign-in, refusals).
pub fn bare_page(title: &str, body: impl maud::Render) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            (head(title))
            body.bare {
                main id="main" {
                    h1 { (title) }
                    p { (body) }
                    p { a href="/console" { "Back to the console" } }
                }
            }
        }
    }
}

/// A bare page as an answer, for markup built by the caller.
pub fn bare_answer(status: StatusCode, markup: Markup) -> Response {
    (status, html_headers(), markup.into_string()).into_response()
}

/// Why a console request could not be answered with its page.
#[derive(Debug)]
pub enum ConsoleError {
    /// No session (or it ended): to the sign-in page.
    SignedOut,
    /// The API refused or failed.
    Api(Failure),
    /// The console itself failed.
    Internal(anyhow::Error),
}

impl From<Failure> for ConsoleError {
    fn from(f: Failure) -> Self {
        ConsoleError::Api(f)
    }
}

impl IntoResponse for ConsoleError {
    fn into_response(self) -> Response {
        match self {
            ConsoleError::SignedOut => Redirect::to(SIGN_IN).into_response(),
            ConsoleError::Api(f) if f.status == StatusCode::UNAUTHORIZED => {
                Redirect::to(SIGN_IN).into_response()
            }
            ConsoleError::Api(f) => {
                let title = match f.status {
                    StatusCode::FORBIDDEN => "Not allowed with this key",
                    StatusCode::NOT_FOUND => "Not found",
                    s if s.is_server_error() => "Something went wrong",
                    _ => "Refused",
                };
                bare_answer(f.status, bare_page(title, f.message.as_str()))
            }
            ConsoleError::Internal(e) => {
                tracing::error!(error = %e, "console page failed");
                bare_answer(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    bare_page(
                        "Something went wrong",
                        "The page could not be shown; the server log has the details.",
                    ),
                )
            }
        }
    }
}
