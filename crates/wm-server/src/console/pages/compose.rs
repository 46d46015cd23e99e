//! Sending a message in a conversation from the console: the API's
//! `POST /conversations/{id}/messages`, and back to the thread saying how it went. The
//! reply box, the template form and the file form all send through it.

use axum::http::Method;
use axum::response::Response;
use uuid::Uuid;
use wm_types::messages::{Message, SendMessage};

use crate::console::page::{done, failed, redirect};
use crate::console::session::Session;

/// The thread of conversation `id`.
pub fn back(id: Uuid) -> String {
    format!("/console/inbox/{id}")
}

/// Sends `body` in the conversation and goes back to it, saying `sent` or why not.
pub async fn post_message(
    s: &Session,
    id: Uuid,
    body: SendMessage,
    idempotency: Option<&str>,
    sent: &str,
) -> Response {
    let answer: Result<Message, _> = s
        .api
        .send(
            Method::POST,
            &format!("/conversations/{id}/messages"),
            &body,
            idempotency,
        )
        .await;
    match answer {
        Ok(_) => redirect(s, &back(id), done(sent)),
        Err(e) => redirect(s, &back(id), failed(&e)),
    }
}
