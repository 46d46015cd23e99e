//! The platform's webhooks: signature and handshake checks, and reading the documented
//! `whatsapp_business_account` envelope into [`PlatformEvent`]s.
//!
//! Reading is tolerant on purpose: the platform adds fields and message types over time, so
//! only a body that is not the envelope at all is an error; a part inside it that wm cannot
//! apply (a message naming no sender, a status or field it does not know) is read as
//! [`PlatformEvent::Unapplied`], never dropped in silence. Every string taken from the
//! platform has U+0000 replaced (PostgreSQL refuses it).
//!
//! People are named by phone (`from`, `wa_id`, `recipient_id`) where Meta shares it and by
//! their business-scoped user id (`from_user_id`, `contacts[].user_id`,
//! `recipient_user_id`; a username in `contacts[].profile.username`) always since April
//! 2026: a person who adopted a username may come with no phone at all. The id changes
//! with their number (`user_changed_number` carries the new one), and `user_id_update` and
//! `user_changed_user_id` move it
//! (<https://developers.facebook.com/documentation/business-messaging/whatsapp/business-scoped-user-ids/>).
//!
//! Shapes: status and inbound messages
//! (<https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages>),
//! `message_template_status_update` and `phone_number_quality_update` (their references
//! under `webhooks/reference/`), `X-Hub-Signature-256`
//! (<https://developers.facebook.com/docs/graph-api/webhooks/getting-started>).

use serde_json::Value;
use wm_core::platform::{
    Content, Handshake, InboundMedia, InboundMessage, Person, PlatformEvent, PlatformIntake,
    Unapplied,
};
use wm_core::provider::StatusUpdate;
use wm_core::whatsapp;
use wm_types::enums::RecipientStatus;
use wm_types::messages::{MessageInteractive, MessageLocation, MessageType};

use wm_core::platform::no_nul;

use crate::provider::meta_hub;

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
        meta_hub::handshake(self.verify_token.as_deref(), query)
    }

    fn verify(&self, header: &dyn Fn(&str) -> Option<String>, body: &[u8]) -> bool {
        meta_hub::verify(self.app_secret.as_deref(), header, body)
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
                events.push(unapplied(None, "change without a value", change));
                continue;
            };
            match change.get("field").and_then(Value::as_str) {
                Some("messages") => messages(value, &mut events),
                Some("user_preferences") => preferences(value, &mut events),
                Some("user_id_update") => user_id_updates(value, &mut events),
                Some("message_template_status_update") => events.push(
                    template_status(waba_id.as_deref(), value)
                        .unwrap_or_else(|| unapplied(None, "template update unreadable", value)),
                ),
                Some("phone_number_quality_update") => events.push(
                    quality(waba_id.as_deref(), value)
                        .unwrap_or_else(|| unapplied(None, "quality update unreadable", value)),
                ),
                _ => events.push(unapplied(None, "field not handled", change)),
            }
        }
    }
    Ok(events)
}

/// A part wm cannot apply, kept as the platform sent it.
fn unapplied(account: Option<&str>, reason: &'static str, part: &Value) -> PlatformEvent {
    PlatformEvent::Unapplied(Unapplied::new(account, reason, &part.to_string()))
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
        events.push(unapplied(None, "no business number", value));
        return;
    };
    let account = Some(phone_number_id.as_str());
    let list = |key: &str| value.get(key).and_then(Value::as_array).map(Vec::as_slice);
    for s in list("statuses").unwrap_or_default() {
        events.push(status(&phone_number_id, s).unwrap_or_else(|why| unapplied(account, why, s)));
    }
    let contacts = list("contacts").unwrap_or_default();
    for m in list("messages").unwrap_or_default() {
        events.push(inbound(&phone_number_id, contacts, m));
    }
}

/// A status of `statuses[]`, or why it is not applied.
fn status(phone_number_id: &str, s: &Value) -> Result<PlatformEvent, &'static str> {
    let provider_message_id = text(s.get("id")).ok_or("status without a message id")?;
    let status = match text(s.get("status"))
        .unwrap_or_default()
        .to_ascii_lowercase()
        .as_str()
    {
        "sent" => RecipientStatus::Sent,
        "delivered" => RecipientStatus::Delivered,
        "read" => RecipientStatus::Read,
        "failed" => RecipientStatus::Failed,
        // `deleted`, `warning` and whatever comes next: not a step of the funnel.
        _ => return Err("status not handled"),
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
        recipient_user_id: text(s.get("recipient_user_id")),
        status,
        at_ms: timestamp_ms(s.get("timestamp")),
        error: error.filter(|e| !e.is_empty()),
    };
    Ok(PlatformEvent::Status {
        account: phone_number_id.to_owned(),
        update,
        code,
    })
}

/// A message of `messages[]`: who wrote (`from` and `from_user_id`, their `contacts[]`
/// entry for the name and username), what, and when; a `system` notice.
fn inbound(phone_number_id: &str, contacts: &[Value], m: &Value) -> PlatformEvent {
    let account = Some(phone_number_id);
    let Some(message_id) = text(m.get("id")) else {
        return unapplied(account, "message without an id", m);
    };
    let from = person(m, contacts);
    let kind = text(m.get("type"))
        .unwrap_or_else(|| "unknown".to_owned())
        .to_ascii_lowercase();
    if kind == "system" {
        // A notice may name the person only in its body (a user id change).
        return system(phone_number_id, from, &message_id, m)
            .unwrap_or_else(|| unapplied(account, "system message not handled", m));
    }
    if !from.is_named() {
        return unapplied(account, "message without a sender", m);
    }
    PlatformEvent::Inbound(Box::new(InboundMessage {
        account: phone_number_id.to_owned(),
        message_id,
        from,
        at_ms: timestamp_ms(m.get("timestamp")),
        content: content(&kind, m),
        context_id: text(m.pointer("/context/id")),
    }))
}

/// The sender of message `m`: its `from` (phone) and `from_user_id` (BSUID), and the entry
/// of `contacts[]` that names them (by user id or phone; the only one when there is one)
/// for the profile name, username and parent id.
fn person(m: &Value, contacts: &[Value]) -> Person {
    let phone = text(m.get("from"));
    let user_id = text(m.get("from_user_id"));
    let same = |c: &&Value| {
        let cid = text(c.get("user_id"));
        let cwa = text(c.get("wa_id"));
        (user_id.is_some() && cid == user_id) || (phone.is_some() && cwa == phone)
    };
    let contact = contacts.iter().find(same).or(if contacts.len() == 1 {
        contacts.first()
    } else {
        None
    });
    let field = |name: &str| contact.and_then(|c| text(c.pointer(name)));
    Person {
        user_id: user_id.or_else(|| field("/user_id")),
        phone: phone.or_else(|| field("/wa_id")),
        parent_user_id: text(m.get("from_parent_user_id")).or_else(|| field("/parent_user_id")),
        username: field("/profile/username"),
        name: field("/profile/name"),
    }
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

/// A `system` message: a number change ([`PlatformEvent::NumberChanged`], with the new
/// business-scoped user id it carries) or a business-scoped user id change
/// ([`PlatformEvent::UserIdChanged`]: the new id in `system.user_id`, the old one the
/// message's `from_user_id`, else the one the body names). Other notices are not applied.
fn system(
    phone_number_id: &str,
    from: Person,
    message_id: &str,
    m: &Value,
) -> Option<PlatformEvent> {
    let system = m.get("system")?;
    let kind = text(system.get("type"))?.to_ascii_lowercase();
    let new_user_id = text(system.get("user_id"));
    match kind.as_str() {
        "user_changed_number" | "customer_changed_number" if from.is_named() => {
            // `wa_id` since Graph v12; `new_wa_id` before.
            let to = text(system.get("wa_id")).or_else(|| text(system.get("new_wa_id")))?;
            Some(PlatformEvent::NumberChanged {
                account: phone_number_id.to_owned(),
                message_id: message_id.to_owned(),
                from,
                to,
                user_id: new_user_id,
            })
        }
        "user_changed_user_id" => {
            let current = new_user_id?;
            // "User <name> changed from <OLD_BSUID> to <NEW_BSUID>".
            let previous = from.user_id.clone().or_else(|| {
                let body = text(system.get("body"))?;
                let (_, after) = body.rsplit_once(" changed from ")?;
                let (old, _) = after.split_once(" to ")?;
                Some(old.trim().to_owned())
            })?;
            Some(PlatformEvent::UserIdChanged {
                account: phone_number_id.to_owned(),
                person: Person {
                    user_id: Some(previous.clone()),
                    ..from
                },
                previous,
                current,
                parent: text(system.get("parent_user_id")),
            })
        }
        _ => None,
    }
}

/// `user_id_update[]` of a `user_id_update` change: a person's business-scoped user id
/// moved from `user_id.previous` to `user_id.current`.
fn user_id_updates(value: &Value, events: &mut Vec<PlatformEvent>) {
    let Some(phone_number_id) = text(value.pointer("/metadata/phone_number_id")) else {
        events.push(unapplied(None, "no business number", value));
        return;
    };
    let list = value.get("user_id_update").and_then(Value::as_array);
    for u in list.into_iter().flatten() {
        let (Some(previous), Some(current)) = (
            text(u.pointer("/user_id/previous")),
            text(u.pointer("/user_id/current")),
        ) else {
            events.push(unapplied(
                Some(&phone_number_id),
                "user id update unreadable",
                u,
            ));
            continue;
        };
        events.push(PlatformEvent::UserIdChanged {
            account: phone_number_id.clone(),
            person: Person {
                phone: text(u.get("wa_id")),
                user_id: Some(previous.clone()),
                ..Person::default()
            },
            previous,
            current,
            parent: text(u.pointer("/parent_user_id/current")),
        });
    }
}

/// `user_preferences[]` of a `user_preferences` change: marketing messages stopped or
/// resumed (other categories and values are not applied).
fn preferences(value: &Value, events: &mut Vec<PlatformEvent>) {
    let Some(phone_number_id) = text(value.pointer("/metadata/phone_number_id")) else {
        events.push(unapplied(None, "no business number", value));
        return;
    };
    let account = Some(phone_number_id.as_str());
    let list = value.get("user_preferences").and_then(Value::as_array);
    for p in list.into_iter().flatten() {
        let category = text(p.get("category")).map(|c| c.to_ascii_lowercase());
        if category.as_deref() != Some("marketing_messages") {
            events.push(unapplied(account, "preference not handled", p));
            continue;
        }
        let stop = match text(p.get("value"))
            .map(|v| v.to_ascii_lowercase())
            .as_deref()
        {
            Some("stop") => true,
            Some("resume") => false,
            _ => {
                events.push(unapplied(account, "preference not handled", p));
                continue;
            }
        };
        let person = Person {
            phone: text(p.get("wa_id")),
            user_id: text(p.get("user_id")),
            parent_user_id: text(p.get("parent_user_id")),
            ..Person::default()
        };
        if !person.is_named() {
            events.push(unapplied(account, "preference without a person", p));
            continue;
        }
        events.push(PlatformEvent::Preference {
            account: phone_number_id.clone(),
            person,
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
        business_account: waba_id?.to_owned(),
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
        business_account: waba_id?.to_owned(),
        display_phone_number: text(value.get("display_phone_number"))?,
        rating: whatsapp::quality_rating(&event),
        event,
    })
}

#[cfg(test)]
mod documented;
#[cfg(test)]
mod tests;
