//! Automations and their runs (defined by the operator; read here).

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::routing::get;
use maud::html;
use uuid::Uuid;
use wm_types::automations::{Automation, AutomationList, AutomationRun};
use wm_types::common::Page as ApiPage;

use crate::console::api::with_query;
use crate::console::context::Console;
use crate::console::page::{Page, PageResult, page};
use crate::console::session::Session;
use crate::console::view::{ListQuery, Tabs, badge, money, pager, table, when, when_opt};

/// The automation routes.
pub fn routes() -> Router<Console> {
    Router::new()
        .route("/console/automations", get(list))
        .route("/console/automations/{id}", get(show))
}

const TABS: [(&str, &str); 4] = [
    ("All", "all"),
    ("Active", "active"),
    ("Paused", "paused"),
    ("Drafts", "drafts"),
];

/// `GET /console/automations`.
async fn list(
    State(_): State<Console>,
    s: Session,
    Query(q): Query<ListQuery>,
) -> PageResult<Page> {
    let tabs = Tabs::new(&TABS, &q.tab);
    let tab = tabs.key();
    let list: AutomationList = s
        .api
        .get(with_query("/automations", &[("tab", tab)]))
        .await?;
    let sum = &list.summary;
    let counts = [
        sum.active + sum.paused + sum.paused_by_failure + sum.drafts,
        sum.active,
        sum.paused + sum.paused_by_failure,
        sum.drafts,
    ];
    let current = tabs.label();
    Ok(page(
        &s,
        "Automations",
        "Automations",
        html! {
            h1 { "Automations" }
            p.muted {
                (sum.runs7d) " runs in 7 days (" (sum.runs7d_previous) " the 7 before) · "
                (sum.templates_sent7d) " templates sent for " (money(sum.templates_cost7d, &sum.currency))
                " · " (sum.failures7d) " failures"
            }
            @if let Some(example) = &sum.failure_example { p.flash.error role="alert" { "Latest failure: " (example) } }
            (tabs.render("Automation tabs", &counts, |key| format!("/console/automations?tab={key}")))
            (table(
                None,
                &format!("{current} automations"),
                &["Name", "Status", "Trigger", "Steps", "#Runs (7 days)", "Last run"],
                html! {
                        @for a in &list.data {
                            tr {
                                td { a href={ "/console/automations/" (a.id) } { (a.name) } }
                                td { (badge(a.status.as_str())) }
                                td { (a.trigger_label) }
                                td { (a.steps_summary.join(" → ")) }
                                td.num { (a.runs7d) }
                                td { (when_opt(s.tz, a.last_run_at.as_ref())) }
                            }
                        }
                },
                list.data.is_empty().then_some("No automation here."),
            ))
        },
    ))
}

const RESULTS: [(&str, &str); 6] = [
    ("All", "all"),
    ("Completed", "completed"),
    ("Waiting", "waiting"),
    ("Condition not met", "condition"),
    ("Skipped", "skipped"),
    ("Failed", "failed"),
];

/// `GET /console/automations/{id}`.
async fn show(
    State(_): State<Console>,
    s: Session,
    Path(id): Path<Uuid>,
    Query(q): Query<ListQuery>,
) -> PageResult<Page> {
    let results = Tabs::new(&RESULTS, &q.tab);
    let result = results.key();
    let page_no = q.page_no();
    let (a, runs) = tokio::try_join!(
        s.api.get::<Automation>(format!("/automations/{id}")),
        s.api.get::<ApiPage<AutomationRun>>(with_query(
            &format!("/automations/{id}/logs"),
            &[("result", result), ("page", &page_no), ("pageSize", "25")],
        )),
    )?;
    let link = |r: &str, p: u64| format!("/console/automations/{id}?result={r}&page={p}");
    Ok(page(
        &s,
        "Automations",
        &a.name,
        html! {
            h1 { (a.name) }
            section.card {
                dl.facts {
                    dt { "Status" } dd { (badge(a.status.as_str())) @if let Some(r) = &a.paused_reason { " " (r) } }
                    dt { "Trigger" } dd { (a.trigger_label) }
                    dt { "Steps" } dd { ol { @for step in &a.steps_summary { li { (step) } } } }
                    dt { "Failures" } dd { (a.failure_count) }
                    dt { "Last run" } dd { (when_opt(s.tz, a.last_run_at.as_ref())) }
                }
            }
            h2 { "Runs" }
            (results.render("Run results", &[], |key| link(key, 1)))
            (table(
                None,
                "Runs, newest first",
                &["Contact", "Result", "Steps", "Started", "Finished", "Error"],
                html! {
                        @for r in &runs.data {
                            tr {
                                td {
                                    @if let Some(c) = &r.contact {
                                        a href={ "/console/contacts/" (c.id) } { (c.full_name.as_deref().unwrap_or("Unnamed contact")) }
                                    } @else { "—" }
                                }
                                td { (badge(&r.result.to_uppercase())) }
                                td { (r.steps.iter().map(|st| format!("{} {}", st.kind.as_str(), st.outcome)).collect::<Vec<_>>().join(" → ")) }
                                td { (when(s.tz, &r.started_at)) }
                                td { (when_opt(s.tz, r.finished_at.as_ref())) }
                                td { (r.error.as_deref().unwrap_or("")) }
                            }
                        }
                },
                runs.data.is_empty().then_some("No run here."),
            ))
            (pager(&runs.meta, |p| link(result, p)))
        },
    ))
}
