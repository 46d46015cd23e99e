//! Inbox: conversations with their tabs and search. One conversation's thread, reply box
//! and actions are [`super::thread`].

use axum::Router;
use axum::extract::{Query, State};
use axum::response::Response;
use axum::routing::{get, post};
use maud::{Markup, html};
use wm_types::conversations::ConversationList;

use super::{push, thread};
use crate::console::answer::fragment;
use crate::console::context::Console;
use crate::console::page::{Page, PageResult, page};
use crate::console::session::Session;
use crate::console::view::{ListQuery, Tabs, badge, channel_name, pager, search_box, table, when};

/// The inbox routes.
pub fn routes() -> Router<Console> {
    Router::new()
        .route("/console/inbox", get(list))
        .route("/console/inbox/part", get(part))
        .route("/console/inbox/events", get(push::inbox))
        .route("/console/inbox/{id}", get(thread::show))
        .route("/console/inbox/{id}/live", get(thread::live))
        .route("/console/inbox/{id}/events", get(super::push::events))
        .route("/console/inbox/{id}/reply", post(thread::reply))
        .route("/console/inbox/{id}/file", post(super::reply_file::send))
        .route("/console/inbox/{id}/template", post(thread::template))
        .route("/console/inbox/{id}/update", post(thread::update))
        .route("/console/inbox/{id}/read", post(thread::mark_read))
        .route("/console/media/{id}", get(thread::media))
}

const TABS: [(&str, &str); 4] = [
    ("All", "all"),
    ("Unassigned", "unassigned"),
    ("Mine", "mine"),
    ("Resolved", "resolved"),
];

/// `GET /console/inbox`.
async fn list(
    State(_): State<Console>,
    s: Session,
    Query(q): Query<ListQuery>,
) -> PageResult<Page> {
    let tabs = Tabs::new(&TABS, &q.tab);
    let filter = tabs.key();
    let list: ConversationList = s.api.get(q.api("/conversations", "filter", filter)).await?;
    let link = |f: &str, p: u64| q.link("/console/inbox", "filter", f, p);
    let t = &list.tabs;
    let counts = [t.all, t.unassigned, t.mine, t.resolved];
    let sum = &list.summary;
    Ok(page(
        &s,
        "Inbox",
        "Inbox",
        html! {
            h1 { "Inbox" }
            p.muted {
                (sum.open) " open · " (sum.unassigned) " unassigned · oldest waiting "
                (sum.oldest_waiting_minutes) " min · " (sum.resolved_today) " resolved today"
            }
            (tabs.render("Conversation tabs", &counts, |key| link(key, 1)))
            (search_box("/console/inbox", "filter", filter, &q.q))
            (conversations(&s, &q, &tabs, &list))
        },
    ))
}

/// `GET /console/inbox/part`: the list's table alone, fetched again each time the
/// organisation's inbox changes (a message came in anywhere).
async fn part(
    State(_): State<Console>,
    s: Session,
    Query(q): Query<ListQuery>,
) -> PageResult<Response> {
    let tabs = Tabs::new(&TABS, &q.tab);
    let list: ConversationList = s
        .api
        .get(q.api("/conversations", "filter", tabs.key()))
        .await?;
    Ok(fragment(conversations(&s, &q, &tabs, &list)))
}

/// The conversations of a tab and page, as a part the page refreshes when pushed.
fn conversations(s: &Session, q: &ListQuery, tabs: &Tabs<'_>, list: &ConversationList) -> Markup {
    let filter = tabs.key();
    let link = |f: &str, p: u64| q.link("/console/inbox", "filter", f, p);
    let me = link(filter, list.meta.page).replacen("/console/inbox", "/console/inbox/part", 1);
    html! {
        div id="inbox-part" data-live=(me) data-push="/console/inbox/events" {
            (table(
                None,
                &format!("{} conversations", tabs.label()),
                &["Contact", "Status", "Channel", "Assigned to", "Window", "Last activity"],
                html! {
                        @for c in &list.data {
                            tr {
                                td { a href={ "/console/inbox/" (c.id) } { (c.contact.full_name.as_deref().or(c.contact.primary_phone.as_deref()).unwrap_or("Unnamed contact")) } }
                                td { (badge(c.status.as_str())) }
                                td { (channel_name(c.channel.channel_type)) }
                                td { (c.assigned_to.as_ref().map(|u| u.full_name.as_str()).unwrap_or("Nobody")) }
                                td { (thread::window_word(c.window_expires_at.as_ref(), s.now())) }
                                td { (when(s.tz, &c.updated_at)) }
                            }
                        }
                },
                list.data.is_empty().then_some("No conversation here."),
            ))
            (pager(&list.meta, |p| link(filter, p)))
        }
    }
}
