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
use wm_core::provider::StatusUpdate;
use wm_core::whatsapp;
use wm_types::enums::RecipientStatus;

use super::no_nul;

/// One thing the platform told us.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlatformEvent {
    /// A sent message's status changed (`sent`, `delivered`, `read`, `failed`).
    Status {
        /// The business number it was sent from (`metadata.phone_number_id`).
        phone_number_id: String,
        /// The status, with the correlation id the message was sent with.
        update: StatusUpdate,
        /// The platform's error code of a failure (`errors[0].code`).
        code: Option<i64>,
    },
    /// A person wrote to a business number (every message type, `unsupported` and types
    /// added later included: whoever writes is never lost).
    Inbound {
        /// The business number written to.
        phone_number_id: String,
        /// The platform's id of the message (for de-duplicating redeliveries).
        message_id: String,
        /// The person's WhatsApp id (their number's digits).
        from: String,
        /// Their profile name.
        name: Option<String>,
        /// When they sent it (ms since epoch).
        at_ms: Option<i64>,
        /// The message type: `text`, `button`, `interactive`, `image`, `unsupported`, …
        kind: String,
        /// The text body, a button's text, an interactive reply's title or a media caption.
        text: Option<String>,
        /// The business message it replies to (`context.id`).
        context_id: Option<String>,
    },
    /// A person moved their WhatsApp account to a new number (a `system` message of type
    /// `user_changed_number`, formerly `customer_changed_number`).
    NumberChanged {
        /// The business number told.
        phone_number_id: String,
        /// The platform's id of the notice (for de-duplicating redeliveries).
        message_id: String,
        /// The old WhatsApp id.
        from: String,
        /// The new one.
        to: String,
    },
    /// A person stopped or resumed a business's marketing messages from the chat (the
    /// `user_preferences` field).
    Preference {
        /// The business number concerned.
        phone_number_id: String,
        /// The person's WhatsApp id.
        wa_id: String,
        /// `true` for `stop`, `false` for `resume`.
        stop: bool,
    },
    /// A template's review status changed.
    TemplateStatus {
        /// The WhatsApp Business Account that owns it.
        waba_id: String,
        /// Template name.
        name: String,
        /// Language code.
        language: String,
        /// The event (`APPROVED`, `PAUSED`, `REJECTED`, …).
        status: String,
        /// Why, when the platform says (`NONE` is read as no reason).
        reason: Option<String>,
    },
    /// A business number's quality or messaging limit changed.
    Quality {
        /// The WhatsApp Business Account that owns the number.
        waba_id: String,
        /// The number as the platform displays it (digits).
        display_phone_number: String,
        /// The event (`FLAGGED`, `UNFLAGGED`, `UPGRADE`, …).
        event: String,
        /// The rating the event implies ([`whatsapp::quality_rating`]).
        rating: Option<&'static str>,
    },
}

impl PlatformEvent {
    /// The business number the event is about; `None` for the account-level ones (a
    /// template's status, a number's quality, which name the WABA).
    pub fn phone_number_id(&self) -> Option<&str> {
        match self {
            PlatformEvent::Status {
                phone_number_id, ..
            }
            | PlatformEvent::Inbound {
                phone_number_id, ..
            }
            | PlatformEvent::NumberChanged {
                phone_number_id, ..
            }
            | PlatformEvent::Preference {
                phone_number_id, ..
            } => Some(phone_number_id),
            PlatformEvent::TemplateStatus { .. } | PlatformEvent::Quality { .. } => None,
        }
    }
}

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
    let body = match kind.as_str() {
        "text" => text(m.pointer("/text/body")),
        "button" => text(m.pointer("/button/text")).or_else(|| text(m.pointer("/button/payload"))),
        "interactive" => text(m.pointer("/interactive/button_reply/title"))
            .or_else(|| text(m.pointer("/interactive/list_reply/title"))),
        "image" | "video" | "document" => text(m.get(&kind).and_then(|media| media.get("caption"))),
        "system" => return number_changed(phone_number_id, &from, &message_id, m),
        // `unsupported`, `unknown`, media without text and types added later: still a
        // message from someone, whose contact and conversation must exist.
        _ => None,
    };
    let contact = contacts
        .iter()
        .find(|c| text(c.get("wa_id")).as_deref() == Some(from.as_str()))
        .or(if contacts.len() == 1 {
            contacts.first()
        } else {
            None
        });
    Some(PlatformEvent::Inbound {
        phone_number_id: phone_number_id.to_owned(),
        message_id,
        name: contact.and_then(|c| text(c.pointer("/profile/name"))),
        from,
        at_ms: timestamp_ms(m.get("timestamp")),
        kind,
        text: body,
        context_id: text(m.pointer("/context/id")),
    })
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
    Some(PlatformEvent::TemplateStatus {
        waba_id: waba_id?.to_owned(),
        name: text(value.get("message_template_name"))?,
        language: text(value.get("message_template_language"))?,
        status: text(value.get("event"))?,
        reason: text(value.get("reason")).filter(|r| !r.eq_ignore_ascii_case("NONE")),
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
