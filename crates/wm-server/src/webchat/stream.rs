//! `GET /events`: the visitor's messages as Server-Sent Events, live. The stream sleeps on
//! the contact bell (`crate::db::bell`: rung here or, through PostgreSQL, on another
//! replica) and reads from the database when woken, so a message committed anywhere
//! reaches the visitor at once. Each event's id is its place (conversation and sequence
//! number, in commit order): a reconnect sends it back (`Last-Event-ID`) and gets every
//! later message once. A stream that brings no id starts after what exists now (the widget
//! reads the history itself).

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Query, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures::Stream;
use tokio::sync::Notify;
use uuid::Uuid;

use super::visit::{Refusal, Visit, bearer};
use crate::services::webchat::reading::{self, Cursor};
use crate::services::webchat::{Site, newcomer};
use crate::state::AppState;

/// How long a stream waits for a ring before it looks by itself, plus up to a fifth more
/// at random so that streams opened together do not all look together. Rings are lost
/// only when announcing one to the other replicas fails (logged); a reconnected listener
/// wakes every watcher itself. So this is a slow safety net: 10,000 open tabs cost about
/// 30 queries a second, not one per tab every few seconds.
const LOOK_EVERY: Duration = Duration::from_secs(300);
/// Keep-alive comments, so proxies and browsers keep an idle stream open.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// [`LOOK_EVERY`] with this stream's jitter.
fn look_every() -> Duration {
    use rand::Rng;
    LOOK_EVERY + LOOK_EVERY.mul_f64(rand::rng().random_range(0.0..0.2))
}

/// The stream's query: the token, and the last event id when the header cannot be sent.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventsQuery {
    token: Option<String>,
    last_event_id: Option<String>,
}

struct Watch {
    state: AppState,
    site: Site,
    person: String,
    contact: Option<Uuid>,
    bell: Arc<Notify>,
    cursor: Option<Cursor>,
    pending: VecDeque<Event>,
}

impl Watch {
    /// Whatever is new, queued as events; the watch rings on the contact once they are one.
    async fn look(&mut self) -> anyhow::Result<()> {
        if self.contact.is_none() {
            self.contact = reading::contact_of(&self.state, &self.site, &self.person)
                .await
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            if let Some(c) = self.contact {
                self.bell = self.state.db.bell().watch(c);
            }
        }
        let Some(contact) = self.contact else {
            return Ok(());
        };
        let news = reading::after(&self.state, &self.site, contact, self.cursor)
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        for (at, m) in news {
            self.cursor = Some(at);
            let event = Event::default()
                .event("message")
                .id(at.encode())
                .json_data(&m)
                .unwrap_or_else(|_| Event::default().comment("unreadable message"));
            self.pending.push_back(event);
        }
        Ok(())
    }
}

/// `GET /events?token=`.
pub async fn events(
    State(state): State<AppState>,
    v: Visit,
    headers: HeaderMap,
    Query(q): Query<EventsQuery>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, Refusal> {
    let person = v.site.visitor(
        bearer(&headers, q.token.as_deref()).as_deref(),
        state.now_ms(),
    )?;
    // The header is the browser's own reconnect: newer than the query's.
    let given = headers
        .get("last-event-id")
        .and_then(|h| h.to_str().ok())
        .map(str::to_owned)
        .or(q.last_event_id)
        .and_then(|id| Cursor::decode(&id));
    let contact = reading::contact_of(&state, &v.site, &person).await?;
    let cursor = match (given, contact) {
        (Some(c), _) => Some(c),
        (None, Some(contact)) => reading::now_cursor(&state, &v.site, contact).await?,
        (None, None) => None,
    };
    let bell = match contact {
        Some(c) => state.db.bell().watch(c),
        // Not a contact yet: woken when their first message (from any tab) makes them one.
        None => state.db.bell().watch(newcomer(&v.site, &person)),
    };
    let watch = Watch {
        state,
        site: v.site,
        person,
        contact,
        bell,
        cursor,
        pending: VecDeque::new(),
    };
    let stream = futures::stream::unfold(watch, |mut w| async move {
        loop {
            if let Some(e) = w.pending.pop_front() {
                return Some((Ok(e), w));
            }
            let bell = w.bell.clone();
            let rung = bell.notified();
            tokio::pin!(rung);
            // Listening before looking: a ring while looking is not lost.
            rung.as_mut().enable();
            if let Err(e) = w.look().await {
                tracing::warn!(error = %format!("{e:#}"), "a website chat stream could not read");
            }
            if !w.pending.is_empty() {
                continue;
            }
            tokio::select! {
                _ = rung => {}
                _ = tokio::time::sleep(look_every()) => {}
            }
        }
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::new().interval(KEEP_ALIVE)))
}
