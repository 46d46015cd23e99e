//! The platform's webhooks: signature and handshake checks, and reading the documented
//! `whatsapp_business_account` envelope into [`PlatformEvent`]s.
//!
//! Reading is tolerant on purpose: the platform adds fields and message types over time, so
//! anything unknown is skipped and only a body that is not the envelope at all is an error.
//! Every string taken from the platform has U+0000 replaced (PostgreSQL refuses it).
//!
//! Shapes: status and inbound messages
//! (<https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages>),
//! `message_template_status_update` and `phone_number_quality_update` (their references
//! under `webhooks/reference/`), `X-Hub-Signature-256`
//! (<https://developers.facebook.com/docs/graph-api/webhooks/getting-started>).

use hmac::{Hmac, KeyInit, Mac};
use serde_json::Value;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use wm_core::platform::{
    Content, Handshake, InboundMedia, InboundMessage, PlatformEvent, PlatformIntake,
};
use wm_core::provider::StatusUpdate;
use wm_core::whatsapp;
use wm_types::enums::RecipientStatus;
use wm_types::messages::{MessageInteractive, MessageLocation, MessageType};

use super::no_nul;

/// Checks `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>` with the app
/// secret, in constant time; false when the secret is empty or the header is missing or
/// malformed.
pub fn verify_signature(app_secret: &str, header: Option<&str>, body: &[u8]) -> bool {
    if app_secret.is_empty() {
        return false;
    }
    let Some(hex_sig) = header
        .map(str::trim)
        .and_then(|h| h.strip_prefix("sha256="))
    else {
        return false;
    };
    let Ok(signature) = hex::decode(hex_sig) else {
        return false;
    };
    let Ok(mut mac) = <Hmac<Sha256> as KeyInit>::new_from_slice(app_secret.as_bytes()) else {
        return false;
    };
    mac.update(body);
    mac.verify_slice(&signature).is_ok()
}

/// Whether the GET handshake's `hub.verify_token` is ours, in constant time (both sides are
/// hashed first, so not even the length leaks); an empty expected token never matches.
pub fn verify_token_matches(expected: &str, given: &str) -> bool {
    if expected.is_empty() {
        return false;
    }
    let (a, b) = (
        Sha256::digest(expected.as_bytes()),
        Sha256::digest(given.as_bytes()),
    );
    a.as_slice().ct_eq(b.as_slice()).into()
}

/// WhatsApp's webhooks as a [`PlatformIntake`]: the verify token of the handshake and the app
/// secret of `X-Hub-Signature-256` (`WM_WHATSAPP_VERIFY_TOKEN`, `WM_WHATSAPP_APP_SECRET`;
/// without them every handshake and every body is refused).
#[derive(Clone, Default)]
pub struct WhatsAppIntake {
    /// The handshake's `hub.verify_token`.
    pub verify_token: Option<String>,
    /// The app secret the bodies are signed with.
    pub app_secret: Option<String>,
}

impl std::fmt::Debug for WhatsAppIntake {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WhatsAppIntake")
            .field("verify_token", &self.verify_token.as_ref().map(|_| "<set>"))
            .field("app_secret", &self.app_secret.as_ref().map(|_| "<set>"))
            .finish()
    }
}

impl PlatformIntake for WhatsAppIntake {
    fn name(&self) -> &'static str {
        "whatsapp"
    }

    fn handshake(&self, query: &[(String, String)]) -> Handshake {
        let get = |k: &str| query.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        match (
            self.verify_token.as_deref(),
            get("hub.mode"),
            get("hub.verify_token"),
            get("hub.challenge"),
        ) {
            (Some(expected), Some("subscribe"), Some(given), Some(challenge))
                if verify_token_matches(expected, given) =>
            {
                Handshake::Accept(challenge.to_owned())
            }
            _ => Handshake::Refuse,
        }
    }

    fn verify(&self, header: &dyn Fn(&str) -> Option<String>, body: &[u8]) -> bool {
        let signature = header("x-hub-signature-256");
        self.app_secret
            .as_deref()
            .is_some_and(|secret| verify_signature(secret, signature.as_deref(), body))
    }

    fn parse(&self, body: &[u8]) -> Result<Vec<PlatformEvent>, String> {
        parse(body)
    }
}

/// Reads a webhook body into events; `Err` only when it is not the documented envelope
/// `{object:"whatsapp_business_account", entry:[{id, changes:[{field, value}]}]}`.
pub fn parse(body: &[u8]) -> Result<Vec<PlatformEvent>, String> {
    let root: Value =
        serde_json::from_slice(body).map_err(|e| format!("the webhook is not JSON: {e}"))?;
    let object = root.get("object").and_then(Value::as_str);
    if object != Some("whatsapp_business_account") {
        return Err(format!(
            "not a WhatsApp Business Account webhook (object {:?})",
            object.map(no_nul)
        ));
    }
    let entries = root
        .get("entry")
        .and_then(Value::as_array)
        .ok_or("the webhook has no entry list")?;
    let mut events = Vec::new();
    for entry in entries {
        let waba_id = text(entry.get("id"));
        let changes = entry.get("changes").and_then(Value::as_array);
        for change in changes.into_iter().flatten() {
            let Some(value) = change.get("value") else {
                continue;
            };
            match change.get("field").and_then(Value::as_str) {
                Some("messages") => messages(value, &mut events),
                Some("user_preferences") => preferences(value, &mut events),
                Some("message_template_status_update") => {
                    events.extend(template_status(waba_id.as_deref(), value));
                }
                Some("phone_number_quality_update") => {
                    events.extend(quality(waba_id.as_deref(), value));
                }
                _ => {}
            }
        }
    }
    Ok(events)
}

/// A non-empty string (or a number, as ids sometimes are), U+0000 replaced.
fn text(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::String(s) if !s.is_empty() => Some(no_nul(s)),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn integer(value: Option<&Value>) -> Option<i64> {
    match value? {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// Unix seconds (a string in the platform's payloads) as ms.
fn timestamp_ms(value: Option<&Value>) -> Option<i64> {
    integer(value)?.checked_mul(1000)
}

/// `statuses[]` and `messages[]` of a `messages` change.
fn messages(value: &Value, events: &mut Vec<PlatformEvent>) {
    let Some(phone_number_id) = text(value.pointer("/metadata/phone_number_id")) else {
        return;
    };
    let list = |key: &str| value.get(key).and_then(Value::as_array).map(Vec::as_slice);
    for s in list("statuses").unwrap_or_default() {
        events.extend(status(&phone_number_id, s));
    }
    let contacts = list("contacts").unwrap_or_default();
    for m in list("messages").unwrap_or_default() {
        events.extend(inbound(&phone_number_id, contacts, m));
    }
}

fn status(phone_number_id: &str, s: &Value) -> Option<PlatformEvent> {
    let provider_message_id = text(s.get("id"))?;
    let status = match s.get("status")?.as_str()?.to_ascii_lowercase().as_str() {
        "sent" => RecipientStatus::Sent,
        "delivered" => RecipientStatus::Delivered,
        "read" => RecipientStatus::Read,
        "failed" => RecipientStatus::Failed,
        _ => return None, // `deleted`, `warning` and whatever comes next
    };
    let first_error = s
        .get("errors")
        .and_then(Value::as_array)
        .and_then(|e| e.first());
    let code = first_error.and_then(|e| integer(e.get("code")));
    let error = first_error.map(|e| {
        let title = text(e.get("title")).or_else(|| text(e.get("message")));
        let details = text(e.pointer("/error_data/details"));
        match code {
            Some(code) => {
                whatsapp::error_text(code, title.as_deref().unwrap_or(""), details.as_deref())
            }
            None => [title, details]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(": "),
        }
    });
    let update = StatusUpdate {
        provider_message_id,
        correlation_id: text(s.get("biz_opaque_callback_data")),
        opt_out: status == RecipientStatus::Failed && code.is_some_and(whatsapp::is_opt_out),
        recipient: text(s.get("recipient_id")),
        status,
        at_ms: timestamp_ms(s.get("timestamp")),
        error: error.filter(|e| !e.is_empty()),
    };
    Some(PlatformEvent::Status {
        phone_number_id: phone_number_id.to_owned(),
        update,
        code,
    })
}

fn inbound(phone_number_id: &str, contacts: &[Value], m: &Value) -> Option<PlatformEvent> {
    let from = text(m.get("from"))?;
    let message_id = text(m.get("id"))?;
    let kind = text(m.get("type"))
        .unwrap_or_else(|| "unknown".to_owned())
        .to_ascii_lowercase();
    if kind == "system" {
        return number_changed(phone_number_id, &from, &message_id, m);
    }
    let contact = contacts
        .iter()
        .find(|c| text(c.get("wa_id")).as_deref() == Some(from.as_str()))
        .or(if contacts.len() == 1 {
            contacts.first()
        } else {
            None
        });
    Some(PlatformEvent::Inbound(Box::new(InboundMessage {
        phone_number_id: phone_number_id.to_owned(),
        message_id,
        name: contact.and_then(|c| text(c.pointer("/profile/name"))),
        from,
        at_ms: timestamp_ms(m.get("timestamp")),
        content: content(&kind, m),
        context_id: text(m.pointer("/context/id")),
    })))
}

/// The content of an inbound message of type `kind`; `unsupported`, `unknown` and kinds
/// added later are UNSUPPORTED with their name kept: still a message from someone.
fn content(kind: &str, m: &Value) -> Content {
    let part = m.get(kind);
    let field = |name: &str| text(part.and_then(|p| p.get(name)));
    let media_kind = match kind {
        "image" => Some(MessageType::Image),
        "video" => Some(MessageType::Video),
        "audio" => Some(MessageType::Audio),
        "document" => Some(MessageType::Document),
        "sticker" => Some(MessageType::Sticker),
        _ => None,
    };
    if let Some(t) = media_kind {
        let mut c = Content::of(t, kind);
        c.text = field("caption");
        c.media = field("id").map(|platform_id| InboundMedia {
            platform_id,
            mime_type: field("mime_type"),
            sha256: field("sha256"),
            filename: field("filename"),
        });
        return c;
    }
    match kind {
        "text" => {
            let mut c = Content::of(MessageType::Text, kind);
            c.text = field("body");
            c
        }
        "button" => {
            let mut c = Content::of(MessageType::Button, kind);
            c.text = field("text").or_else(|| field("payload"));
            c.interactive = Some(MessageInteractive {
                kind: "button".into(),
                reply_id: field("payload"),
                title: field("text"),
                buttons: Vec::new(),
            });
            c
        }
        "interactive" => interactive(part),
        "location" => {
            let mut c = Content::of(MessageType::Location, kind);
            let coordinate = |name: &str| part.and_then(|p| p.get(name)).and_then(number);
            if let (Some(latitude), Some(longitude)) =
                (coordinate("latitude"), coordinate("longitude"))
            {
                c.location = Some(MessageLocation {
                    latitude,
                    longitude,
                    name: field("name"),
                    address: field("address"),
                });
            }
            c.text = field("name");
            c
        }
        "contacts" => {
            let mut c = Content::of(MessageType::Contacts, kind);
            c.contacts = m.get("contacts").and_then(Value::as_array).cloned();
            c
        }
        "reaction" => {
            let mut c = Content::of(MessageType::Reaction, kind);
            c.reaction = field("message_id").map(|id| (id, field("emoji")));
            c.text = field("emoji");
            c
        }
        "order" => {
            let mut c = Content::of(MessageType::Order, kind);
            c.text = field("text");
            c.order = part.cloned();
            c
        }
        other => Content::of(MessageType::Unsupported, other),
    }
}

/// `interactive`: a reply to buttons, a list or a flow.
fn interactive(part: Option<&Value>) -> Content {
    let mut c = Content::of(MessageType::Interactive, "interactive");
    let kind = text(part.and_then(|p| p.get("type"))).unwrap_or_default();
    let reply = part.and_then(|p| p.get(&kind));
    let field = |name: &str| text(reply.and_then(|r| r.get(name)));
    let title = field("title").or_else(|| field("body"));
    c.text = title.clone();
    c.interactive = Some(MessageInteractive {
        reply_id: field("id").or_else(|| field("response_json")),
        title,
        kind,
        buttons: Vec::new(),
    });
    c
}

/// A number, or a string holding one (coordinates arrive as either).
fn number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
    .filter(|v| v.is_finite())
}

/// A `system` message: a number change becomes [`PlatformEvent::NumberChanged`]; other
/// notices (an identity or user-id change) carry nothing wm keeps.
fn number_changed(
    phone_number_id: &str,
    from: &str,
    message_id: &str,
    m: &Value,
) -> Option<PlatformEvent> {
    let system = m.get("system")?;
    let kind = text(system.get("type"))?.to_ascii_lowercase();
    if kind != "user_changed_number" && kind != "customer_changed_number" {
        return None;
    }
    // `wa_id` since Graph v12; `new_wa_id` before.
    let to = text(system.get("wa_id")).or_else(|| text(system.get("new_wa_id")))?;
    Some(PlatformEvent::NumberChanged {
        phone_number_id: phone_number_id.to_owned(),
        message_id: message_id.to_owned(),
        from: from.to_owned(),
        to,
    })
}

/// `user_preferences[]` of a `user_preferences` change: marketing messages stopped or
/// resumed (other categories and values are skipped).
fn preferences(value: &Value, events: &mut Vec<PlatformEvent>) {
    let Some(phone_number_id) = text(value.pointer("/metadata/phone_number_id")) else {
        return;
    };
    let list = value.get("user_preferences").and_then(Value::as_array);
    for p in list.into_iter().flatten() {
        let category = text(p.get("category")).map(|c| c.to_ascii_lowercase());
        if category.as_deref() != Some("marketing_messages") {
            continue;
        }
        let stop = match text(p.get("value"))
            .map(|v| v.to_ascii_lowercase())
            .as_deref()
        {
            Some("stop") => true,
            Some("resume") => false,
            _ => continue,
        };
        let Some(wa_id) = text(p.get("wa_id")) else {
            continue;
        };
        events.push(PlatformEvent::Preference {
            phone_number_id: phone_number_id.clone(),
            wa_id,
            stop,
        });
    }
}

fn template_status(waba_id: Option<&str>, value: &Value) -> Option<PlatformEvent> {
    let status = text(value.get("event"))?;
    // A reinstated template is approved again; a flagged one is still sendable (its
    // quality is low) and keeps its status.
    let new_status = match status.as_str() {
        "REINSTATED" => Some("APPROVED".to_owned()),
        "FLAGGED" => None,
        other => Some(other.to_owned()),
    };
    Some(PlatformEvent::TemplateStatus {
        waba_id: waba_id?.to_owned(),
        name: text(value.get("message_template_name"))?,
        language: text(value.get("message_template_language"))?,
        reason: text(value.get("reason")).filter(|r| !r.eq_ignore_ascii_case("NONE")),
        stop_reason: whatsapp::template_stop_reason(&status),
        new_status,
        status,
    })
}

fn quality(waba_id: Option<&str>, value: &Value) -> Option<PlatformEvent> {
    let event = text(value.get("event"))?;
    Some(PlatformEvent::Quality {
        waba_id: waba_id?.to_owned(),
        display_phone_number: text(value.get("display_phone_number"))?,
        rating: whatsapp::quality_rating(&event),
        event,
    })
}

#[cfg(test)]
mod tests;
