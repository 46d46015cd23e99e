//! What wm sends the Cloud API besides the call itself: the documented body of each kind of
//! message (template, text, media by id, reply buttons, with `context` for a quoted reply),
//! media upload (`POST /{phone-number-id}/media`, multipart) and marking a message read
//! (`{"status":"read","message_id":…}`).

use reqwest::multipart::{Form, Part};
use serde_json::{Value, json};
use wm_core::address::Address;
use wm_core::provider::{
    MediaUpload, OutboundContent, OutboundMessage, PlatformAccount, SendError,
};
use wm_types::messages::MessageType;

use super::graph::{GraphError, WhatsAppProvider, transport_error};
use wm_core::whatsapp;

/// The documented send body of a message: to a phone in `to` (its digits), to a person
/// known only by their business-scoped user id in `recipient` (`to` left out: when both
/// are given the platform takes `to`).
pub(super) fn send_body(message: &OutboundMessage) -> Value {
    let mut body = json!({
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
    });
    match &message.to {
        Address::Phone(phone) => body["to"] = json!(phone.digits()),
        Address::UserId(id) => body["recipient"] = json!(id),
    }
    match &message.content {
        OutboundContent::Template {
            name,
            language,
            parameters,
        } => {
            let mut template = json!({ "name": name, "language": { "code": language } });
            if !parameters.is_empty() {
                let parameters: Vec<Value> = parameters
                    .iter()
                    .map(|text| json!({ "type": "text", "text": text }))
                    .collect();
                template["components"] = json!([{ "type": "body", "parameters": parameters }]);
            }
            body["type"] = json!("template");
            body["template"] = template;
        }
        OutboundContent::Text => {
            body["type"] = json!("text");
            body["text"] = json!({ "preview_url": false, "body": message.body });
        }
        OutboundContent::Media {
            kind,
            media_id,
            caption,
            filename,
        } => {
            let kind = media_kind(*kind);
            let mut media = json!({ "id": media_id });
            if matches!(kind, "image" | "video" | "document")
                && let Some(c) = caption
            {
                media["caption"] = json!(c);
            }
            if kind == "document"
                && let Some(f) = filename
            {
                media["filename"] = json!(f);
            }
            body["type"] = json!(kind);
            body[kind] = media;
        }
        OutboundContent::Interactive { buttons } => {
            let buttons: Vec<Value> = buttons
                .iter()
                .map(
                    |(id, title)| json!({ "type": "reply", "reply": { "id": id, "title": title } }),
                )
                .collect();
            body["type"] = json!("interactive");
            body["interactive"] = json!({
                "type": "button",
                "body": { "text": message.body },
                "action": { "buttons": buttons },
            });
        }
    }
    if let Some(quoted) = &message.reply_to {
        body["context"] = json!({ "message_id": quoted });
    }
    if !message.correlation_id.is_empty() {
        body["biz_opaque_callback_data"] = json!(message.correlation_id);
    }
    body
}

/// The Cloud API's name of a media kind.
fn media_kind(kind: MessageType) -> &'static str {
    match kind {
        MessageType::Video => "video",
        MessageType::Audio => "audio",
        MessageType::Document => "document",
        MessageType::Sticker => "sticker",
        _ => "image",
    }
}

/// A refusal of an upload or a read: the code table decides, a 5xx without a Graph error
/// is "later".
fn refused(status: reqwest::StatusCode, bytes: &[u8]) -> SendError {
    match GraphError::parse(bytes) {
        Some(g) if status.is_server_error() && whatsapp::classify(g.code).is_none() => {
            SendError::RetryLater(g.text())
        }
        Some(g) => whatsapp::send_error_with_subcode(g.code, g.subcode, &g.text()),
        None if status.is_server_error() || status.as_u16() == 429 => {
            SendError::RetryLater(format!("the platform answered HTTP {status}"))
        }
        None => SendError::Rejected {
            reason: format!("the platform answered HTTP {status}"),
            opt_out: false,
        },
    }
}

impl WhatsAppProvider {
    /// `POST /{phone-number-id}/media`: the file uploaded for that number; its media id.
    pub(super) async fn upload(
        &self,
        account: &PlatformAccount,
        file: &MediaUpload,
    ) -> Result<String, SendError> {
        let name = file.filename.clone().unwrap_or_else(|| "file".into());
        let part = Part::bytes(file.bytes.clone())
            .file_name(name)
            .mime_str(&file.mime_type)
            .map_err(|e| SendError::Rejected {
                reason: format!(
                    "the file's type {:?} is not a MIME type: {e}",
                    file.mime_type
                ),
                opt_out: false,
            })?;
        let form = Form::new()
            .text("messaging_product", "whatsapp")
            .text("type", file.mime_type.clone())
            .part("file", part);
        let url = self.url(account.id.trim(), "media");
        let request = self
            .http
            .post(url)
            .bearer_auth(&account.access_token)
            .multipart(form);
        let bytes = exchange(request).await?;
        let answer: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        answer
            .get("id")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty())
            .map(str::to_owned)
            .ok_or_else(|| SendError::RetryLater("the upload's answer has no media id".into()))
    }

    /// `POST /{phone-number-id}/messages` `{"status":"read","message_id":…}`.
    pub(super) async fn read(
        &self,
        account: &PlatformAccount,
        message_id: &str,
    ) -> Result<(), SendError> {
        let url = self.url(account.id.trim(), "messages");
        let body = json!({
            "messaging_product": "whatsapp",
            "status": "read",
            "message_id": message_id,
        });
        let request = self
            .http
            .post(url)
            .bearer_auth(&account.access_token)
            .json(&body);
        exchange(request).await.map(|_| ())
    }
}

/// Makes a call that may safely be made twice (an upload costs a second copy, a read mark
/// changes nothing), so an unknown outcome is "retry later"; the answer's body on success.
async fn exchange(request: reqwest::RequestBuilder) -> Result<axum::body::Bytes, SendError> {
    let response = request.send().await.map_err(|e| match transport_error(e) {
        SendError::Ambiguous(r) => SendError::RetryLater(r),
        other => other,
    })?;
    let status = response.status();
    let bytes = response
        .bytes()
        .await
        .map_err(|e| SendError::RetryLater(e.without_url().to_string()))?;
    if status.is_success() {
        Ok(bytes)
    } else {
        Err(refused(status, &bytes))
    }
}
