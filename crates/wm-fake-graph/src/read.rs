//! Mark as read: `POST /{version}/{phone_number_id}/messages` with
//! `{"messaging_product":"whatsapp","status":"read","message_id":"<wamid>"}` and
//! optionally `"typing_indicator":{"type":"text"}` answers `{"success":true}`
//! ("Mark messages as read" and "Typing indicators" guides,
//! <https://developers.facebook.com/docs/whatsapp/cloud-api/guides/mark-message-as-read>).
//!
//! Why these checks: the message must be one the user sent *to this number* — a wamid
//! the fake posted with [`FakeGraph::post_inbound`] for it. Anything else (unknown,
//! sent by the business, or received by another number) is answered as Graph answers a
//! bad parameter: HTTP 400, code 100 "Invalid parameter", with `error_data.details`
//! naming `message_id`. The token and the number are checked first, as for sends.
//! Reads are not sends: they are logged as [`ReadMark`]s, not as attempts.

use axum::response::{IntoResponse, Response};
use chrono::Utc;
use serde_json::{Value, json};

use crate::FakeGraph;
use crate::errors::GraphError;
use crate::model::ReadMark;
use crate::send::{AuthCheck, check_token};

/// Whether a `/messages` body is a mark-as-read request rather than a send.
pub(crate) fn is_read_request(body: &Value) -> bool {
    body.get("status").is_some()
}

const READ_KEYS: &[&str] = &[
    "messaging_product",
    "status",
    "message_id",
    "typing_indicator",
];

/// Validates the body; returns `(message_id, typing)`.
fn parse_read(body: &Value) -> Result<(String, bool), GraphError> {
    let Some(obj) = body.as_object() else {
        return Err(GraphError::invalid_parameter(
            "(#100) The parameter messaging_product is required.",
        ));
    };
    if let Some(k) = obj.keys().find(|k| !READ_KEYS.contains(&k.as_str())) {
        return Err(GraphError::invalid_parameter(&format!(
            "(#100) Unexpected key \"{k}\" on param."
        )));
    }
    match obj.get("messaging_product").and_then(Value::as_str) {
        Some("whatsapp") => {}
        None => {
            return Err(GraphError::invalid_parameter(
                "(#100) The parameter messaging_product is required.",
            ));
        }
        Some(other) => {
            return Err(GraphError::invalid_parameter(&format!(
                "(#100) Param messaging_product must be one of {{WHATSAPP}} - got \"{other}\"."
            )));
        }
    }
    if obj.get("status").and_then(Value::as_str) != Some("read") {
        return Err(GraphError::invalid_parameter(
            "Param status must be one of {read}.",
        ));
    }
    let message_id = match obj.get("message_id") {
        Some(Value::String(id)) if !id.is_empty() => id.clone(),
        None | Some(Value::Null) => {
            return Err(GraphError::whatsapp(
                131008,
                Some("The parameter message_id is required."),
                None,
            ));
        }
        Some(_) => {
            return Err(GraphError::invalid_parameter(
                "Param message_id must be a non-empty string.",
            ));
        }
    };
    let typing = match obj.get("typing_indicator") {
        None | Some(Value::Null) => false,
        Some(t) if t.get("type").and_then(Value::as_str) == Some("text") => true,
        Some(_) => {
            return Err(GraphError::invalid_parameter(
                "Param typing_indicator['type'] must be one of {text}.",
            ));
        }
    };
    Ok((message_id, typing))
}

impl FakeGraph {
    /// Answers a mark-as-read request (token, number, body, then the message).
    pub(crate) fn mark_read(
        &self,
        phone_number_id: &str,
        token: Option<&str>,
        body: Option<&Value>,
    ) -> Response {
        match self.decide_read(phone_number_id, token, body) {
            Ok(()) => axum::Json(json!({ "success": true })).into_response(),
            Err(e) => e.into_response(),
        }
    }

    fn decide_read(
        &self,
        phone_number_id: &str,
        token: Option<&str>,
        body: Option<&Value>,
    ) -> Result<(), GraphError> {
        let mut inner = self.shared.lock();
        if let AuthCheck::Fail(e) = check_token(&inner, token) {
            return Err(e);
        }
        let Some(number) = inner.numbers.get(phone_number_id) else {
            return Err(GraphError::unknown_object("post", phone_number_id));
        };
        let waba_ok = |t: &str| {
            inner
                .wabas
                .get(&number.spec.waba_id)
                .is_some_and(|w| w.tokens.contains(t))
        };
        if !token.is_some_and(|t| t == number.spec.access_token || waba_ok(t)) {
            return Err(GraphError::oauth(
                "Invalid OAuth access token - Cannot parse access token",
            ));
        }
        let Some(body) = body else {
            return Err(GraphError::invalid_parameter(
                "(#100) The request body is not valid JSON.",
            ));
        };
        let (message_id, typing) = parse_read(body)?;
        let known = inner
            .inbound
            .get(&message_id)
            .is_some_and(|m| m.phone_number_id == phone_number_id);
        if !known {
            let details = format!(
                "Param message_id ({message_id}) is not a message received by this phone number."
            );
            return Err(GraphError::invalid_parameter(&details));
        }
        inner.reads.push(ReadMark {
            phone_number_id: phone_number_id.to_owned(),
            message_id,
            typing,
            at: Utc::now(),
        });
        Ok(())
    }

    /// Every accepted mark-as-read request, in arrival order.
    pub fn reads(&self) -> Vec<ReadMark> {
        self.shared.lock().reads.clone()
    }

    /// Whether `wamid` is a message of this business number the fake knows: one it
    /// accepted from it, or one it posted to it as an inbound message (for checking a
    /// send's `context.message_id`, which the fake accepts either way).
    pub fn knows_message(&self, phone_number_id: &str, wamid: &str) -> bool {
        let inner = self.shared.lock();
        inner
            .inbound
            .get(wamid)
            .is_some_and(|m| m.phone_number_id == phone_number_id)
            || inner
                .accepted
                .iter()
                .any(|m| m.wamid == wamid && m.phone_number_id == phone_number_id)
    }
}
