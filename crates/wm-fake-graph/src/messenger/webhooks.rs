//! Signed webhook posts for `object: "page"` and `object: "instagram"`.
//!
//! Envelope (webhook-events page; Instagram examples page):
//! `{"object","entry":[{"id":<Page or IG account id>,"time":<ms>,"messaging":[<one
//! item>]}]}` — one `messaging` item per entry ("even though this is an array, it will
//! only contain one `messaging` object"), several entries in one post for a batch.
//! Meta's Instagram snippet wraps the body in `[ … ]`; its other examples show a bare
//! object, which the fake posts.
//!
//! Body bytes: non-ASCII characters are written as `\uXXXX` escapes with lowercase hex
//! (surrogate pairs beyond the BMP), the form the Messenger webhooks page says Meta signs
//! ("the string `äöå` should be escaped to `\u00e4\u00f6\u00e5`"); the signature is
//! `sha256=<hex HMAC-SHA256 of those exact bytes, keyed with the app secret>`
//! ([`crate::sign`]). Delivery, retries and the log are the WhatsApp side's
//! ([`crate::FakeGraph::webhook_log`]), with the configured [`crate::WebhookConfig`].

use serde_json::{Value, json};

use super::model::{MessengerPosted, Platform, RawSignature};
use super::send::Echo;
use crate::FakeGraph;
use crate::model::{Posted, WebhookConfig};
use crate::webhooks::{deliver, sign};

/// Serializes `value` with every non-ASCII character escaped (`\u00e4`).
pub(crate) fn escaped_json(value: &Value) -> Vec<u8> {
    let text = value.to_string();
    let mut out = String::with_capacity(text.len());
    let mut units = [0u16; 2];
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{u:04x}"));
            }
        }
    }
    out.into_bytes()
}

/// The `message` of an echo (`is_echo`, `app_id`/`metadata` for Messenger) for a sent
/// message whose attachments are given as `(type, url)`.
pub(crate) fn echo_message(
    platform: Platform,
    mid: &str,
    app_id: u64,
    text: Option<&str>,
    metadata: Option<&str>,
    attachments: &[(String, Value)],
) -> Value {
    let mut m = json!({});
    if platform == Platform::Messenger {
        m["is_echo"] = json!(true);
        m["app_id"] = json!(app_id);
        if let Some(md) = metadata {
            m["metadata"] = json!(md);
        }
    }
    m["mid"] = json!(mid);
    if let Some(t) = text {
        m["text"] = json!(t);
    }
    if !attachments.is_empty() {
        let list: Vec<Value> = attachments
            .iter()
            .map(|(kind, payload)| json!({ "type": kind, "payload": payload }))
            .collect();
        m["attachments"] = Value::Array(list);
    }
    if platform == Platform::Instagram {
        m["is_echo"] = json!(true);
    }
    m
}

/// The envelope of `entries` (`(entry id, messaging item)`).
pub(crate) fn envelope(platform: Platform, entries: Vec<(String, Value)>) -> Value {
    let time = chrono::Utc::now().timestamp_millis();
    let entry: Vec<Value> = entries
        .into_iter()
        .map(|(id, item)| json!({ "id": id, "time": time, "messaging": [item] }))
        .collect();
    json!({ "object": platform.object(), "entry": entry })
}

impl FakeGraph {
    /// Sets (or clears) where `object: "page"` (Messenger) webhooks go.
    pub fn configure_messenger_webhook(&self, config: Option<WebhookConfig>) {
        self.msgr().page_webhook = config;
    }

    /// Sets (or clears) where `object: "instagram"` webhooks go.
    pub fn configure_instagram_webhook(&self, config: Option<WebhookConfig>) {
        self.msgr().instagram_webhook = config;
    }

    fn messenger_webhook_config(&self, platform: Platform) -> anyhow::Result<WebhookConfig> {
        let store = self.msgr();
        let config = match platform {
            Platform::Messenger => store.page_webhook.clone(),
            Platform::Instagram => store.instagram_webhook.clone(),
        };
        config.ok_or_else(|| {
            anyhow::anyhow!("no {} webhook is configured on the fake", platform.object())
        })
    }

    /// Signs and posts the envelope of `entries`; logged under `field`.
    pub(crate) async fn post_messenger(
        &self,
        platform: Platform,
        field: &str,
        entries: Vec<(String, Value)>,
        mids: Vec<String>,
    ) -> anyhow::Result<MessengerPosted> {
        let config = self.messenger_webhook_config(platform)?;
        let body = escaped_json(&envelope(platform, entries));
        let signature = Some(sign(&config.app_secret, &body));
        let posted = deliver(self, &config, field, mids.first().cloned(), body, signature).await;
        Ok(MessengerPosted { mids, posted })
    }

    /// Posts the echo of a send (`message_echoes` for Messenger, an `is_echo` message in
    /// `messages` for Instagram): sender = the Page / IG account, recipient = the person.
    pub(crate) async fn post_echo(&self, echo: Echo) -> anyhow::Result<MessengerPosted> {
        let item = json!({
            "sender": { "id": echo.account_id },
            "recipient": { "id": echo.recipient },
            "timestamp": chrono::Utc::now().timestamp_millis(),
            "message": echo.message,
        });
        let mid = echo.message["mid"].as_str().unwrap_or_default().to_owned();
        let field = match echo.platform {
            Platform::Messenger => "message_echoes",
            Platform::Instagram => "messages",
        };
        self.post_messenger(
            echo.platform,
            field,
            vec![(echo.account_id, item)],
            vec![mid],
        )
        .await
    }

    /// Posts these exact bytes to the `page` (Messenger) or `instagram` webhook, signed
    /// with its app secret, with a given header value, or unsigned: for tests of
    /// malformed bodies and signature checks.
    pub async fn post_raw_messenger(
        &self,
        platform: Platform,
        body: Vec<u8>,
        signature: RawSignature,
    ) -> anyhow::Result<Posted> {
        let config = self.messenger_webhook_config(platform)?;
        let signature = match signature {
            RawSignature::Sign => Some(sign(&config.app_secret, &body)),
            RawSignature::Given(s) => Some(s),
            RawSignature::Unsigned => None,
        };
        Ok(deliver(self, &config, "raw", None, body, signature).await)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_ascii_is_escaped_with_lowercase_hex() {
        let v = json!({ "text": "äöå 😀" });
        let body = String::from_utf8(escaped_json(&v)).unwrap_or_default();
        assert_eq!(body, r#"{"text":"\u00e4\u00f6\u00e5 \ud83d\ude00"}"#);
        let back: Value = serde_json::from_str(&body).unwrap_or_default();
        assert_eq!(back, v);
    }
}
