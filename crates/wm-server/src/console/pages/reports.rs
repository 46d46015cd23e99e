//! Reports: the six dashboard reports as totals, a bar chart of their main daily figure
//! (SVG drawn here) and the day-by-day table, for a period (the API's default: 30 days).

use axum::Router;
use axum::extract::{Query, State};
use axum::routing::get;
use maud::{Markup, html};
use serde::de::DeserializeOwned;
use wm_types::reports::{
    CampaignDay, CampaignTotals, CommercialDay, CommercialTotals, ConversationDay,
    ConversationTotals, LifecycleDay, LifecycleTotals, Report, TeamDay, TeamTotals, WalletDay,
    WalletTotals,
};

use crate::console::api::with_query;
use crate::console::chart;
use crate::console::context::Console;
use crate::console::page::{Page, PageResult, page};
use crate::console::session::Session;
use crate::console::view::{input, money};

/// The report routes.
pub fn routes() -> Router<Console> {
    Router::new().route("/console/reports", get(show))
}

#[derive(Debug, Default, serde::Deserialize)]
struct ReportQuery {
    #[serde(default)]
    report: String,
    #[serde(default)]
    from: String,
    #[serde(default)]
    to: String,
}

const REPORTS: [(&str, &str); 6] = [
    ("Campaigns", "campaigns"),
    ("Conversations", "conversations"),
    ("Commercial", "commercial"),
    ("Lifecycle", "lifecycle"),
    ("Wallet", "wallet"),
    ("Team", "team"),
];

/// A report's figures as rows of text: the totals, the chart's series, the day table.
struct Shown {
    totals: Vec<(&'static str, String)>,
    chart_title: &'static str,
    chart: Vec<(String, f64)>,
    head: Vec<&'static str>,
    rows: Vec<Vec<String>>,
    extra: Option<Markup>,
}

async fn fetch<T: DeserializeOwned, D: DeserializeOwned>(
    s: &Session,
    kind: &str,
    q: &ReportQuery,
) -> Result<Report<T, D>, crate::console::api::Failure> {
    s.api
        .get(with_query(
            &format!("/reports/{kind}"),
            &[("from", &q.from), ("to", &q.to)],
        ))
        .await
}

/// `GET /console/reports`.
async fn show(
    State(_): State<Console>,
    s: Session,
    Query(q): Query<ReportQuery>,
) -> PageResult<Page> {
    let kind = REPORTS
        .iter()
        .find(|(_, k)| *k == q.report)
        .map(|(_, k)| *k)
        .unwrap_or("campaigns");
    let (period, shown) = match kind {
        "conversations" => {
            let r = fetch::<ConversationTotals, ConversationDay>(&s, kind, &q).await?;
            let t = &r.totals;
            (
                r.period.clone(),
                Shown {
                    totals: vec![
                        ("Opened", t.opened.to_string()),
                        ("Resolved", t.resolved.to_string()),
                        ("Open now", t.open_now.to_string()),
                        (
                            "Average resolution (min)",
                            t.avg_resolution_minutes.to_string(),
                        ),
                    ],
                    chart_title: "Conversations opened per day",
                    chart: r
                        .series
                        .iter()
                        .map(|d| (d.date.clone(), d.opened as f64))
                        .collect(),
                    head: vec!["Date", "Opened", "Resolved"],
                    rows: r
                        .series
                        .iter()
                        .map(|d| vec![d.date.clone(), d.opened.to_string(), d.resolved.to_string()])
                        .collect(),
                    extra: None,
                },
            )
        }
        "commercial" => {
            let r = fetch::<CommercialTotals, CommercialDay>(&s, kind, &q).await?;
            let t = &r.totals;
            (
                r.period.clone(),
                Shown {
                    totals: vec![
                        ("New contacts", t.new_contacts.to_string()),
                        ("New customers", t.new_customers.to_string()),
                        ("Deals created", t.deals_created.to_string()),
                        ("Deals value", money(t.deals_value, "")),
                        ("Deals won", t.deals_won.to_string()),
                        ("Won value", money(t.deals_won_value, "")),
                    ],
                    chart_title: "New contacts per day",
                    chart: r
                        .series
                        .iter()
                        .map(|d| (d.date.clone(), d.new_contacts as f64))
                        .collect(),
                    head: vec![
                        "Date",
                        "New contacts",
                        "New customers",
                        "Deals",
                        "Deals value",
                    ],
                    rows: r
                        .series
                        .iter()
                        .map(|d| {
                            vec![
                                d.date.clone(),
                                d.new_contacts.to_string(),
                                d.new_customers.to_string(),
                                d.deals_created.to_string(),
                                money(d.deals_value, ""),
                            ]
                        })
                        .collect(),
                    extra: None,
                },
            )
        }
        "lifecycle" => {
            let r = fetch::<LifecycleTotals, LifecycleDay>(&s, kind, &q).await?;
            let extra = html! {
                h2 { "By stage" }
                div.table-wrap { table {
                    thead { tr { th scope="col" { "Stage" } th.num scope="col" { "Contacts" } th.num scope="col" { "Entered" } } }
                    tbody { @for st in &r.totals.by_stage { tr { td { (st.stage) } td.num { (st.contacts) } td.num { (st.entered) } } } }
                } }
            };
            (
                r.period.clone(),
                Shown {
                    totals: vec![("Stage changes", r.totals.stage_changes.to_string())],
                    chart_title: "Stage changes per day",
                    chart: r
                        .series
                        .iter()
                        .map(|d| (d.date.clone(), d.stage_changes as f64))
                        .collect(),
                    head: vec!["Date", "Stage changes"],
                    rows: r
                        .series
                        .iter()
                        .map(|d| vec![d.date.clone(), d.stage_changes.to_string()])
                        .collect(),
                    extra: Some(extra),
                },
            )
        }
        "wallet" => {
            let r = fetch::<WalletTotals, WalletDay>(&s, kind, &q).await?;
            let t = &r.totals;
            (
                r.period.clone(),
                Shown {
                    totals: vec![
                        ("Top-ups", money(t.top_ups, "")),
                        ("Charges", money(t.charges, "")),
                        ("Refunds", money(t.refunds, "")),
                        ("Net", money(t.net, "")),
                        ("Balance", money(t.balance, "")),
                    ],
                    chart_title: "Charges per day",
                    chart: r
                        .series
                        .iter()
                        .map(|d| (d.date.clone(), d.charges.to_decimal()))
                        .collect(),
                    head: vec!["Date", "Top-ups", "Charges", "Refunds", "Balance"],
                    rows: r
                        .series
                        .iter()
                        .map(|d| {
                            vec![
                                d.date.clone(),
                                money(d.top_ups, ""),
                                money(d.charges, ""),
                                money(d.refunds, ""),
                                money(d.balance, ""),
                            ]
                        })
                        .collect(),
                    extra: None,
                },
            )
        }
        "team" => {
            let r = fetch::<TeamTotals, TeamDay>(&s, kind, &q).await?;
            let extra = html! {
                h2 { "By member" }
                div.table-wrap { table {
                    thead { tr { th scope="col" { "Member" } th.num scope="col" { "Contacts owned" } th.num scope="col" { "Notes" } th.num scope="col" { "Assigned" } th.num scope="col" { "Resolved" } } }
                    tbody { @for m in &r.totals.members { tr { td { (m.full_name) } td.num { (m.contacts_owned) } td.num { (m.notes_written) } td.num { (m.conversations_assigned) } td.num { (m.conversations_resolved) } } } }
                } }
            };
            (
                r.period.clone(),
                Shown {
                    totals: vec![
                        ("Notes written", r.totals.notes_written.to_string()),
                        (
                            "Conversations resolved",
                            r.totals.conversations_resolved.to_string(),
                        ),
                    ],
                    chart_title: "Conversations resolved per day",
                    chart: r
                        .series
                        .iter()
                        .map(|d| (d.date.clone(), d.conversations_resolved as f64))
                        .collect(),
                    head: vec!["Date", "Notes", "Resolved"],
                    rows: r
                        .series
                        .iter()
                        .map(|d| {
                            vec![
                                d.date.clone(),
                                d.notes_written.to_string(),
                                d.conversations_resolved.to_string(),
                            ]
                        })
                        .collect(),
                    extra: Some(extra),
                },
            )
        }
        _ => {
            let r = fetch::<CampaignTotals, CampaignDay>(&s, "campaigns", &q).await?;
            let t = &r.totals;
            (
                r.period.clone(),
                Shown {
                    totals: vec![
                        ("Campaigns", t.campaigns.to_string()),
                        ("Sent", t.sent.to_string()),
                        ("Delivered", t.delivered.to_string()),
                        ("Read", t.read.to_string()),
                        ("Replied", t.replied.to_string()),
                        ("Failed", t.failed.to_string()),
                        ("Spend", money(t.spend, "")),
                    ],
                    chart_title: "Messages sent per day",
                    chart: r
                        .series
                        .iter()
                        .map(|d| (d.date.clone(), d.sent as f64))
                        .collect(),
                    head: vec![
                        "Date",
                        "Sent",
                        "Delivered",
                        "Read",
                        "Replied",
                        "Failed",
                        "Spend",
                    ],
                    rows: r
                        .series
                        .iter()
                        .map(|d| {
                            vec![
                                d.date.clone(),
                                d.sent.to_string(),
                                d.delivered.to_string(),
                                d.read.to_string(),
                                d.replied.to_string(),
                                d.failed.to_string(),
                                money(d.spend, ""),
                            ]
                        })
                        .collect(),
                    extra: None,
                },
            )
        }
    };
    let label = REPORTS
        .iter()
        .find(|(_, k)| *k == kind)
        .map(|(l, _)| *l)
        .unwrap_or("Campaigns");
    Ok(page(
        &s,
        "Reports",
        "Reports",
        html! {
            h1 { "Reports" }
            nav aria-label="Reports" {
                ul.tabs {
                    @for (l, k) in REPORTS {
                        li {
                            @let href = with_query("/console/reports", &[("report", k), ("from", &q.from), ("to", &q.to)]);
                            @if k == kind { a href=(href) aria-current="page" { (l) } } @else { a href=(href) { (l) } }
                        }
                    }
                }
            }
            form.inline method="get" action="/console/reports" {
                input type="hidden" name="report" value=(kind);
                (input("From", "from", "date", &q.from, false))
                (input("To", "to", "date", &q.to, false))
                button type="submit" { "Show" }
            }
            h2 { (label) ", " (period.from) " to " (period.to) " (" (period.timezone) ")" }
            div.grid {
                @for (name, value) in &shown.totals {
                    div.card { span.muted { (name) } span.stat { (value) } }
                }
            }
            (chart::bars("report-chart", shown.chart_title, &shown.chart))
            @if let Some(extra) = &shown.extra { (extra) }
            h2 { "Day by day" }
            div.table-wrap {
                table {
                    thead { tr { @for h in &shown.head { th scope="col" { (h) } } } }
                    tbody { @for row in &shown.rows { tr { @for cell in row { td { (cell) } } } } }
                }
            }
        },
    ))
}
