//! Webhooks posted on demand: inbound user messages (text, replies, media, location,
//! reactions), template status updates, phone-number quality updates and raw bytes
//! (for bad-signature tests).
//!
//! Media messages follow the messages webhook reference: `image`/`video`
//! `{caption?, mime_type, sha256, id}`, `document` adds `filename`, `audio` adds
//! `voice`, `sticker` adds `animated`; `sha256` is the base64 SHA-256 of the file
//! (as real payloads carry it, e.g. <https://github.com/WhatsApp/WhatsApp-Business-API-Setup-Scripts/issues/73>).
//! A removed reaction omits `emoji` (reaction webhook reference).

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use rand::Rng;
use serde_json::{Map, Value, json};

use crate::FakeGraph;
use crate::model::{
    InboundKind, InboundMessage, Posted, QualityUpdate, ReplyContext, TemplateStatus,
    TemplateStatusUpdate,
};
use crate::state::InboundRecord;
use crate::webhooks::{deliver, deliver_value, messages_envelope, number_envelope, waba_envelope};

fn inbound_wamid() -> String {
    format!(
        "wamid.{}",
        STANDARD.encode(rand::rng().random::<[u8; 24]>())
    )
}

/// The object every media message carries (`{mime_type, sha256, id}`, the hash base64
/// as in webhooks); captions and the like are added by the caller.
fn media_object(media_id: &str, mime_type: &str, sha256: &str) -> Value {
    json!({ "mime_type": mime_type, "sha256": sha256, "id": media_id })
}

/// Sets `key` only when there is a value: the platform omits absent optional fields.
fn put_opt(obj: &mut Value, key: &str, value: Option<&str>) {
    if let Some(v) = value {
        obj[key] = json!(v);
    }
}

fn parse_status(event: &str) -> Option<TemplateStatus> {
    serde_json::from_value(Value::String(event.to_owned())).ok()
}

impl FakeGraph {
    /// Posts an inbound user message (`messages[]` with `contacts[]`) for the
    /// given business number, signed like the platform does. Returns what was
    /// posted, including the new message's wamid. The message opens (or restarts) the
    /// user's customer-service window and can then be marked as read.
    pub async fn post_inbound(&self, msg: InboundMessage) -> anyhow::Result<Posted> {
        let number = {
            let inner = self.shared.lock();
            inner
                .numbers
                .get(&msg.phone_number_id)
                .map(|n| n.spec.clone())
        };
        let Some(number) = number else {
            anyhow::bail!("unknown phone_number_id {}", msg.phone_number_id);
        };
        let wamid = inbound_wamid();
        let now = chrono::Utc::now();
        {
            // Remembered before delivery: the app may mark it read (or reply to it)
            // while the webhook is still in flight.
            let mut inner = self.shared.lock();
            let record = InboundRecord {
                phone_number_id: msg.phone_number_id.clone(),
            };
            inner.inbound.insert(wamid.clone(), record);
            crate::window::touch(&mut inner, &msg.phone_number_id, &msg.from, now);
        }
        let mut message = json!({
            "from": msg.from,
            "id": wamid,
            "timestamp": now.timestamp().to_string(),
        });
        if let Some(ReplyContext { id, from }) = &msg.context {
            let from = from
                .clone()
                .unwrap_or_else(|| number.display_phone_number.clone());
            message["context"] = json!({ "from": from, "id": id });
        }
        match &msg.kind {
            InboundKind::Text { body } => {
                message["type"] = json!("text");
                message["text"] = json!({ "body": body });
            }
            InboundKind::Button { payload, text } => {
                message["type"] = json!("button");
                message["button"] = json!({ "payload": payload, "text": text });
            }
            InboundKind::ButtonReply { id, title } => {
                message["type"] = json!("interactive");
                message["interactive"] =
                    json!({ "type": "button_reply", "button_reply": { "id": id, "title": title } });
            }
            InboundKind::ListReply {
                id,
                title,
                description,
            } => {
                let mut reply = json!({ "id": id, "title": title });
                if let Some(d) = description {
                    reply["description"] = json!(d);
                }
                message["type"] = json!("interactive");
                message["interactive"] = json!({ "type": "list_reply", "list_reply": reply });
            }
            InboundKind::Unsupported => {
                message["type"] = json!("unsupported");
                message["errors"] = json!([{
                    "code": 131051,
                    "title": "Message type unknown",
                    "message": "Message type unknown",
                    "error_data": { "details": "Message type is currently not supported." },
                }]);
            }
            InboundKind::Image {
                media_id,
                mime_type,
                sha256,
                caption,
            } => {
                let mut obj = media_object(media_id, mime_type, sha256);
                put_opt(&mut obj, "caption", caption.as_deref());
                message["type"] = json!("image");
                message["image"] = obj;
            }
            InboundKind::Document {
                media_id,
                mime_type,
                sha256,
                filename,
                caption,
            } => {
                let mut obj = media_object(media_id, mime_type, sha256);
                put_opt(&mut obj, "caption", caption.as_deref());
                put_opt(&mut obj, "filename", filename.as_deref());
                message["type"] = json!("document");
                message["document"] = obj;
            }
            InboundKind::Audio {
                media_id,
                mime_type,
                sha256,
                voice,
            } => {
                let mut obj = media_object(media_id, mime_type, sha256);
                obj["voice"] = json!(voice);
                message["type"] = json!("audio");
                message["audio"] = obj;
            }
            InboundKind::Video {
                media_id,
                mime_type,
                sha256,
                caption,
            } => {
                let mut obj = media_object(media_id, mime_type, sha256);
                put_opt(&mut obj, "caption", caption.as_deref());
                message["type"] = json!("video");
                message["video"] = obj;
            }
            InboundKind::Sticker {
                media_id,
                mime_type,
                sha256,
                animated,
            } => {
                let mut obj = media_object(media_id, mime_type, sha256);
                obj["animated"] = json!(animated);
                message["type"] = json!("sticker");
                message["sticker"] = obj;
            }
            InboundKind::Location {
                latitude,
                longitude,
                name,
                address,
            } => {
                let mut obj = json!({ "latitude": latitude, "longitude": longitude });
                put_opt(&mut obj, "name", name.as_deref());
                put_opt(&mut obj, "address", address.as_deref());
                message["type"] = json!("location");
                message["location"] = obj;
            }
            InboundKind::Reaction { message_id, emoji } => {
                let mut obj = json!({ "message_id": message_id });
                put_opt(&mut obj, "emoji", emoji.as_deref());
                message["type"] = json!("reaction");
                message["reaction"] = obj;
            }
        }
        let name = msg.profile_name.clone().unwrap_or_default();
        let mut fields = Map::new();
        fields.insert(
            "contacts".into(),
            json!([{ "profile": { "name": name }, "wa_id": msg.from }]),
        );
        fields.insert("messages".into(), json!([message]));
        let envelope = messages_envelope(&number, fields);
        deliver_value(self, "messages", Some(wamid), &envelope).await
    }

    /// Posts the `system` message the platform sends when a person moves their account from
    /// `from` to `new_wa_id` (`type: "user_changed_number"`, the new id in `system.wa_id`;
    /// like every system message, without `contacts`). Returns what was posted.
    pub async fn post_number_change(
        &self,
        phone_number_id: &str,
        from: &str,
        new_wa_id: &str,
    ) -> anyhow::Result<Posted> {
        let number = self.number_spec(phone_number_id)?;
        let wamid = inbound_wamid();
        let message = json!({
            "from": from,
            "id": wamid,
            "timestamp": chrono::Utc::now().timestamp().to_string(),
            "type": "system",
            "system": {
                "body": format!("User changed from {from} to {new_wa_id}"),
                "wa_id": new_wa_id,
                "type": "user_changed_number",
            },
        });
        let mut fields = Map::new();
        fields.insert("messages".into(), json!([message]));
        let envelope = messages_envelope(&number, fields);
        deliver_value(self, "messages", Some(wamid), &envelope).await
    }

    /// Posts a `user_preferences` change: the person stopped (`"stop"`) or resumed
    /// (`"resume"`) the business's marketing messages from the chat.
    pub async fn post_user_preference(
        &self,
        phone_number_id: &str,
        wa_id: &str,
        value: &str,
    ) -> anyhow::Result<Posted> {
        let number = self.number_spec(phone_number_id)?;
        let detail = match value {
            "stop" => "User requested to stop marketing messages",
            _ => "User requested to resume marketing messages",
        };
        let mut fields = Map::new();
        fields.insert(
            "contacts".into(),
            json!([{ "profile": { "name": "Test User" }, "wa_id": wa_id }]),
        );
        fields.insert(
            "user_preferences".into(),
            json!([{
                "wa_id": wa_id,
                "detail": detail,
                "category": "marketing_messages",
                "value": value,
                "timestamp": chrono::Utc::now().timestamp(),
            }]),
        );
        let envelope = number_envelope(&number, "user_preferences", fields);
        deliver_value(self, "user_preferences", None, &envelope).await
    }

    fn number_spec(&self, phone_number_id: &str) -> anyhow::Result<crate::model::NumberSpec> {
        let inner = self.shared.lock();
        match inner.numbers.get(phone_number_id) {
            Some(n) => Ok(n.spec.clone()),
            None => anyhow::bail!("unknown phone_number_id {phone_number_id}"),
        }
    }

    /// Convenience for an inbound text message.
    pub async fn post_inbound_text(
        &self,
        phone_number_id: &str,
        from: &str,
        body: &str,
    ) -> anyhow::Result<Posted> {
        self.post_inbound(InboundMessage {
            phone_number_id: phone_number_id.to_owned(),
            from: from.to_owned(),
            profile_name: Some("Test User".to_owned()),
            kind: InboundKind::Text {
                body: body.to_owned(),
            },
            context: None,
        })
        .await
    }

    /// Posts a `message_template_status_update` (routed at WABA level). With
    /// `apply`, the stored template takes the new status first.
    pub async fn post_template_status_update(
        &self,
        upd: TemplateStatusUpdate,
    ) -> anyhow::Result<Posted> {
        if upd.apply
            && let Some(status) = parse_status(&upd.event)
        {
            self.set_template_status(&upd.waba_id, &upd.name, &upd.language, status);
        }
        let tpl = self
            .templates(&upd.waba_id)
            .into_iter()
            .find(|t| t.spec.name == upd.name && t.spec.language == upd.language);
        let Some(tpl) = tpl else {
            anyhow::bail!(
                "template {}/{} is not registered under WABA {}",
                upd.name,
                upd.language,
                upd.waba_id
            );
        };
        let id: Value = tpl
            .id
            .parse::<u64>()
            .map(Value::from)
            .unwrap_or_else(|_| json!(tpl.id));
        let value = json!({
            "event": upd.event,
            "message_template_id": id,
            "message_template_name": upd.name,
            "message_template_language": upd.language,
            "reason": upd.reason.clone().unwrap_or_else(|| "NONE".to_owned()),
            "message_template_category": tpl.spec.category,
        });
        let envelope = waba_envelope(&upd.waba_id, "message_template_status_update", value);
        deliver_value(self, "message_template_status_update", None, &envelope).await
    }

    /// Posts a `phone_number_quality_update` for a registered number.
    pub async fn post_quality_update(&self, upd: QualityUpdate) -> anyhow::Result<Posted> {
        let number = {
            let inner = self.shared.lock();
            inner
                .numbers
                .get(&upd.phone_number_id)
                .map(|n| n.spec.clone())
        };
        let Some(number) = number else {
            anyhow::bail!("unknown phone_number_id {}", upd.phone_number_id);
        };
        let mut value = json!({
            "display_phone_number": number.display_phone_number,
            "event": upd.event,
            "current_limit": upd.current_limit,
        });
        if let Some(old) = &upd.old_limit {
            value["old_limit"] = json!(old);
        }
        if let Some(max) = &upd.max_daily_conversations_per_business {
            value["max_daily_conversations_per_business"] = json!(max);
        }
        let envelope = waba_envelope(&number.waba_id, "phone_number_quality_update", value);
        deliver_value(self, "phone_number_quality_update", None, &envelope).await
    }

    /// Posts these exact bytes with this `X-Hub-Signature-256` value (or none),
    /// for tests of signature verification.
    pub async fn post_raw(
        &self,
        body: Vec<u8>,
        signature: Option<String>,
    ) -> anyhow::Result<Posted> {
        let Some(config) = self.webhook_config() else {
            anyhow::bail!("no webhook is configured on the fake");
        };
        self.shared
            .counters
            .webhooks
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(deliver(self, &config, "raw", None, body, signature).await)
    }
}
