//! Campaigns: the list with its tabs, and a new campaign from a template and a sender
//! number with its variables. One campaign's page is [`super::campaign`].

use axum::Router;
use axum::extract::{Query, State};
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use maud::{Markup, html};
use uuid::Uuid;
use wm_types::campaigns::{Campaign, CampaignList, CreateCampaign};
use wm_types::catalog::{PhoneNumber, Template};
use wm_types::enums::Scope;
use wm_types::lookups::List;

use super::campaign;
use crate::console::context::Console;
use crate::console::page::{Page, PageResult, done, failed, flash_box, page, problem, redirect};
use crate::console::session::{Flash, Session};
use crate::console::view::{
    Fields, ListQuery, Tabs, badge, hidden, input, money, pager, pct, search_box, select, table,
    template_variables, when_opt,
};

/// The campaign routes.
pub fn routes() -> Router<Console> {
    Router::new()
        .route("/console/campaigns", get(list).post(create))
        .route("/console/campaigns/new", get(new))
        .route("/console/campaigns/{id}", get(campaign::show))
        .route("/console/campaigns/{id}/live", get(campaign::live))
        .route("/console/campaigns/{id}/audience", post(campaign::audience))
        .route("/console/campaigns/{id}/send", post(campaign::send))
        .route("/console/campaigns/{id}/pause", post(campaign::pause))
        .route("/console/campaigns/{id}/resume", post(campaign::resume))
}

const TABS: [(&str, &str); 6] = [
    ("All", "all"),
    ("Sending", "sending"),
    ("Scheduled", "scheduled"),
    ("Drafts", "drafts"),
    ("Errors", "errors"),
    ("Finished", "finished"),
];

/// `GET /console/campaigns`.
async fn list(
    State(_): State<Console>,
    s: Session,
    Query(q): Query<ListQuery>,
) -> PageResult<Page> {
    let tabs = Tabs::new(&TABS, &q.tab);
    let tab = tabs.key();
    let list: CampaignList = s.api.get(q.api("/campaigns", "tab", tab)).await?;
    let link = |tab: &str, page: u64| q.link("/console/campaigns", "tab", tab, page);
    let t = &list.tabs;
    let counts = [
        t.all,
        t.sending,
        t.scheduled,
        t.drafts,
        t.errors,
        t.finished,
    ];
    let current = tabs.label();
    let sum = &list.summary;
    Ok(page(
        &s,
        "Campaigns",
        "Campaigns",
        html! {
            h1 { "Campaigns" }
            @if s.can(Scope::CampaignsWrite) {
                p { a.button href="/console/campaigns/new" { "New campaign" } }
            }
            p.muted {
                "Last " (sum.days) " days: " (sum.sent) " sent · " (pct(sum.delivered_pct)) " delivered · "
                (pct(sum.read_pct)) " read · " (sum.replies) " replies · spend " (money(sum.spend, ""))
            }
            (tabs.render("Campaign tabs", &counts, |key| link(key, 1)))
            (search_box("/console/campaigns", "tab", tab, &q.q))
            (table(
                None,
                &format!("{current} campaigns"),
                &["Name", "Status", "Template", "#Recipients", "#Progress", "Started"],
                html! {
                        @for c in &list.data {
                            tr {
                                td { a href={ "/console/campaigns/" (c.id) } { (c.name) } }
                                td { (badge(c.status.as_str())) }
                                td { (c.template.name) }
                                td.num { (c.stats.total) }
                                td.num { (pct(c.stats.progress_pct)) }
                                td { (when_opt(s.tz, c.started_at.as_ref())) }
                            }
                        }
                },
                list.data.is_empty().then_some("No campaign here."),
            ))
            (pager(&list.meta, |p| link(tab, p)))
        },
    ))
}

/// The new-campaign form (shown again with its error when refused).
async fn form(s: &Session, typed: Option<&Fields>, error: Option<Flash>) -> PageResult<Markup> {
    let (numbers, templates) = tokio::try_join!(
        s.api.get::<List<PhoneNumber>>("/phone-numbers"),
        s.api.get::<List<Template>>("/templates"),
    )?;
    let number_options: Vec<(String, String)> = numbers
        .data
        .iter()
        .map(|n| {
            (
                n.id.to_string(),
                format!(
                    "{} ({}, {})",
                    n.display_name,
                    n.number_e164,
                    n.quality_rating.as_str()
                ),
            )
        })
        .collect();
    let template_options: Vec<(String, String)> = templates
        .data
        .iter()
        .map(|t| {
            (
                t.id.to_string(),
                format!(
                    "{} · {} · {} ({})",
                    t.name,
                    t.language,
                    t.category.as_str(),
                    t.status.as_str()
                ),
            )
        })
        .collect();
    let raw = |name: &str| typed.map(|f| f.raw(name).to_owned()).unwrap_or_default();
    let chosen = raw("templateId");
    Ok(html! {
        @if let Some(e) = &error { (flash_box(e)) }
        form.stack.card method="post" action="/console/campaigns" {
            (hidden(s))
            (input("Name", "name", "text", &raw("name"), true))
            (select("Sender number", "phoneNumberId", &number_options, &raw("phoneNumberId"), None))
            div.field {
                label for="f-templateId" { "Template" }
                select id="f-templateId" name="templateId" data-variables {
                    @for (value, text) in &template_options {
                        option value=(value) selected[*value == chosen] { (text) }
                    }
                }
            }
            @for t in &templates.data { (template_variables(t, raw)) }
            div { button type="submit" { "Create campaign" } }
        }
    })
}

/// `GET /console/campaigns/new`.
async fn new(State(_): State<Console>, s: Session) -> PageResult<Response> {
    let body = form(&s, None, None).await?;
    Ok(page(
        &s,
        "Campaigns",
        "New campaign",
        html! { h1 { "New campaign" } (body) },
    )
    .into_response())
}

fn uuid_of(f: &Fields, name: &str, what: &str) -> Result<Uuid, Flash> {
    f.text(name)
        .and_then(|v| Uuid::parse_str(&v).ok())
        .ok_or_else(|| problem(format!("Choose a {what}.")))
}

/// `POST /console/campaigns`: created as a DRAFT, then its page picks the audience.
async fn create(State(_): State<Console>, s: Session, f: Fields) -> PageResult<Response> {
    let body = (|| -> Result<CreateCampaign, Flash> {
        let template_id = uuid_of(&f, "templateId", "template")?;
        Ok(CreateCampaign {
            name: f.text("name").unwrap_or_default(),
            phone_number_id: uuid_of(&f, "phoneNumberId", "sender number")?,
            template_id,
            scheduled_at: None,
            variables: f.variables(template_id),
        })
    })();
    let sent = match body {
        Ok(body) => s
            .api
            .send::<Campaign>(
                Method::POST,
                "/campaigns",
                &body,
                f.idempotency().as_deref(),
            )
            .await
            .map_err(|e| failed(&e)),
        Err(flash) => Err(flash),
    };
    match sent {
        Ok(c) => Ok(redirect(
            &s,
            &format!("/console/campaigns/{}", c.id),
            done("Campaign created. Now choose who receives it."),
        )),
        Err(flash) => {
            let body = form(&s, Some(&f), Some(flash)).await?;
            Ok(page(
                &s,
                "Campaigns",
                "New campaign",
                html! { h1 { "New campaign" } (body) },
            )
            .with_status(StatusCode::UNPROCESSABLE_ENTITY)
            .into_response())
        }
    }
}
