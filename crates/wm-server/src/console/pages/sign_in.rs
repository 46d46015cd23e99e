//! Signing in with an API key, and out. The key is posted once, checked, and kept nowhere:
//! the session remembers its hash. It never appears in a URL, a page or a log.

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use maud::{DOCTYPE, Markup, html};

use crate::console::answer::{bare_answer, head, html_headers};
use crate::console::context::Console;
use crate::console::page::flash_box;
use crate::console::session::{
    self, FLASH_COOKIE, Flash, SESSION_COOKIE, SESSION_TTL_MS, SIGN_IN_COOKIE,
};
use crate::console::view::Fields;

/// How long the sign-in form may stay open before it must be reloaded.
const FORM_TTL_S: i64 = 60 * 60;

fn form(token: &str, flash: Option<&Flash>) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            (head("Sign in"))
            body.bare {
                main id="main" {
                    h1 { "Sign in to wm" }
                    @if let Some(flash) = flash {
                        (flash_box(flash))
                    }
                    form.stack.card method="post" action="/console/sign-in" {
                        input type="hidden" name="_csrf" value=(token);
                        div.field {
                            label for="api-key" { "API key" }
                            span.hint id="api-key-hint" {
                                "The console acts as this key: what its scopes allow, you can do here."
                            }
                            input id="api-key" type="password" name="apiKey" required
                                autocomplete="off" aria-describedby="api-key-hint";
                        }
                        button type="submit" { "Sign in" }
                    }
                }
            }
        }
    }
}

/// `GET /console/sign-in`.
pub async fn show(headers: HeaderMap) -> Response {
    let flash = session::read_flash(&headers);
    answer(&headers, StatusCode::OK, flash.as_ref())
}

fn answer(headers: &HeaderMap, status: StatusCode, flash: Option<&Flash>) -> Response {
    let secure = session::is_https(headers);
    let token = session::random_token();
    let mut response = bare_answer(status, form(&token, flash));
    let h = response.headers_mut();
    h.append(
        header::SET_COOKIE,
        session::set_cookie(secure, SIGN_IN_COOKIE, &token, FORM_TTL_S),
    );
    if flash.is_some() {
        h.append(
            header::SET_COOKIE,
            session::clear_cookie(secure, FLASH_COOKIE),
        );
    }
    response
}

/// `POST /console/sign-in` (its CSRF token checked by the guard).
pub async fn submit(State(console): State<Console>, headers: HeaderMap, form: Fields) -> Response {
    let state = &console.state;
    let refuse = |text: &str| {
        let flash = Flash {
            error: true,
            text: text.to_owned(),
        };
        answer(&headers, StatusCode::UNAUTHORIZED, Some(&flash))
    };
    let Some(key) = form.text("apiKey") else {
        return refuse("Enter an API key.");
    };
    let hash = crate::keys::hash_key(&key);
    let caller = match crate::auth::lookup_hash(state, hash.clone()).await {
        Ok(Some(caller)) => caller,
        Ok(None) => return refuse("That API key is not valid: unknown, mistyped or revoked."),
        Err(e) => return e.into_response(),
    };
    let now = state.now_ms();
    let ttl = match caller.expires_at {
        Some(exp) if exp <= now => return refuse("That API key has expired."),
        Some(exp) => (exp - now).min(SESSION_TTL_MS),
        None => SESSION_TTL_MS,
    };
    let token = match session::open(state, hash, ttl).await {
        Ok(token) => token,
        Err(e) => {
            return crate::console::answer::ConsoleError::Internal(e).into_response();
        }
    };
    let secure = session::is_https(&headers);
    let mut response = Redirect::to("/console").into_response();
    let h = response.headers_mut();
    h.append(
        header::SET_COOKIE,
        session::set_cookie(secure, SESSION_COOKIE, &token, ttl / 1000),
    );
    h.append(
        header::SET_COOKIE,
        session::clear_cookie(secure, SIGN_IN_COOKIE),
    );
    response
}

/// `POST /console/sign-out`: the session is deleted (every replica sees it gone).
pub async fn sign_out(State(console): State<Console>, headers: HeaderMap) -> Response {
    if let Err(e) = session::close(&console.state, &headers).await {
        return crate::console::answer::ConsoleError::Internal(e).into_response();
    }
    let secure = session::is_https(&headers);
    let mut response = Redirect::to("/console/sign-in").into_response();
    let flash = Flash {
        error: false,
        text: "You are signed out.".into(),
    };
    let h = response.headers_mut();
    h.append(
        header::SET_COOKIE,
        session::clear_cookie(secure, SESSION_COOKIE),
    );
    h.append(
        header::SET_COOKIE,
        session::set_cookie(secure, FLASH_COOKIE, &session::flash_value(&flash), 60),
    );
    response
}

/// Not found under `/console`.
pub async fn not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        html_headers(),
        crate::console::answer::bare_page("Not found", "There is no such page in the console.")
            .into_string(),
    )
        .into_response()
}
