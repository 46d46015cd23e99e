//! The page shell every console page shares (head, navigation, flash, sign-out), the
//! answers pages give (a page, a redirect with a message, an error page), and the
//! security headers on all of them.

use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use maud::{DOCTYPE, Markup, html};
use wm_types::enums::Scope;

use super::answer::{ConsoleError, head, html_headers};
use super::api::Failure;
use super::session::{self, FLASH_COOKIE, Flash, Session};

/// The console's sections, in the navigation's order: label, path, the scope that opens it.
pub const SECTIONS: &[(&str, &str, Option<Scope>)] = &[
    ("Home", "/console", None),
    ("Contacts", "/console/contacts", Some(Scope::ContactsRead)),
    ("Import", "/console/imports", Some(Scope::ContactsRead)),
    (
        "Campaigns",
        "/console/campaigns",
        Some(Scope::CampaignsRead),
    ),
    ("Inbox", "/console/inbox", Some(Scope::ConversationsRead)),
    ("Webhooks", "/console/webhooks", Some(Scope::WebhooksRead)),
    (
        "Templates",
        "/console/templates",
        Some(Scope::CampaignsRead),
    ),
    ("Numbers", "/console/numbers", Some(Scope::CampaignsRead)),
    (
        "Automations",
        "/console/automations",
        Some(Scope::AutomationsRead),
    ),
    ("Reports", "/console/reports", Some(Scope::ReportsRead)),
];

/// A rendered page, with what its answer must also do.
pub struct Page {
    markup: Markup,
    status: StatusCode,
    clear_flash: bool,
    secure: bool,
}

impl Page {
    /// The same page with another status (a form shown again with its error: 422).
    pub fn with_status(mut self, status: StatusCode) -> Page {
        self.status = status;
        self
    }
}

impl IntoResponse for Page {
    fn into_response(self) -> Response {
        let mut response = (self.status, html_headers(), self.markup.into_string()).into_response();
        if self.clear_flash {
            response.headers_mut().append(
                header::SET_COOKIE,
                session::clear_cookie(self.secure, FLASH_COOKIE),
            );
        }
        response
    }
}

/// A whole page for a signed-in session: `section` is the navigation entry it belongs to;
/// `body` starts with the page's own `h1`.
pub fn page(s: &Session, section: &str, title: &str, body: Markup) -> Page {
    let markup = html! {
        (DOCTYPE)
        html lang="en" {
            (head(title))
            body {
                a.skip href="#main" { "Skip to content" }
                header.top {
                    a.brand href="/console" { "wm" }
                    nav aria-label="Main" {
                        ul {
                            @for (label, href, scope) in SECTIONS {
                                @if scope.is_none_or(|sc| s.can(sc)) {
                                    li {
                                        @if *label == section {
                                            a href=(href) aria-current="page" { (label) }
                                        } @else {
                                            a href=(href) { (label) }
                                        }
                                    }
                                }
                            }
                        }
                    }
                    form.sign-out method="post" action="/console/sign-out" {
                        input type="hidden" name="_csrf" value=(s.csrf);
                        span.who { (s.caller.user_name) }
                        button type="submit" { "Sign out" }
                    }
                }
                main id="main" tabindex="-1" {
                    @if let Some(flash) = &s.flash {
                        (flash_box(flash))
                    }
                    (body)
                }
            }
        }
    };
    Page {
        markup,
        status: StatusCode::OK,
        clear_flash: s.flash.is_some(),
        secure: s.secure,
    }
}

/// A message box: `role="alert"` for errors, `role="status"` otherwise.
pub fn flash_box(flash: &Flash) -> Markup {
    html! {
        @if flash.error {
            div.flash.error role="alert" { (flash.text) }
        } @else {
            div.flash role="status" { (flash.text) }
        }
    }
}

/// 303 to `to`, leaving `flash` for the page there.
pub fn redirect(s: &Session, to: &str, flash: Flash) -> Response {
    let mut response = Redirect::to(to).into_response();
    response.headers_mut().append(
        header::SET_COOKIE,
        session::set_cookie(s.secure, FLASH_COOKIE, &session::flash_value(&flash), 60),
    );
    response
}

/// A success message.
pub fn done(text: impl Into<String>) -> Flash {
    Flash {
        error: false,
        text: text.into(),
    }
}

/// A failure message in the console's own words (a form left incomplete).
pub fn problem(text: impl Into<String>) -> Flash {
    Flash {
        error: true,
        text: text.into(),
    }
}

/// A failure message in the API's words.
pub fn failed(failure: &Failure) -> Flash {
    Flash {
        error: true,
        text: failure.message.clone(),
    }
}

/// What a page handler returns.
pub type PageResult<T = Page> = Result<T, ConsoleError>;

/// What a [`crate::console::view::delete_form`] posts to: nothing unless its box was ticked;
/// then `DELETE` `api_path`, and on to `gone_to` saying so, or back to `back` with the API's
/// reason (a contact with history, a missing scope).
pub async fn delete_confirmed(
    s: &Session,
    f: &crate::console::view::Fields,
    what: &str,
    api_path: &str,
    (back, gone_to): (&str, &str),
) -> Response {
    if !f.confirmed() {
        return redirect(
            s,
            back,
            problem(format!("Tick the box to delete the {what}.")),
        );
    }
    let answer = s
        .api
        .call(
            axum::http::Method::DELETE,
            api_path,
            None,
            axum::body::Body::empty(),
            None,
        )
        .await;
    match answer {
        Ok(_) => {
            let mut what = what.to_owned();
            if let Some(first) = what.get_mut(..1) {
                first.make_ascii_uppercase();
            }
            redirect(s, gone_to, done(format!("{what} deleted.")))
        }
        Err(e) => redirect(s, back, failed(&e)),
    }
}
