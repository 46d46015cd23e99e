//! `GET /console/inbox/{id}/events` and `GET /console/inbox/events`: an open thread (or
//! the inbox list) learns that it changed (a message came
//! in, a reply was queued, sent or read) as a Server-Sent Event, pushed when the contact
//! bell rings (`crate::db::bell`, on this replica or another), so the page refreshes its
//! part at once and never polls.

use std::convert::Infallible;
use std::time::Duration;

use axum::extract::{Path, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use futures::Stream;
use uuid::Uuid;
use wm_types::conversations::Conversation;

use crate::console::answer::ConsoleError;
use crate::console::context::Console;
use crate::console::session::Session;

/// How long the stream waits before saying "changed" anyway (a ring lost while a replica's
/// listener reconnected costs at most this).
const AT_LEAST_EVERY: Duration = Duration::from_secs(30);

/// The stream of a conversation the session may read.
pub async fn events(
    State(console): State<Console>,
    s: Session,
    Path(id): Path<Uuid>,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ConsoleError> {
    // Read through the API: a key without the scope, or another organisation's
    // conversation, gets what the API gives it.
    let c: Conversation = s.api.get(format!("/conversations/{id}")).await?;
    Ok(changes(console.state.db.bell().watch(c.contact_id)))
}

/// `GET /console/inbox/events`: the inbox list learns that a message came in anywhere in
/// the organisation (its own bell, rung beside the contact's).
pub async fn inbox(
    State(console): State<Console>,
    s: Session,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    changes(console.state.db.bell().watch(s.caller.org_id))
}

/// "changed" each time `bell` rings (or [`AT_LEAST_EVERY`] passes).
fn changes(
    bell: std::sync::Arc<tokio::sync::Notify>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let stream = futures::stream::unfold(bell, |bell| async move {
        let rung = bell.notified();
        tokio::select! {
            _ = rung => {}
            _ = tokio::time::sleep(AT_LEAST_EVERY) => {}
        }
        // A browser dispatches no event without data.
        Some((Ok(Event::default().event("changed").data("changed")), bell))
    });
    Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}
