//! One campaign: its live progress and funnel; while a draft, the audience, the cost
//! preview by market with the wallet after sending, and the send form (now, scheduled or
//! staggered); pause and resume; the recipients with their filters.

use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::Method;
use axum::response::Response;
use maud::{Markup, html};
use uuid::Uuid;
use wm_types::campaigns::{
    Audience, AudienceResult, Campaign, CampaignStatus, CostPreview, Recipient, SendCampaign,
    SendWhen,
};
use wm_types::common::{Page as ApiPage, Timestamp};
use wm_types::enums::Scope;
use wm_types::lookups::{LifecycleStage, List};

use crate::console::answer::fragment;
use crate::console::api::{decode, with_query};
use crate::console::chart;
use crate::console::context::Console;
use crate::console::page::{Page, PageResult, done, failed, page, problem, redirect};
use crate::console::session::{Flash, Session};
use crate::console::view::{
    Fields, ListQuery, Tabs, badge, hidden, local_time, money, pager, pct, table, when_opt,
};

const FILTERS: [(&str, &str); 6] = [
    ("All", "all"),
    ("Pending", "pending"),
    ("Delivered", "delivered"),
    ("Read", "read"),
    ("Replied", "replied"),
    ("Failed", "failed"),
];

/// `GET /console/campaigns/{id}`.
pub async fn show(
    State(_): State<Console>,
    s: Session,
    Path(id): Path<Uuid>,
    Query(q): Query<ListQuery>,
) -> PageResult<Page> {
    let filters = Tabs::new(&FILTERS, &q.tab);
    let filter = filters.key();
    let page_no = q.page_no();
    let (c, recipients) = tokio::try_join!(
        s.api.get::<Campaign>(format!("/campaigns/{id}")),
        s.api.get::<ApiPage<Recipient>>(with_query(
            &format!("/campaigns/{id}/recipients"),
            &[("filter", filter), ("page", &page_no), ("pageSize", "25")],
        )),
    )?;
    let draft = c.status == CampaignStatus::Draft && s.can(Scope::CampaignsWrite);
    let preview = if draft && c.stats.total > 0 {
        Some(
            s.api
                .get::<CostPreview>(format!("/campaigns/{id}/preview-cost"))
                .await?,
        )
    } else {
        None
    };
    let stages = if draft && s.can(Scope::ContactsRead) {
        s.api
            .get::<List<LifecycleStage>>("/lifecycle-stages")
            .await?
            .data
    } else {
        Vec::new()
    };
    let link = |f: &str, p: u64| {
        let p = p.to_string();
        with_query(
            &format!("/console/campaigns/{id}"),
            &[("filter", f), ("page", &p)],
        )
    };
    let counts: Vec<u64> = FILTERS.iter().map(|(_, key)| count_of(&c, key)).collect();
    let current = filters.label();
    Ok(page(
        &s,
        "Campaigns",
        &c.name,
        html! {
            h1 { (c.name) }
            p.muted {
                "Template " strong { (c.template.name) } " (" (c.template.category.as_str()) ") from "
                (c.phone_number.display_name) " " (c.phone_number.number_e164)
            }
            (progress(&c, s.tz))
            @if s.can(Scope::CampaignsWrite) {
                @if c.status == CampaignStatus::Sending {
                    form method="post" action={ "/console/campaigns/" (id) "/pause" } {
                        (hidden(&s)) button.secondary type="submit" { "Pause campaign" }
                    }
                }
                @if c.status == CampaignStatus::Paused {
                    form method="post" action={ "/console/campaigns/" (id) "/resume" } {
                        (hidden(&s)) button type="submit" { "Resume campaign" }
                    }
                }
            }
            @if draft {
                (audience_form(&s, id, &stages))
                @if let Some(p) = &preview { (cost(p)) (send_form(&s, id, p)) }
            }
            section aria-labelledby="recipients-h" {
                h2 id="recipients-h" { "Recipients" }
                (filters.render("Recipient filters", &counts, |key| link(key, 1)))
                (table(
                    Some("recipients"),
                    &format!("{current} recipients"),
                    &["Contact", "Phone", "Market", "Status", "Sent", "#Cost", "Error"],
                    html! {
                            @for r in &recipients.data {
                                tr {
                                    td { a href={ "/console/contacts/" (r.contact.id) } { (r.contact.full_name.as_deref().unwrap_or("Unnamed contact")) } }
                                    td { (r.contact.primary_phone.as_deref().unwrap_or("—")) }
                                    td { (r.market.as_deref().unwrap_or("—")) }
                                    td { (badge(r.status.as_str())) }
                                    td { (when_opt(s.tz, r.sent_at.as_ref())) }
                                    td.num { (money(r.total_cost, "")) }
                                    td { (r.error_message.as_deref().unwrap_or("")) }
                                }
                            }
                    },
                    recipients.data.is_empty().then_some("No recipient here."),
                ))
                (pager(&recipients.meta, |p| link(filter, p)))
            }
        },
    ))
}

fn count_of(c: &Campaign, filter: &str) -> u64 {
    let st = &c.stats;
    match filter {
        "pending" => st.pending,
        "delivered" => st.delivered,
        "read" => st.read,
        "replied" => st.replied,
        "failed" => st.failed,
        _ => st.total,
    }
}

/// Status, progress and funnel; refreshing itself while the campaign sends or waits.
fn progress(c: &Campaign, tz: chrono_tz::Tz) -> Markup {
    let moving = matches!(
        c.status,
        CampaignStatus::Sending | CampaignStatus::Scheduled
    );
    let live = moving.then(|| format!("/console/campaigns/{}/live", c.id));
    let st = &c.stats;
    let funnel: Vec<(String, f64)> = [
        ("Recipients", st.total),
        ("Sent", st.sent),
        ("Delivered", st.delivered),
        ("Read", st.read),
        ("Replied", st.replied),
        ("Failed", st.failed),
    ]
    .iter()
    .map(|(l, v)| ((*l).to_owned(), *v as f64))
    .collect();
    html! {
        section.card aria-labelledby="progress-h" aria-live="polite" data-live=[live] {
            h2 id="progress-h" { "Progress" }
            p { "Status: " strong id="campaign-status" { (c.status.as_str()) } }
            @if let Some(reason) = &c.stop_reason { p.flash.error role="alert" { "Stopped: " (reason) } }
            label for="campaign-progress" { (pct(st.progress_pct)) " of the recipients handled" }
            progress id="campaign-progress" max="100" value=(format!("{:.0}", st.progress_pct)) { (pct(st.progress_pct)) }
            dl.facts {
                dt { "Scheduled" } dd { (when_opt(tz, c.scheduled_at.as_ref())) }
                dt { "Started" } dd { (when_opt(tz, c.started_at.as_ref())) }
                dt { "Completed" } dd { (when_opt(tz, c.completed_at.as_ref())) }
                dt { "Cost so far" } dd { (c.real_cost.map(|m| money(m, "")).unwrap_or_else(|| "—".into())) }
            }
            div id="funnel" {
                h3 { "Funnel" }
                (chart::bars("funnel-chart", "Campaign funnel", &funnel))
                table {
                    thead { tr { @for (label, _) in &funnel { th.num scope="col" { (label) } } } }
                    tbody { tr { @for (_, v) in &funnel { td.num { (v) } } } }
                }
            }
            @if let Some(errors) = c.errors_by_reason.as_ref().filter(|e| !e.is_empty()) {
                h3 { "Failures by reason" }
                ul { @for e in errors { li { (e.reason) ": " (e.count) } } }
            }
        }
    }
}

fn audience_form(s: &Session, id: Uuid, stages: &[LifecycleStage]) -> Markup {
    html! {
        section.card aria-labelledby="audience-h" {
            h2 id="audience-h" { "Audience" }
            p.hint { "Only contacts with consent and a phone number are added; adding again adds only the new ones." }
            form.stack method="post" action={ "/console/campaigns/" (id) "/audience" } {
                (hidden(s))
                fieldset data-choice {
                    legend { "Who receives it" }
                    label.check for="src-all" { input id="src-all" type="radio" name="source" value="all" checked; "Everyone with consent" }
                    label.check for="src-tag" { input id="src-tag" type="radio" name="source" value="tag"; "Contacts with a tag" }
                    div.field {
                        label for="f-tag" { "Tag" }
                        input id="f-tag" type="text" name="tag" maxlength="60" data-for="tag";
                    }
                    @if !stages.is_empty() {
                        label.check for="src-stage" { input id="src-stage" type="radio" name="source" value="stage"; "Contacts in a lifecycle stage" }
                        div.field {
                            label for="f-stage" { "Lifecycle stage" }
                            select id="f-stage" name="lifecycleStageId" data-for="stage" {
                                @for st in stages { option value=(st.id) { (st.name) } }
                            }
                        }
                    }
                    label.check for="src-ids" { input id="src-ids" type="radio" name="source" value="ids"; "These contacts" }
                    div.field {
                        label for="f-ids" { "Contact ids" }
                        span.hint id="f-ids-hint" { "One per line or separated by commas (up to 20,000)." }
                        textarea id="f-ids" name="contactIds" data-for="ids" aria-describedby="f-ids-hint" {}
                    }
                }
                div { button type="submit" { "Add recipients" } }
            }
        }
    }
}

fn cost(p: &CostPreview) -> Markup {
    html! {
        section.card id="cost-preview" aria-labelledby="cost-h" {
            h2 id="cost-h" { "Cost" }
            div.table-wrap {
                table {
                    caption.muted { "By market" }
                    thead { tr { th scope="col" { "Market" } th.num scope="col" { "Recipients" } th.num scope="col" { "Price each" } th.num scope="col" { "Subtotal" } } }
                    tbody {
                        @for m in &p.by_market {
                            tr { td { (m.label) " (" (m.market) ")" } td.num { (m.recipient_count) } td.num { (money(m.total_cost, &p.currency)) } td.num { (money(m.subtotal, &p.currency)) } }
                        }
                    }
                    tfoot { tr { th scope="row" { "Total" } td.num { (p.priceable_count) } td {} td.num { strong { (money(p.estimated_total, &p.currency)) } } } }
                }
            }
            @if p.unpriceable_count > 0 {
                p.muted { (p.unpriceable_count) " recipients have a number of no known market: they are neither sent nor charged." }
            }
            @if let Some(left) = p.included_utility_remaining { p.muted { (left) " included Utility messages left." } }
            dl.facts {
                dt { "Wallet now" } dd { (money(p.wallet.balance, &p.currency)) }
                dt { "Wallet after sending" } dd id="wallet-after" { (money(p.wallet.after_send, &p.currency)) }
            }
            @if !p.wallet.sufficient {
                p.flash.error role="alert" { "The wallet does not cover this campaign: top it up before sending." }
            }
        }
    }
}

fn send_form(s: &Session, id: Uuid, p: &CostPreview) -> Markup {
    html! {
        section.card aria-labelledby="send-h" {
            h2 id="send-h" { "Send" }
            form.stack method="post" action={ "/console/campaigns/" (id) "/send" } {
                (hidden(s))
                fieldset {
                    legend { "When" }
                    label.check for="when-now" { input id="when-now" type="radio" name="when" value="now" checked; "Now" }
                    label.check for="when-scheduled" { input id="when-scheduled" type="radio" name="when" value="scheduled"; "At a time" }
                    label.check for="when-staggered" { input id="when-staggered" type="radio" name="when" value="staggered"; "In batches" }
                }
                div.field {
                    label for="f-at" { "Time (" (s.tz.name()) "), for “At a time”" }
                    input id="f-at" type="datetime-local" name="scheduledAt";
                }
                div.field {
                    label for="f-batch" { "Batch size, for “In batches” (10–5000)" }
                    input id="f-batch" type="number" name="batchSize" min="10" max="5000";
                }
                div.field {
                    label for="f-interval" { "Minutes between batches (1–1440)" }
                    input id="f-interval" type="number" name="batchIntervalMin" min="1" max="1440";
                }
                div { button type="submit" { "Send campaign" } }
                p.hint { (p.priceable_count) " messages, about " (money(p.estimated_total, &p.currency)) "." }
            }
        }
    }
}

/// `GET /console/campaigns/{id}/live`.
pub async fn live(
    State(_): State<Console>,
    s: Session,
    Path(id): Path<Uuid>,
) -> PageResult<Response> {
    let c: Campaign = s.api.get(format!("/campaigns/{id}")).await?;
    Ok(fragment(progress(&c, s.tz)))
}

fn back(id: Uuid) -> String {
    format!("/console/campaigns/{id}")
}

/// `POST /console/campaigns/{id}/audience`.
pub async fn audience(s: Session, Path(id): Path<Uuid>, f: Fields) -> Response {
    let body = match f.raw("source") {
        "all" => Ok(Audience {
            all: Some(true),
            ..Default::default()
        }),
        "tag" => f
            .text("tag")
            .map(|tag| Audience {
                tag: Some(tag),
                ..Default::default()
            })
            .ok_or_else(|| problem("Write the tag.")),
        "stage" => f
            .text("lifecycleStageId")
            .and_then(|v| Uuid::parse_str(&v).ok())
            .map(|st| Audience {
                lifecycle_stage_id: Some(st),
                ..Default::default()
            })
            .ok_or_else(|| problem("Choose a lifecycle stage.")),
        "ids" => f
            .raw("contactIds")
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|v| !v.is_empty())
            .map(|v| Uuid::parse_str(v).map_err(|_| problem(format!("{v} is not a contact id."))))
            .collect::<Result<Vec<_>, _>>()
            .map(|ids| Audience {
                contact_ids: Some(ids),
                ..Default::default()
            }),
        _ => Err(problem("Choose who receives the campaign.")),
    };
    let body = match body {
        Ok(body) => body,
        Err(flash) => return redirect(&s, &back(id), flash),
    };
    let added: Result<AudienceResult, _> = s
        .api
        .send(
            Method::POST,
            &format!("/campaigns/{id}/recipients"),
            &body,
            f.idempotency().as_deref(),
        )
        .await;
    match added {
        Ok(r) => redirect(
            &s,
            &back(id),
            done(format!(
                "{} recipients added ({} already in; {} opted out, {} without phone, {} of no known market). {} in all.",
                r.added,
                r.already_in,
                r.opted_out,
                r.without_phone,
                r.unpriceable,
                r.total_recipients
            )),
        ),
        Err(e) => redirect(&s, &back(id), failed(&e)),
    }
}

/// The send form as the API's body; its time is read in the organisation's time zone.
fn send_body(f: &Fields, tz: chrono_tz::Tz) -> Result<SendCampaign, Flash> {
    let number = |name: &str| -> Result<Option<u32>, Flash> {
        f.text(name)
            .map(|v| {
                v.parse::<u32>()
                    .map_err(|_| problem(format!("{name} must be a whole number.")))
            })
            .transpose()
    };
    let when = match f.raw("when") {
        "scheduled" => SendWhen::Scheduled,
        "staggered" => SendWhen::Staggered,
        _ => SendWhen::Now,
    };
    let scheduled_at = match (when, f.text("scheduledAt")) {
        (SendWhen::Scheduled, Some(at)) => Some(Timestamp(local_time(tz, &at).map_err(problem)?)),
        (SendWhen::Scheduled, None) => return Err(problem("Choose the time to send at.")),
        _ => None,
    };
    let staggered = when == SendWhen::Staggered;
    Ok(SendCampaign {
        when: Some(when),
        scheduled_at,
        batch_size: if staggered {
            number("batchSize")?
        } else {
            None
        },
        batch_interval_min: if staggered {
            number("batchIntervalMin")?
        } else {
            None
        },
    })
}

/// `POST /console/campaigns/{id}/send`.
pub async fn send(s: Session, Path(id): Path<Uuid>, f: Fields) -> Response {
    let body = match send_body(&f, s.tz) {
        Ok(body) => body,
        Err(flash) => return redirect(&s, &back(id), flash),
    };
    let sent: Result<Campaign, _> = s
        .api
        .send(
            Method::POST,
            &format!("/campaigns/{id}/send"),
            &body,
            f.idempotency().as_deref(),
        )
        .await;
    match sent {
        Ok(c) => redirect(
            &s,
            &back(id),
            done(format!("Campaign {}.", c.status.as_str().to_lowercase())),
        ),
        Err(e) => redirect(&s, &back(id), failed(&e)),
    }
}

async fn act(s: &Session, id: Uuid, action: &str, f: &Fields) -> Flash {
    let answer = s
        .api
        .call(
            Method::POST,
            &format!("/campaigns/{id}/{action}"),
            None,
            Body::empty(),
            f.idempotency().as_deref(),
        )
        .await
        .and_then(|b| decode::<Campaign>(&b));
    match answer {
        Ok(c) => done(format!("Campaign {}.", c.status.as_str().to_lowercase())),
        Err(e) => failed(&e),
    }
}

/// `POST /console/campaigns/{id}/pause`.
pub async fn pause(s: Session, Path(id): Path<Uuid>, f: Fields) -> Response {
    let flash = act(&s, id, "pause", &f).await;
    redirect(&s, &back(id), flash)
}

/// `POST /console/campaigns/{id}/resume`.
pub async fn resume(s: Session, Path(id): Path<Uuid>, f: Fields) -> Response {
    let flash = act(&s, id, "resume", &f).await;
    redirect(&s, &back(id), flash)
}
