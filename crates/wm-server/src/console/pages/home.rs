//! Home: the wallet and what it paid for lately, the campaigns sending now (refreshing by
//! themselves) and the conversations nobody has picked up. Each panel shows only when the
//! key may read it.

use axum::extract::State;
use axum::response::Response;
use maud::{Markup, html};
use wm_types::campaigns::CampaignList;
use wm_types::catalog::Wallet;
use wm_types::conversations::ConversationList;
use wm_types::enums::Scope;

use crate::console::answer::fragment;
use crate::console::context::Console;
use crate::console::page::{Page, PageResult, page};
use crate::console::session::Session;
use crate::console::view::{money, pct, when};

/// `GET /console`.
pub async fn show(State(_): State<Console>, s: Session) -> PageResult<Page> {
    let mut body = Vec::new();
    if s.can(Scope::CampaignsRead) {
        let wallet: Wallet = s.api.get("/wallet").await?;
        let month: CampaignList = s.api.get("/campaigns?days=30&pageSize=1").await?;
        body.push(html! {
            section.grid aria-label="Wallet" {
                div.card {
                    h2 { "Wallet" }
                    span.stat { (money(wallet.balance, &wallet.currency)) }
                    span.muted { (wallet.included_utility_remaining) " included Utility messages left" }
                }
                div.card {
                    h2 { "Spend, last 30 days" }
                    span.stat { (money(month.summary.spend, &wallet.currency)) }
                    span.muted {
                        (month.summary.sent) " messages sent · "
                        (pct(month.summary.delivered_pct)) " delivered · "
                        (pct(month.summary.read_pct)) " read"
                    }
                }
            }
        });
        body.push(sending_panel(&s).await?);
    }
    if s.can(Scope::ConversationsRead) {
        let waiting: ConversationList = s
            .api
            .get("/conversations?filter=unassigned&pageSize=10")
            .await?;
        body.push(html! {
            section.card aria-labelledby="unassigned-h" {
                h2 id="unassigned-h" { "Unassigned conversations (" (waiting.tabs.unassigned) ")" }
                @if waiting.data.is_empty() {
                    p.muted { "Nobody is waiting for an answer." }
                } @else {
                    ul {
                        @for c in &waiting.data {
                            li {
                                a href={ "/console/inbox/" (c.id) } {
                                    (c.contact.full_name.as_deref().or(c.contact.primary_phone.as_deref()).unwrap_or("Unnamed contact"))
                                }
                                " · " span.muted { "since " (when(s.tz, &c.created_at)) }
                            }
                        }
                    }
                    p { a href="/console/inbox?filter=unassigned" { "All unassigned conversations" } }
                }
            }
        });
    }
    Ok(page(
        &s,
        "Home",
        "Home",
        html! {
            h1 { "Home" }
            @for part in &body { (part) }
        },
    ))
}

/// The campaigns sending now, as a live part.
async fn sending_panel(s: &Session) -> PageResult<Markup> {
    let sending: CampaignList = s.api.get("/campaigns?tab=sending&pageSize=10").await?;
    Ok(html! {
        section.card aria-labelledby="sending-h" aria-live="polite" data-live="/console/live/sending" {
            h2 id="sending-h" { "Sending now (" (sending.tabs.sending) ")" }
            @if sending.data.is_empty() {
                p.muted { "No campaign is sending." }
            } @else {
                ul {
                    @for c in &sending.data {
                        li {
                            a href={ "/console/campaigns/" (c.id) } { (c.name) }
                            " — " (c.stats.sent + c.stats.failed) " of " (c.stats.total)
                            progress max="100" value=(format!("{:.0}", c.stats.progress_pct))
                                aria-label={ (c.name) " progress" } { (pct(c.stats.progress_pct)) }
                        }
                    }
                }
            }
        }
    })
}

/// `GET /console/live/sending`: the panel alone, for the page's refresh.
pub async fn sending(s: Session) -> PageResult<Response> {
    Ok(fragment(sending_panel(&s).await?))
}
