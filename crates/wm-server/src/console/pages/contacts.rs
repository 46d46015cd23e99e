//! Contacts: the list with its tabs, search and filters (the API's own paging), and the
//! routes of one contact's pages ([`super::contact`], [`super::contact_form`]).

use axum::Router;
use axum::extract::{Query, State};
use axum::routing::{get, post};
use maud::html;
use wm_types::campaigns::{Audience, AudienceResult, CampaignList};
use wm_types::contacts::{BulkResult, BulkUpdateContacts, ContactList};
use wm_types::enums::Scope;
use wm_types::lookups::{LifecycleStage, List};

use super::{contact, contact_form};
use crate::console::api::with_query;
use crate::console::context::Console;
use crate::console::page::{Page, PageResult, done, failed, page, problem, redirect};
use crate::console::session::Session;
use crate::console::view::{Fields, Tabs, badge, hidden, input_hint, pager, select, when};

/// The contacts routes.
pub fn routes() -> Router<Console> {
    Router::new()
        .route("/console/contacts", get(list).post(contact_form::create))
        .route("/console/contacts/new", get(contact_form::new))
        .route("/console/contacts/bulk", post(bulk))
        .route(
            "/console/contacts/{id}",
            get(contact::show).post(contact_form::update),
        )
        .route("/console/contacts/{id}/edit", get(contact_form::edit))
        .route("/console/contacts/{id}/notes", post(contact::add_note))
        .route(
            "/console/contacts/{id}/identities",
            post(contact::add_identity),
        )
        .route("/console/contacts/{id}/delete", post(contact::delete))
}

/// The list's query, as the page's links and search form carry it.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListQuery {
    #[serde(default)]
    tab: String,
    #[serde(default)]
    q: String,
    #[serde(default)]
    tag: String,
    #[serde(default)]
    lifecycle_stage_id: String,
    #[serde(default)]
    page: Option<u64>,
}

impl ListQuery {
    fn link(&self, tab: &str, page: u64) -> String {
        let page = page.to_string();
        with_query(
            "/console/contacts",
            &[
                ("tab", tab),
                ("q", &self.q),
                ("tag", &self.tag),
                ("lifecycleStageId", &self.lifecycle_stage_id),
                ("page", if page == "1" { "" } else { &page }),
            ],
        )
    }
}

const TABS: [(&str, &str); 6] = [
    ("All", "all"),
    ("Leads", "leads"),
    ("In progress", "in_progress"),
    ("Customers", "customers"),
    ("Inactive", "inactive"),
    ("No consent", "no_consent"),
];

/// `GET /console/contacts`.
async fn list(
    State(_): State<Console>,
    s: Session,
    Query(q): Query<ListQuery>,
) -> PageResult<Page> {
    let tabs = Tabs::new(&TABS, &q.tab);
    let tab = tabs.key();
    let page_no = q.page.unwrap_or(1).to_string();
    let path = with_query(
        "/contacts",
        &[
            ("tab", tab),
            ("q", &q.q),
            ("tag", &q.tag),
            ("lifecycleStageId", &q.lifecycle_stage_id),
            ("page", &page_no),
            ("pageSize", "25"),
        ],
    );
    // The draft campaigns ticked contacts can join (only when the key may change them).
    let drafts = async {
        if !s.can(Scope::CampaignsWrite) {
            return Ok(Vec::new());
        }
        let drafts = s
            .api
            .get::<CampaignList>("/campaigns?tab=drafts&pageSize=100")
            .await?;
        Ok::<_, crate::console::api::Failure>(
            drafts
                .data
                .into_iter()
                .map(|c| (c.id.to_string(), c.name))
                .collect::<Vec<_>>(),
        )
    };
    let (list, stages, drafts) = tokio::try_join!(
        s.api.get::<ContactList>(&path),
        s.api.get::<List<LifecycleStage>>("/lifecycle-stages"),
        drafts,
    )?;
    let bulk = s.can(Scope::ContactsWrite) || !drafts.is_empty();
    let counts = [
        list.tabs.all,
        list.tabs.leads,
        list.tabs.in_progress,
        list.tabs.customers,
        list.tabs.inactive,
        list.tabs.no_consent,
    ];
    let current = tabs.label();
    let stage_options: Vec<(String, String)> = stages
        .data
        .iter()
        .map(|st| (st.id.to_string(), st.name.clone()))
        .collect();
    let tag_options: Vec<(String, String)> = list
        .summary
        .tags
        .iter()
        .map(|t| (t.clone(), t.clone()))
        .collect();
    Ok(page(
        &s,
        "Contacts",
        "Contacts",
        html! {
            h1 { "Contacts" }
            @if s.can(Scope::ContactsWrite) {
                p { a.button href="/console/contacts/new" { "New contact" } }
            }
            (tabs.render("Contact tabs", &counts, |key| q.link(key, 1)))
            form.inline method="get" action="/console/contacts" role="search" {
                input type="hidden" name="tab" value=(tab);
                div.field {
                    label for="f-q" { "Search" }
                    input id="f-q" type="search" name="q" value=(q.q) maxlength="120";
                }
                (select("Tag", "tag", &tag_options, &q.tag, Some("Any tag")))
                (select("Lifecycle stage", "lifecycleStageId", &stage_options, &q.lifecycle_stage_id, Some("Any stage")))
                button type="submit" { "Search" }
            }
            p.muted {
                (list.summary.total) " contacts · " (list.summary.with_consent) " with consent · "
                (list.summary.new_in_period) " new in " (list.summary.days) " days"
            }
            div.table-wrap {
                table {
                    caption.muted { (current) " contacts" }
                    thead {
                        tr {
                            @if bulk { th { span.muted { "Choose" } } }
                            th { "Name" } th { "Phone" } th { "Stage" } th { "Tags" } th { "Consent" } th { "Created" }
                        }
                    }
                    tbody {
                        @for c in &list.data {
                            @let name = c.full_name.as_deref().unwrap_or("Unnamed contact");
                            tr {
                                @if bulk {
                                    td {
                                        input type="checkbox" form="bulk" name="ids" value=(c.id)
                                            aria-label={ "Choose " (name) };
                                    }
                                }
                                td { a href={ "/console/contacts/" (c.id) } { (name) } }
                                td { (c.primary_phone.as_deref().unwrap_or("—")) }
                                td { (c.lifecycle_stage.as_ref().map(|st| st.name.as_str()).unwrap_or("—")) }
                                td { (c.tags.join(", ")) }
                                td {
                                    @if c.opted_out { (badge("OPTED_OUT")) }
                                    @else if c.consent.given { "Yes" } @else { "No" }
                                }
                                td { (when(s.tz, &c.created_at)) }
                            }
                        }
                    }
                }
            }
            @if list.data.is_empty() { p.muted { "No contact matches." } }
            (pager(&list.meta, |p| q.link(tab, p)))
            @if bulk && !list.data.is_empty() {
                form.stack.card id="bulk" method="post" action="/console/contacts/bulk" {
                    (hidden(&s))
                    input type="hidden" name="back" value=(q.link(tab, list.meta.page));
                    h2 { "With the chosen contacts" }
                    @if !drafts.is_empty() {
                        (select("Add to the draft campaign", "campaignId", &drafts, "", Some("No campaign")))
                    }
                    @if s.can(Scope::ContactsWrite) {
                        (select("Move to the stage", "lifecycleStageId", &stage_options, "", Some("Keep their stage")))
                        (input_hint("Add the tags", "addTags", "text", "", "Separated by commas"))
                    }
                    div { button type="submit" { "Apply to the chosen contacts" } }
                }
            }
        },
    ))
}

/// `POST /console/contacts/bulk`: the contacts ticked in the list, added to a draft
/// campaign's audience and/or moved to a stage and tagged (`/contacts/bulk`).
async fn bulk(s: Session, f: Fields) -> axum::response::Response {
    // Back to the list as it was; only a console contacts URL (never another site).
    let back = f
        .text("back")
        .filter(|b| b.starts_with("/console/contacts"))
        .unwrap_or_else(|| "/console/contacts".to_owned());
    // The list's own checkboxes: contact ids (anything else is no contact).
    let ids: Vec<uuid::Uuid> = f
        .all("ids")
        .iter()
        .filter_map(|v| uuid::Uuid::parse_str(v).ok())
        .collect();
    if ids.is_empty() {
        return redirect(&s, &back, problem("Choose contacts in the list first."));
    }
    let mut said = Vec::new();
    if let Some(campaign) = f.text("campaignId") {
        let body = Audience {
            contact_ids: Some(ids.clone()),
            ..Default::default()
        };
        match s
            .api
            .send::<AudienceResult>(
                axum::http::Method::POST,
                &format!("/campaigns/{campaign}/recipients"),
                &body,
                None,
            )
            .await
        {
            Ok(r) => said.push(format!(
                "{} added to the campaign ({} already in, {} not eligible).",
                r.added,
                r.already_in,
                r.total - r.eligible
            )),
            Err(e) => return redirect(&s, &back, failed(&e)),
        }
    }
    let stage = f
        .text("lifecycleStageId")
        .and_then(|v| uuid::Uuid::parse_str(&v).ok());
    let tags: Vec<String> = f
        .raw("addTags")
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect();
    if stage.is_some() || !tags.is_empty() {
        let body = BulkUpdateContacts {
            ids,
            lifecycle_stage_id: stage,
            add_tags: (!tags.is_empty()).then_some(tags),
            owner_id: None,
        };
        match s
            .api
            .send::<BulkResult>(
                axum::http::Method::POST,
                "/contacts/bulk",
                &body,
                f.idempotency().as_deref(),
            )
            .await
        {
            Ok(r) => said.push(format!("{} contacts updated.", r.updated)),
            Err(e) => return redirect(&s, &back, failed(&e)),
        }
    }
    if said.is_empty() {
        return redirect(
            &s,
            &back,
            problem("Choose what to do with the chosen contacts."),
        );
    }
    redirect(&s, &back, done(said.join(" ")))
}
