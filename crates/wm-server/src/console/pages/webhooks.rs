//! Webhooks: the list, a new webhook (its signing secret shown once, on the page it lands
//! on), one webhook's deliveries with a retry for the failed ones, pause and resume, edit
//! (URL, description, events) and delete.

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use maud::{Markup, html};
use uuid::Uuid;
use wm_types::common::Page as ApiPage;
use wm_types::enums::Scope;
use wm_types::events::EventKind;
use wm_types::webhooks::{
    CreateWebhook, Delivery, DeliveryStatus, UpdateWebhook, Webhook, WebhookCreated, WebhookStatus,
};

use crate::console::api::{decode, with_query};
use crate::console::context::Console;
use crate::console::page::{
    PageResult, delete_confirmed, done, failed, flash_box, page, problem, redirect,
};
use crate::console::session::{self, Flash, Session};
use crate::console::view::{
    Fields, badge, checkbox, delete_form, hidden, input, pager, table, when, when_opt,
};

/// The cookie that carries a new webhook's secret to the one page that shows it.
const SECRET_COOKIE: &str = "wm_console_secret";

/// The webhook routes.
pub fn routes() -> Router<Console> {
    Router::new()
        .route("/console/webhooks", get(list).post(create))
        .route("/console/webhooks/new", get(new))
        .route("/console/webhooks/{id}", get(show).post(update))
        .route("/console/webhooks/{id}/edit", get(edit).post(save))
        .route("/console/webhooks/{id}/delete", post(delete))
        .route(
            "/console/webhooks/{id}/deliveries/{delivery}/retry",
            post(retry),
        )
}

/// `GET /console/webhooks`.
async fn list(State(_): State<Console>, s: Session) -> PageResult<Response> {
    let hooks: wm_types::lookups::List<Webhook> = s.api.get("/webhooks").await?;
    Ok(page(
        &s,
        "Webhooks",
        "Webhooks",
        html! {
            h1 { "Webhooks" }
            @if s.can(Scope::WebhooksWrite) {
                p { a.button href="/console/webhooks/new" { "New webhook" } }
            }
            (table(
                None,
                "Endpoints that receive wm's events",
                &["URL", "Status", "Events", "#Failures in a row", "Created"],
                html! {
                        @for w in &hooks.data {
                            tr {
                                td { a href={ "/console/webhooks/" (w.id) } { (w.url) } }
                                td { (badge(w.status.as_str())) }
                                td { (w.events.iter().map(|e| e.as_str()).collect::<Vec<_>>().join(", ")) }
                                td.num { (w.consecutive_failures) }
                                td { (when(s.tz, &w.created_at)) }
                            }
                        }
                },
                hooks.data.is_empty().then_some("No webhook yet."),
            ))
        },
    )
    .into_response())
}

/// What the webhook form shows: what was typed, or the webhook's own values.
#[derive(Default)]
struct Values {
    url: String,
    description: String,
    events: Vec<String>,
}

impl Values {
    fn typed(f: &Fields) -> Values {
        Values {
            url: f.raw("url").to_owned(),
            description: f.raw("description").to_owned(),
            events: f.all("events"),
        }
    }

    fn of(w: &Webhook) -> Values {
        Values {
            url: w.url.clone(),
            description: w.description.clone().unwrap_or_default(),
            events: w.events.iter().map(|e| e.as_str().to_owned()).collect(),
        }
    }
}

/// The form of a new webhook (`action` `/console/webhooks`) or of an edit.
fn form(s: &Session, action: &str, submit: &str, v: &Values, error: Option<&Flash>) -> Markup {
    html! {
        @if let Some(e) = error { (flash_box(e)) }
        form.stack.card method="post" action=(action) {
            (hidden(s))
            (input("URL", "url", "url", &v.url, true))
            (input("Description", "description", "text", &v.description, false))
            fieldset {
                legend { "Events" }
                @for kind in EventKind::ALL {
                    (checkbox(kind.as_str(), "events", kind.as_str(), v.events.iter().any(|c| c == kind.as_str())))
                }
            }
            div { button type="submit" { (submit) } }
        }
    }
}

/// The form shown again after the API refused it, with what was typed and why.
fn refused(
    s: &Session,
    title: &str,
    action: &str,
    submit: &str,
    f: &Fields,
    why: &Flash,
) -> Response {
    page(
        s,
        "Webhooks",
        title,
        html! { h1 { (title) } (form(s, action, submit, &Values::typed(f), Some(why))) },
    )
    .with_status(StatusCode::UNPROCESSABLE_ENTITY)
    .into_response()
}

/// The ticked events, each an event kind.
fn events(f: &Fields) -> Result<Vec<EventKind>, Flash> {
    f.all("events")
        .iter()
        .map(|e| EventKind::parse(e).ok_or_else(|| problem(format!("{e} is not an event."))))
        .collect()
}

/// `GET /console/webhooks/new`.
async fn new(State(_): State<Console>, s: Session) -> Response {
    let form = form(
        &s,
        "/console/webhooks",
        "Create webhook",
        &Values::default(),
        None,
    );
    page(
        &s,
        "Webhooks",
        "New webhook",
        html! { h1 { "New webhook" } (form) },
    )
    .into_response()
}

/// `POST /console/webhooks`.
async fn create(State(_): State<Console>, s: Session, f: Fields) -> Response {
    let sent = match events(&f) {
        Ok(events) => s
            .api
            .send::<WebhookCreated>(
                Method::POST,
                "/webhooks",
                &CreateWebhook {
                    url: f.text("url").unwrap_or_default(),
                    events,
                    description: f.text("description"),
                },
                f.idempotency().as_deref(),
            )
            .await
            .map_err(|e| failed(&e)),
        Err(flash) => Err(flash),
    };
    match sent {
        Ok(created) => {
            let to = format!("/console/webhooks/{}", created.webhook.id);
            let mut response = redirect(&s, &to, done("Webhook created."));
            response.headers_mut().append(
                header::SET_COOKIE,
                session::set_cookie(s.secure, SECRET_COOKIE, &created.secret, 120),
            );
            response
        }
        Err(flash) => refused(
            &s,
            "New webhook",
            "/console/webhooks",
            "Create webhook",
            &f,
            &flash,
        ),
    }
}

/// `GET /console/webhooks/{id}/edit`.
async fn edit(State(_): State<Console>, s: Session, Path(id): Path<Uuid>) -> PageResult<Response> {
    let w: Webhook = s.api.get(format!("/webhooks/{id}")).await?;
    let action = format!("/console/webhooks/{id}/edit");
    let form = form(&s, &action, "Save webhook", &Values::of(&w), None);
    Ok(page(
        &s,
        "Webhooks",
        "Edit webhook",
        html! { h1 { "Edit webhook" } (form) },
    )
    .into_response())
}

/// `POST /console/webhooks/{id}/edit`: the URL, description and events (its secret stays).
async fn save(s: Session, Path(id): Path<Uuid>, f: Fields) -> Response {
    let sent = match events(&f) {
        Ok(events) => s
            .api
            .send::<Webhook>(
                Method::PATCH,
                &format!("/webhooks/{id}"),
                &UpdateWebhook {
                    url: Some(f.text("url").unwrap_or_default()),
                    events: Some(events),
                    description: Some(f.text("description")),
                    status: None,
                },
                None,
            )
            .await
            .map_err(|e| failed(&e)),
        Err(flash) => Err(flash),
    };
    match sent {
        Ok(_) => redirect(
            &s,
            &format!("/console/webhooks/{id}"),
            done("Webhook saved."),
        ),
        Err(flash) => refused(
            &s,
            "Edit webhook",
            &format!("/console/webhooks/{id}/edit"),
            "Save webhook",
            &f,
            &flash,
        ),
    }
}

/// `POST /console/webhooks/{id}/delete`: its deliveries stop and its log goes with it.
async fn delete(s: Session, Path(id): Path<Uuid>, f: Fields) -> Response {
    let back = format!("/console/webhooks/{id}");
    let api = format!("/webhooks/{id}");
    delete_confirmed(&s, &f, "webhook", &api, (&back, "/console/webhooks")).await
}

#[derive(Debug, Default, serde::Deserialize)]
struct DeliveriesQuery {
    #[serde(default)]
    page: Option<u64>,
}

/// `GET /console/webhooks/{id}`: a new webhook's secret is shown here once.
async fn show(
    State(_): State<Console>,
    s: Session,
    Path(id): Path<Uuid>,
    Query(q): Query<DeliveriesQuery>,
    headers: axum::http::HeaderMap,
) -> PageResult<Response> {
    let page_no = q.page.unwrap_or(1).to_string();
    let (w, deliveries) = tokio::try_join!(
        s.api.get::<Webhook>(format!("/webhooks/{id}")),
        s.api.get::<ApiPage<Delivery>>(with_query(
            &format!("/webhooks/{id}/deliveries"),
            &[("page", &page_no), ("pageSize", "25")],
        )),
    )?;
    let secret = session::cookie(&headers, SECRET_COOKIE)
        .filter(|v| !v.is_empty())
        .map(str::to_owned);
    let write = s.can(Scope::WebhooksWrite);
    let mut response = page(
        &s,
        "Webhooks",
        &w.url,
        html! {
            h1 { "Webhook" }
            @if let Some(secret) = &secret {
                section.card aria-labelledby="secret-h" {
                    h2 id="secret-h" { "Signing secret" }
                    p { "Copy it now: it is shown only this once. Your endpoint checks each delivery's signature with it." }
                    code.secret id="webhook-secret" { (secret) }
                }
            }
            section.card {
                dl.facts {
                    dt { "URL" } dd { (w.url) }
                    dt { "Status" } dd { (badge(w.status.as_str())) }
                    dt { "Events" } dd { (w.events.iter().map(|e| e.as_str()).collect::<Vec<_>>().join(", ")) }
                    dt { "Description" } dd { (w.description.as_deref().unwrap_or("—")) }
                    dt { "Failures in a row" } dd { (w.consecutive_failures) }
                    dt { "Paused" } dd { (when_opt(s.tz, w.paused_at.as_ref())) }
                }
                @if write {
                    p { a.button href={ "/console/webhooks/" (id) "/edit" } { "Edit webhook" } }
                    form.inline method="post" action={ "/console/webhooks/" (id) } {
                        (hidden(&s))
                        @if w.status == WebhookStatus::Paused {
                            button type="submit" name="status" value="ACTIVE" { "Resume deliveries" }
                        } @else {
                            button.secondary type="submit" name="status" value="PAUSED" { "Pause deliveries" }
                        }
                    }
                }
            }
            h2 { "Deliveries" }
            div.table-wrap {
                table id="deliveries" {
                    caption.muted { "Newest first" }
                    thead { tr { th { "Event" } th { "Status" } th.num { "Attempts" } th { "Last answer" } th { "Next attempt" } th { "Created" } th { span.muted { "Action" } } } }
                    tbody {
                        @for d in &deliveries.data {
                            tr {
                                td { (d.event.as_str()) }
                                td { (badge(d.status.as_str())) }
                                td.num { (d.attempts) }
                                td { (last_answer(d)) }
                                td { (when_opt(s.tz, d.next_attempt_at.as_ref())) }
                                td { (when(s.tz, &d.created_at)) }
                                td {
                                    @if write && d.status == DeliveryStatus::Failed {
                                        form method="post" action={ "/console/webhooks/" (id) "/deliveries/" (d.id) "/retry" } {
                                            (hidden(&s))
                                            button type="submit" aria-label={ "Retry the " (d.event.as_str()) " delivery of " (when(s.tz, &d.created_at)) } { "Retry" }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            @if deliveries.data.is_empty() { p.muted { "Nothing delivered yet." } }
            (pager(&deliveries.meta, |p| format!("/console/webhooks/{id}?page={p}")))
            @if write {
                (delete_form(&s, &format!("/console/webhooks/{id}/delete"), "webhook",
                    "Its deliveries stop at once, including those waiting for another attempt, and its delivery log goes with it."))
            }
        },
    )
    .into_response();
    if secret.is_some() {
        response.headers_mut().append(
            header::SET_COOKIE,
            session::clear_cookie(s.secure, SECRET_COOKIE),
        );
    }
    Ok(response)
}

fn last_answer(d: &Delivery) -> Markup {
    match d.attempt_log.last() {
        None => html! { "—" },
        Some(a) => html! {
            @if let Some(code) = a.status_code { "HTTP " (code) } @else { (a.error.as_deref().unwrap_or("no answer")) }
            span.muted { " (" (a.duration_ms) " ms)" }
        },
    }
}

/// `POST /console/webhooks/{id}`: pause or resume.
async fn update(s: Session, Path(id): Path<Uuid>, f: Fields) -> Response {
    let back = format!("/console/webhooks/{id}");
    let Some(status) = WebhookStatus::parse(f.raw("status")) else {
        return redirect(&s, &back, problem("Choose pause or resume."));
    };
    let body = UpdateWebhook {
        status: Some(status),
        ..Default::default()
    };
    match s
        .api
        .send::<Webhook>(Method::PATCH, &format!("/webhooks/{id}"), &body, None)
        .await
    {
        Ok(w) => redirect(
            &s,
            &back,
            done(format!("Webhook {}.", w.status.as_str().to_lowercase())),
        ),
        Err(e) => redirect(&s, &back, failed(&e)),
    }
}

/// `POST /console/webhooks/{id}/deliveries/{delivery}/retry`.
async fn retry(s: Session, Path((id, delivery)): Path<(Uuid, Uuid)>, f: Fields) -> Response {
    let back = format!("/console/webhooks/{id}");
    let answer = s
        .api
        .call(
            Method::POST,
            &format!("/webhooks/{id}/deliveries/{delivery}/retry"),
            None,
            Body::empty(),
            f.idempotency().as_deref(),
        )
        .await
        .and_then(|b| decode::<Delivery>(&b));
    match answer {
        Ok(_) => redirect(
            &s,
            &back,
            done("The delivery is scheduled for another attempt now."),
        ),
        Err(e) => redirect(&s, &back, failed(&e)),
    }
}
