//! One conversation: its messages (media included) oldest first with a link to earlier
//! ones, the 24-hour window, a reply box while it is open and the approved templates when
//! it is closed, and assign / resolve.

use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, Method, header};
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};
use uuid::Uuid;
use wm_types::catalog::{Template, TemplateStatus};
use wm_types::common::Timestamp;
use wm_types::conversations::{Conversation, UpdateConversation};
use wm_types::enums::{ConversationStatus, Scope};
use wm_types::lookups::{List, User};
use wm_types::messages::{
    MarkedRead, Message, MessageDirection, MessageList, SendButton, SendInteractive, SendMessage,
    SendTemplate, SendText, SendType, SenderKind,
};

use super::compose::{back, post_message};
use crate::console::answer::{ConsoleError, fragment};
use crate::console::api::with_query;
use crate::console::context::Console;
use crate::console::page::{Page, PageResult, done, failed, page, problem, redirect};
use crate::console::session::Session;
use crate::console::view::{Fields, badge, channel_name, hidden, template_variables, when};

#[derive(Debug, Default, serde::Deserialize)]
/// Which messages of the thread: those before a message, or the newest.
pub struct ThreadQuery {
    #[serde(default)]
    before: Option<Uuid>,
}

/// "open until …" or "closed", for a window that ends at `expires`.
pub fn window_word(expires: Option<&Timestamp>, now_ms: i64) -> String {
    match expires {
        Some(t) if t.millis() > now_ms => {
            let left = (t.millis() - now_ms) / 60_000;
            format!("open, {} h {} min left", left / 60, left % 60)
        }
        _ => "closed".to_owned(),
    }
}

/// `GET /console/inbox/{id}`.
pub async fn show(
    State(_): State<Console>,
    s: Session,
    Path(id): Path<Uuid>,
    Query(q): Query<ThreadQuery>,
) -> PageResult<Page> {
    let before = q.before.map(|b| b.to_string()).unwrap_or_default();
    let (c, messages) = tokio::try_join!(
        s.api.get::<Conversation>(format!("/conversations/{id}")),
        s.api.get::<MessageList>(with_query(
            &format!("/conversations/{id}/messages"),
            &[("pageSize", "50"), ("before", &before)],
        )),
    )?;
    let channel = wm_core::platform::descriptor::of_channel(c.channel.channel_type);
    let open = window_open(&c, s.now());
    let window_hours = match channel.map(|d| d.window) {
        Some(wm_core::platform::Window::After { free_ms, .. }) => Some(free_ms / 3_600_000),
        _ => None,
    };
    let write = s.can(Scope::ConversationsWrite);
    let users = if write && s.can(Scope::ContactsRead) {
        s.api.get::<List<User>>("/users").await?.data
    } else {
        Vec::new()
    };
    let templates =
        if write && !open && channel.is_some_and(|d| d.templates) && s.can(Scope::CampaignsRead) {
            s.api
                .get::<List<Template>>("/templates")
                .await?
                .data
                .into_iter()
                .filter(|t| t.status == TemplateStatus::Approved)
                .collect()
        } else {
            Vec::new()
        };
    let name = c
        .contact
        .full_name
        .clone()
        .or(c.contact.primary_phone.clone())
        .unwrap_or_else(|| "Unnamed contact".into());
    let oldest = messages.data.last().map(|m| m.id);
    Ok(page(
        &s,
        "Inbox",
        &name,
        html! {
            h1 { (name) }
            p.muted {
                (badge(c.status.as_str())) " on " (channel_name(c.channel.channel_type)) " · "
                a href={ "/console/contacts/" (c.contact_id) } { "Contact details" } " · assigned to "
                (c.assigned_to.as_ref().map(|u| u.full_name.as_str()).unwrap_or("nobody"))
            }
            @if messages.meta.has_more {
                @if let Some(oldest) = oldest {
                    p { a href={ "/console/inbox/" (id) "?before=" (oldest) } { "Earlier messages" } }
                }
            }
            (thread_part(&c, &messages, q.before.is_none(), open, s.tz))
            section.card aria-labelledby="reply-h" {
                h2 id="reply-h" { "Reply" }
                @if let Some(hours) = window_hours {
                    p id="window-state" {
                        "The " (hours) "-hour window is " strong { (window_word(c.window_expires_at.as_ref(), s.now())) } "."
                        @if !open {
                            @if channel.is_some_and(|d| d.templates) {
                                " Only an approved template can be sent until the customer writes again."
                            } @else {
                                " Nothing can be sent until the customer writes again."
                            }
                        }
                    }
                }
                @if write && open {
                    form.stack method="post" action={ "/console/inbox/" (id) "/reply" } {
                        (hidden(&s))
                        div.field {
                            label for="reply-text" { "Reply" }
                            textarea id="reply-text" name="text" required maxlength=(channel.map_or(4096, |d| d.max_text)) {}
                        }
                        div.field {
                            label for="reply-buttons" { "Buttons (optional)" }
                            span.hint id="reply-buttons-hint" { "Up to 3, one per line, 20 characters each: the customer answers with a tap." }
                            textarea id="reply-buttons" name="buttons" rows="3" aria-describedby="reply-buttons-hint" {}
                        }
                        div { button type="submit" { "Send reply" } }
                    }
                    @if let Some(channel) = channel.filter(|d| !d.media.is_empty()) {
                        (super::reply_file::form(&s, id, channel))
                    }
                }
                @if write && !open {
                    @if templates.is_empty() {
                        p.muted { "No approved template to send." }
                    } @else {
                        form.stack method="post" action={ "/console/inbox/" (id) "/template" } {
                            (hidden(&s))
                            div.field {
                                label for="reply-template" { "Template" }
                                select id="reply-template" name="templateId" data-variables {
                                    @for t in &templates {
                                        option value=(t.id) { (t.name) " · " (t.language) " — " (t.body_text) }
                                    }
                                }
                            }
                            @for t in &templates { (template_variables(t, |_| String::new())) }
                            div { button type="submit" { "Send template" } }
                        }
                    }
                }
            }
            @if write {
                section.card aria-labelledby="manage-h" {
                    h2 id="manage-h" { "Manage" }
                    @if !users.is_empty() {
                        form.inline method="post" action={ "/console/inbox/" (id) "/update" } {
                            (hidden(&s))
                            div.field {
                                label for="f-assignee" { "Assigned to" }
                                select id="f-assignee" name="assignedToUserId" {
                                    option value="" { "Nobody" }
                                    @for u in &users {
                                        option value=(u.id) selected[c.assigned_to_user_id == Some(u.id)] { (u.full_name) }
                                    }
                                }
                            }
                            button type="submit" name="action" value="assign" { "Assign" }
                        }
                    }
                    form.inline method="post" action={ "/console/inbox/" (id) "/update" } {
                        (hidden(&s))
                        @if c.status == ConversationStatus::Resolved {
                            button type="submit" name="action" value="reopen" { "Reopen" }
                        } @else {
                            button type="submit" name="action" value="resolve" { "Resolve" }
                        }
                    }
                    form.inline method="post" action={ "/console/inbox/" (id) "/read" } {
                        (hidden(&s))
                        button.secondary type="submit" { "Mark as read" }
                    }
                }
            }
        },
    ))
}

/// The messages, oldest first. On the newest page of a conversation that is not resolved
/// it refreshes itself when the server pushes that the thread changed (a customer's new
/// message, a reply's statuses: [`super::push`]); when the window
/// opens or closes meanwhile, the fragment comes without `data-live` and the page reloads
/// (its reply box changes).
fn thread_part(
    c: &Conversation,
    messages: &MessageList,
    newest: bool,
    open: bool,
    tz: chrono_tz::Tz,
) -> Markup {
    let live = (newest && c.status != ConversationStatus::Resolved)
        .then(|| format!("/console/inbox/{}/live?open={open}", c.id));
    // Pushed: the page refreshes this part when the server says the thread changed.
    let push = live
        .as_ref()
        .map(|_| format!("/console/inbox/{}/events", c.id));
    html! {
        div id="thread-part" data-live=[live] data-push=[push] {
            ol.thread id="thread" aria-label="Messages, oldest first" {
                @for m in messages.data.iter().rev() { (message(m, tz)) }
            }
            @if messages.data.is_empty() { p.muted { "No message yet." } }
        }
    }
}

/// What the live thread was rendered with.
#[derive(Debug, Default, serde::Deserialize)]
pub struct LiveQuery {
    #[serde(default)]
    open: bool,
}

/// `GET /console/inbox/{id}/live`: the newest messages, for the page's refresh.
pub async fn live(
    State(_): State<Console>,
    s: Session,
    Path(id): Path<Uuid>,
    Query(q): Query<LiveQuery>,
) -> PageResult<Response> {
    let (c, messages) = tokio::try_join!(
        s.api.get::<Conversation>(format!("/conversations/{id}")),
        s.api
            .get::<MessageList>(format!("/conversations/{id}/messages?pageSize=50")),
    )?;
    // Still the window the page was drawn with: keep refreshing; otherwise reload it.
    let open = window_open(&c, s.now());
    Ok(fragment(thread_part(
        &c,
        &messages,
        open == q.open,
        open,
        s.tz,
    )))
}

/// Whether anything may be sent now: always on a channel without a window, otherwise
/// until the window's end.
fn window_open(c: &Conversation, now_ms: i64) -> bool {
    let always = wm_core::platform::descriptor::of_channel(c.channel.channel_type)
        .is_some_and(|d| d.window == wm_core::platform::Window::Always);
    always
        || c.window_expires_at
            .as_ref()
            .is_some_and(|t| t.millis() > now_ms)
}

/// One message as a thread shows it (who, when, status, its content).
pub(super) fn message(m: &Message, tz: chrono_tz::Tz) -> Markup {
    let who = match (&m.direction, m.sent_by.as_ref().map(|b| b.kind)) {
        (MessageDirection::Inbound, _) => "Customer",
        (_, Some(SenderKind::User)) => "Agent",
        (_, Some(SenderKind::Automation)) => "Automation",
        (_, Some(SenderKind::Campaign)) => "Campaign",
        _ => "Business",
    };
    html! {
        li class={ "msg " (m.direction.as_str()) } {
            span.meta {
                (who) " · " (when(tz, &m.created_at)) " · " (m.status.as_str())
                @if m.reply_to_message_id.is_some() { " · a reply to an earlier message" }
            }
            @if let Some(t) = &m.template {
                p { "Template " strong { (t.name) } @if !t.variables.is_empty() { " (" (t.variables.join(", ")) ")" } }
            }
            @if let Some(text) = &m.text { p { (text) } }
            @if let Some(media) = &m.media {
                @let label = media.caption.clone().or(media.filename.clone()).unwrap_or_else(|| m.message_type.as_str().to_lowercase());
                @if !media.stored {
                    p.muted { (label) " (being fetched)" }
                } @else if media.mime_type.as_deref().is_some_and(|t| t.starts_with("image/")) {
                    img src={ "/console/media/" (media.id) } alt=(label) loading="lazy" width="240";
                } @else if media.mime_type.as_deref().is_some_and(|t| t.starts_with("audio/")) {
                    audio controls src={ "/console/media/" (media.id) } aria-label=(label) {}
                } @else {
                    p { a href={ "/console/media/" (media.id) } download { "Download " (label) } }
                }
            }
            @if let Some(loc) = &m.location {
                p { "Location: " (loc.name.as_deref().unwrap_or("")) " " (loc.latitude) ", " (loc.longitude) }
            }
            @if let Some(i) = &m.interactive {
                @if i.buttons.is_empty() {
                    p { (i.title.as_deref().unwrap_or(&i.kind)) }
                } @else {
                    p.buttons { @for b in &i.buttons { span.badge { (b.title) } " " } }
                }
            }
            @if let Some(r) = &m.reaction { p { "Reacted " (r.emoji.as_deref().unwrap_or("")) } }
            @if let Some(e) = &m.error_message { p.muted { "Failed: " (e) } }
        }
    }
}

/// `POST /console/inbox/{id}/reply`: a text, or with buttons (one per line) an interactive
/// message the customer answers with a tap.
pub async fn reply(s: Session, Path(id): Path<Uuid>, f: Fields) -> Response {
    let Some(text) = f.text("text") else {
        return redirect(&s, &back(id), problem("Write the reply first."));
    };
    let buttons: Vec<SendButton> = f
        .raw("buttons")
        .lines()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .enumerate()
        .map(|(i, title)| SendButton {
            id: format!("button-{}", i + 1),
            title: title.to_owned(),
        })
        .collect();
    let (message_type, text, interactive) = if buttons.is_empty() {
        (SendType::Text, Some(SendText { body: text }), None)
    } else {
        let interactive = SendInteractive {
            body: text,
            buttons,
        };
        (SendType::Interactive, None, Some(interactive))
    };
    let body = SendMessage {
        message_type,
        text,
        media: None,
        interactive,
        template: None,
        reply_to_message_id: None,
    };
    post_message(&s, id, body, f.idempotency().as_deref(), "Reply sent.").await
}

/// `POST /console/inbox/{id}/template`.
pub async fn template(s: Session, Path(id): Path<Uuid>, f: Fields) -> Response {
    let Some(template_id) = f.text("templateId").and_then(|v| Uuid::parse_str(&v).ok()) else {
        return redirect(&s, &back(id), problem("Choose a template."));
    };
    let body = SendMessage {
        message_type: SendType::Template,
        text: None,
        media: None,
        interactive: None,
        template: Some(SendTemplate {
            template_id,
            variables: f.variables(template_id),
        }),
        reply_to_message_id: None,
    };
    post_message(&s, id, body, f.idempotency().as_deref(), "Template sent.").await
}

/// `POST /console/inbox/{id}/update`: assign, resolve or reopen.
pub async fn update(s: Session, Path(id): Path<Uuid>, f: Fields) -> Response {
    let (body, said) = match f.raw("action") {
        "resolve" => (
            UpdateConversation {
                status: Some(ConversationStatus::Resolved),
                assigned_to_user_id: None,
            },
            "Conversation resolved.",
        ),
        "reopen" => (
            UpdateConversation {
                status: Some(ConversationStatus::Open),
                assigned_to_user_id: None,
            },
            "Conversation reopened.",
        ),
        _ => {
            let who = match f.text("assignedToUserId").map(|v| Uuid::parse_str(&v)) {
                None => None,
                Some(Ok(u)) => Some(u),
                Some(Err(_)) => return redirect(&s, &back(id), problem("Choose someone.")),
            };
            (
                UpdateConversation {
                    status: None,
                    assigned_to_user_id: Some(who),
                },
                "Assignment saved.",
            )
        }
    };
    let answer: Result<Conversation, _> = s
        .api
        .send(Method::PATCH, &format!("/conversations/{id}"), &body, None)
        .await;
    match answer {
        Ok(_) => redirect(&s, &back(id), done(said)),
        Err(e) => redirect(&s, &back(id), failed(&e)),
    }
}

/// `POST /console/inbox/{id}/read`.
pub async fn mark_read(s: Session, Path(id): Path<Uuid>, f: Fields) -> Response {
    let answer = s
        .api
        .call(
            Method::POST,
            &format!("/conversations/{id}/read"),
            None,
            Body::empty(),
            f.idempotency().as_deref(),
        )
        .await
        .and_then(|b| crate::console::api::decode::<MarkedRead>(&b));
    match answer {
        Ok(r) => redirect(
            &s,
            &back(id),
            done(format!("{} messages marked as read.", r.marked)),
        ),
        Err(e) => redirect(&s, &back(id), failed(&e)),
    }
}

/// `GET /console/media/{id}`: a message's media, through the API.
pub async fn media(s: Session, Path(id): Path<Uuid>) -> Response {
    match s
        .api
        .call_with_type(
            Method::GET,
            &format!("/media/{id}"),
            None,
            Body::empty(),
            None,
        )
        .await
    {
        Ok((_, kind, bytes)) => {
            let kind = kind
                .and_then(|k| HeaderValue::from_str(&k).ok())
                .unwrap_or_else(|| HeaderValue::from_static("application/octet-stream"));
            (
                [
                    (header::CONTENT_TYPE, kind),
                    (
                        header::CACHE_CONTROL,
                        HeaderValue::from_static("private, max-age=3600"),
                    ),
                    (
                        header::X_CONTENT_TYPE_OPTIONS,
                        HeaderValue::from_static("nosniff"),
                    ),
                    (
                        header::CONTENT_SECURITY_POLICY,
                        HeaderValue::from_static("default-src 'none'; sandbox"),
                    ),
                ],
                bytes,
            )
                .into_response()
        }
        Err(e) => ConsoleError::from(e).into_response(),
    }
}
