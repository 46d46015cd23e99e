//! Webhooks posted on demand: inbound user messages (text, replies, media, location,
//! reactions), a user's identity changes (`user_changed_number` and
//! `user_changed_user_id` system messages, `user_id_update`), `user_preferences`,
//! template status updates, phone-number quality updates and raw bytes (for
//! bad-signature tests).
//!
//! Media messages follow the messages webhook reference: `image`/`video`
//! `{caption?, mime_type, sha256, id}`, `document` adds `filename`, `audio` adds
//! `voice`, `sticker` adds `animated`; `sha256` is the base64 SHA-256 of the file
//! (as real payloads carry it, e.g. <https://github.com/WhatsApp/WhatsApp-Business-API-Setup-Scripts/issues/73>).
//! A removed reaction omits `emoji` (reaction webhook reference).
//!
//! User identifiers follow the business-scoped user ids guide
//! (<https://developers.facebook.com/documentation/business-messaging/whatsapp/business-scoped-user-ids/>):
//! every message carries `from_user_id` and `contacts[].user_id` (the BSUID),
//! `from_parent_user_id`/`contacts[].parent_user_id` when the user has a parent BSUID,
//! `contacts[].profile.username` when they have a username, and `from`/`contacts[].wa_id`
//! only when their phone may be shared (omitted otherwise, never `""`). The same guide
//! gives the `user_id_update` field and the `user_changed_user_id` system message; the
//! system messages reference
//! (<https://developers.facebook.com/documentation/business-messaging/whatsapp/webhooks/reference/messages/system/>)
//! gives `user_changed_number`.

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
use crate::users::{Snapshot, UserSpec};
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

/// `{"from"?, "from_user_id", "from_parent_user_id"?}`: who sent a message.
fn from_fields(user: &Snapshot) -> Value {
    let mut m = json!({});
    if let Some(p) = &user.shared_phone {
        m["from"] = json!(p);
    }
    m["from_user_id"] = json!(user.user_id);
    if let Some(p) = &user.parent_user_id {
        m["from_parent_user_id"] = json!(p);
    }
    m
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
        let number = self.number_spec(&msg.phone_number_id)?;
        let wamid = inbound_wamid();
        let now = chrono::Utc::now();
        let user = {
            // Remembered before delivery: the app may mark it read (or reply to it)
            // while the webhook is still in flight.
            let mut inner = self.shared.lock();
            let i = match crate::users::resolve(&mut inner, &msg.from) {
                Some(i) => i,
                // A BSUID the fake was not told about: a user without a phone.
                None if crate::users::is_user_id(&msg.from) => inner.users.upsert(UserSpec {
                    phone: None,
                    user_id: msg.from.clone(),
                    parent_user_id: None,
                    username: None,
                    phone_shared: false,
                }),
                None => anyhow::bail!("from ({}) is neither a phone nor a BSUID", msg.from),
            };
            if let Some(name) = &msg.profile_name
                && let Some(u) = inner.users.get_mut(i)
            {
                u.name = Some(name.clone());
            }
            let record = InboundRecord {
                phone_number_id: msg.phone_number_id.clone(),
            };
            inner.inbound.insert(wamid.clone(), record);
            let key = crate::users::key_of(i);
            crate::window::touch(&mut inner, &msg.phone_number_id, &key, now);
            inner.users.snapshot(i)
        };
        let Some(user) = user else {
            anyhow::bail!("user {} vanished", msg.from);
        };
        let mut message = from_fields(&user);
        message["id"] = json!(wamid);
        message["timestamp"] = json!(now.timestamp().to_string());
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
        let mut fields = Map::new();
        fields.insert("contacts".into(), json!([user.contact(true)]));
        fields.insert("messages".into(), json!([message]));
        let envelope = messages_envelope(&number, fields);
        deliver_value(self, "messages", Some(wamid), &envelope).await
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

/// What a user webhook needs: the user's index and snapshot, or an error naming them.
fn user_snapshot(inner: &mut crate::state::Inner, user: &str) -> anyhow::Result<(usize, Snapshot)> {
    let Some(i) = crate::users::resolve(inner, user) else {
        anyhow::bail!("unknown user {user}");
    };
    match inner.users.snapshot(i) {
        Some(s) => Ok((i, s)),
        None => anyhow::bail!("unknown user {user}"),
    }
}

/// Webhooks about the user's identity: phone and BSUID changes, marketing preferences.
impl FakeGraph {
    /// Posts the `system` message the platform sends when a person moves their account from
    /// `from` to `new_wa_id` (`type: "user_changed_number"`, body `User <name> changed from
    /// <old> to <new>`, the new phone in `system.wa_id`, the BSUID the change regenerates
    /// in `system.user_id`, the parent BSUID in `system.parent_user_id` when the user has
    /// one; like every system message, without `contacts`). The registry follows: the
    /// user now has `new_wa_id` and the new BSUID (generated from the new phone, see
    /// [`crate::users::generated_user_id`]). Returns what was posted.
    pub async fn post_number_change(
        &self,
        phone_number_id: &str,
        from: &str,
        new_wa_id: &str,
    ) -> anyhow::Result<Posted> {
        let number = self.number_spec(phone_number_id)?;
        let new_phone = crate::validate::wa_id(new_wa_id);
        let (user, new_user_id) = {
            let mut inner = self.shared.lock();
            let (i, user) = user_snapshot(&mut inner, from)?;
            let new_user_id = inner.users.fresh_user_id(&new_phone, Some(i));
            if let Some(u) = inner.users.get(i) {
                let mut spec = u.spec.clone();
                spec.phone = Some(new_phone);
                spec.user_id = new_user_id.clone();
                inner.users.set_spec(i, spec);
            }
            (user, new_user_id)
        };
        let wamid = inbound_wamid();
        let mut system = json!({
            "body": format!("User {} changed from {from} to {new_wa_id}", user.name),
            "wa_id": new_wa_id,
            "user_id": new_user_id,
            "type": "user_changed_number",
        });
        put_opt(
            &mut system,
            "parent_user_id",
            user.parent_user_id.as_deref(),
        );
        let message = json!({
            "from": from,
            "id": wamid,
            "timestamp": chrono::Utc::now().timestamp().to_string(),
            "type": "system",
            "system": system,
        });
        let mut fields = Map::new();
        fields.insert("messages".into(), json!([message]));
        let envelope = messages_envelope(&number, fields);
        deliver_value(self, "messages", Some(wamid), &envelope).await
    }

    /// Posts the `system` message of a BSUID change (`type: "user_changed_user_id"`):
    /// `from` only when the phone may be shared, `from_user_id` the old BSUID (and
    /// `from_parent_user_id`), `system: {body: "User <name> changed from <OLD_BSUID> to
    /// <NEW_BSUID>", user_id: <NEW_BSUID>, parent_user_id?, type}`, no `contacts` and no
    /// `system.wa_id` (the system messages reference: this type "reports only the BSUID
    /// change; no phone number is included"). `user` is a phone or BSUID; the registry
    /// follows. Returns what was posted.
    pub async fn post_user_changed_user_id(
        &self,
        phone_number_id: &str,
        user: &str,
        new_user_id: &str,
    ) -> anyhow::Result<Posted> {
        let number = self.number_spec(phone_number_id)?;
        let old = {
            let mut inner = self.shared.lock();
            let (i, old) = user_snapshot(&mut inner, user)?;
            crate::users::change_id(&mut inner, i, new_user_id);
            old
        };
        let wamid = inbound_wamid();
        let mut system = json!({
            "body": format!("User {} changed from {} to {new_user_id}", old.name, old.user_id),
            "user_id": new_user_id,
            "type": "user_changed_user_id",
        });
        put_opt(&mut system, "parent_user_id", old.parent_user_id.as_deref());
        let mut message = from_fields(&old);
        message["id"] = json!(wamid);
        message["timestamp"] = json!(chrono::Utc::now().timestamp().to_string());
        message["type"] = json!("system");
        message["system"] = system;
        let mut fields = Map::new();
        fields.insert("messages".into(), json!([message]));
        let envelope = messages_envelope(&number, fields);
        deliver_value(self, "messages", Some(wamid), &envelope).await
    }

    /// Posts a `user_id_update` (its own webhook field): `contacts: [{profile: {name},
    /// wa_id?}]` (Meta's syntax has no `user_id` or `username` there) and
    /// `user_id_update: [{wa_id?, detail: "User id for <name> has been updated.", user_id:
    /// {previous, current}, parent_user_id?: {previous, current}, timestamp}]`, `wa_id`
    /// only when the phone may be shared and `timestamp` unix seconds as a string. The
    /// parent BSUID is kept (reported with `previous` = `current`). `previous_user_id` may
    /// also be a phone; the registry follows. Returns what was posted.
    pub async fn post_user_id_update(
        &self,
        phone_number_id: &str,
        previous_user_id: &str,
        current_user_id: &str,
    ) -> anyhow::Result<Posted> {
        let number = self.number_spec(phone_number_id)?;
        let old = {
            let mut inner = self.shared.lock();
            let (i, old) = user_snapshot(&mut inner, previous_user_id)?;
            crate::users::change_id(&mut inner, i, current_user_id);
            old
        };
        let mut contact = json!({ "profile": { "name": old.name } });
        put_opt(&mut contact, "wa_id", old.shared_phone.as_deref());
        let mut update = json!({});
        put_opt(&mut update, "wa_id", old.shared_phone.as_deref());
        update["detail"] = json!(format!("User id for {} has been updated.", old.name));
        update["user_id"] = json!({ "previous": old.user_id, "current": current_user_id });
        if let Some(p) = &old.parent_user_id {
            update["parent_user_id"] = json!({ "previous": p, "current": p });
        }
        update["timestamp"] = json!(chrono::Utc::now().timestamp().to_string());
        let mut fields = Map::new();
        fields.insert("contacts".into(), json!([contact]));
        fields.insert("user_id_update".into(), json!([update]));
        let envelope = number_envelope(&number, "user_id_update", fields);
        deliver_value(self, "user_id_update", None, &envelope).await
    }

    /// Posts a `user_preferences` change: the person (a phone or BSUID) stopped (`"stop"`)
    /// or resumed (`"resume"`) the business's marketing messages from the chat. The
    /// contact carries `profile.username`, `user_id`, `parent_user_id` as inbound messages
    /// do; each item `{wa_id?, user_id, parent_user_id?, detail, category, value,
    /// timestamp}`, `wa_id` only when the phone may be shared.
    pub async fn post_user_preference(
        &self,
        phone_number_id: &str,
        wa_id: &str,
        value: &str,
    ) -> anyhow::Result<Posted> {
        let number = self.number_spec(phone_number_id)?;
        let (_, user) = user_snapshot(&mut self.shared.lock(), wa_id)?;
        let detail = match value {
            "stop" => "User requested to stop marketing messages",
            _ => "User requested to resume marketing messages",
        };
        let mut item = json!({});
        put_opt(&mut item, "wa_id", user.shared_phone.as_deref());
        item["user_id"] = json!(user.user_id);
        put_opt(&mut item, "parent_user_id", user.parent_user_id.as_deref());
        item["detail"] = json!(detail);
        item["category"] = json!("marketing_messages");
        item["value"] = json!(value);
        item["timestamp"] = json!(chrono::Utc::now().timestamp());
        let mut fields = Map::new();
        fields.insert("contacts".into(), json!([user.contact(true)]));
        fields.insert("user_preferences".into(), json!([item]));
        let envelope = number_envelope(&number, "user_preferences", fields);
        deliver_value(self, "user_preferences", None, &envelope).await
    }
}
