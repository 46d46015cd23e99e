//! The Send API, the Attachment Upload API and the User Profile API of the Messenger
//! Platform, for a Page and for the Instagram account linked to it (both sent through the
//! Page, with the Page's token).
//!
//! As with WhatsApp, the platform has no idempotency key, so "not sent" is told from "maybe
//! sent": a refused connection never reached Meta (retry later), a timeout or a connection
//! lost after the request was written may have sent the message (never re-sent). Meta's
//! error codes are read as the Messenger Platform's error table says
//! (<https://developers.facebook.com/documentation/business-messaging/messenger-platform/error-codes>).

use std::time::Duration;

use reqwest::Url;
use reqwest::multipart::{Form, Part};
use serde_json::{Value, json};
use wm_core::platform::{FetchError, Fetched, Profile};
use wm_core::provider::{
    Accepted, MediaUpload, OutboundContent, OutboundMessage, PlatformAccount, SendError,
};
use wm_types::messages::MessageType;

/// The Graph API, as Messenger and Instagram messaging use it.
#[derive(Debug, Clone)]
pub struct MessengerClient {
    http: reqwest::Client,
    base: Url,
    version: String,
    /// Which of the two platforms this client speaks for (`instagram` sends with
    /// `"platform":"instagram"` on uploads and refuses quoted replies).
    instagram: bool,
}

impl MessengerClient {
    /// A client for `graph_url` and `api_version`, with a 5 s connect and 20 s request
    /// timeout (an upload of 25 MB included) and no redirects.
    pub fn new(graph_url: &str, api_version: &str, instagram: bool) -> Result<Self, String> {
        let base = Url::parse(graph_url.trim())
            .map_err(|e| format!("the Graph API URL {graph_url:?} is not a URL ({e})"))?;
        if !matches!(base.scheme(), "http" | "https") || base.cannot_be_a_base() {
            return Err(format!("the Graph API URL {graph_url:?} must be http(s)"));
        }
        let version = api_version.trim().trim_matches('/');
        if version.is_empty() || version.contains(['/', '?', '#']) {
            return Err(format!(
                "the Graph API version {api_version:?} is not like v24.0"
            ));
        }
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5))
            .timeout(Duration::from_secs(20))
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("wm/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| format!("the HTTP client could not be built: {e}"))?;
        Ok(MessengerClient {
            http,
            base,
            version: version.to_owned(),
            instagram,
        })
    }

    /// `{graph}/{version}/{id}[/{edge}]`.
    fn url(&self, id: &str, edge: Option<&str>) -> Url {
        let mut url = self.base.clone();
        url.set_query(None);
        url.set_fragment(None);
        if let Ok(mut segments) = url.path_segments_mut() {
            segments.pop_if_empty().push(&self.version).push(id);
            if let Some(edge) = edge {
                segments.push(edge);
            }
        }
        url
    }

    /// The Send API body of a message.
    pub fn send_body(&self, m: &OutboundMessage) -> Value {
        let recipient = match &m.to {
            wm_core::address::Address::UserId(id) => id.clone(),
            wm_core::address::Address::Phone(p) => p.digits().to_owned(),
        };
        let message = match &m.content {
            OutboundContent::Text | OutboundContent::Template { .. } => json!({ "text": m.body }),
            OutboundContent::Interactive { buttons } => json!({
                "text": m.body,
                "quick_replies": buttons.iter().map(|(id, title)| json!({
                    "content_type": "text",
                    "title": title,
                    "payload": id,
                })).collect::<Vec<_>>(),
            }),
            OutboundContent::Media { kind, media_id, .. } => json!({
                "attachment": {
                    "type": attachment_type(*kind),
                    "payload": { "attachment_id": media_id },
                }
            }),
        };
        let mut body = json!({
            "recipient": { "id": recipient },
            "message": message,
        });
        if m.human_agent {
            body["messaging_type"] = json!("MESSAGE_TAG");
            body["tag"] = json!("HUMAN_AGENT");
        } else {
            body["messaging_type"] = json!("RESPONSE");
        }
        // Quoting is documented for Messenger; Instagram's reply shape was not.
        if let (Some(mid), false) = (&m.reply_to, self.instagram) {
            body["reply_to"] = json!({ "mid": mid });
        }
        body
    }

    /// Sends one message through the account's Page.
    pub async fn send(&self, m: &OutboundMessage) -> Result<Accepted, SendError> {
        let account = configured(m.account.as_ref())?;
        let response = self
            .http
            .post(self.url(&account.id, Some("messages")))
            .bearer_auth(&account.access_token)
            .json(&self.send_body(m))
            .send()
            .await
            .map_err(transport_error)?;
        let status = response.status();
        let bytes = response.bytes().await.unwrap_or_default();
        if status.is_success() {
            let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            return match body.get("message_id").and_then(Value::as_str) {
                Some(id) => Ok(Accepted {
                    message_id: id.to_owned(),
                    recipient: None,
                    recipient_user_id: None,
                }),
                None => Err(SendError::Ambiguous(format!(
                    "the platform answered {status} without a message id"
                ))),
            };
        }
        Err(judge(status.as_u16(), &bytes))
    }

    /// Uploads a file for the Page (Instagram's with `"platform":"instagram"`): its
    /// attachment id, kept by Meta 90 days.
    pub async fn upload(
        &self,
        account: &PlatformAccount,
        file: &MediaUpload,
    ) -> Result<String, SendError> {
        let kind = wm_core::platform::descriptor::media_limit(
            wm_core::platform::descriptor::MESSENGER_MEDIA,
            &file.mime_type,
        )
        .map_or("file", |(k, _)| attachment_type(k));
        let mut message =
            json!({ "attachment": { "type": kind, "payload": { "is_reusable": true } } });
        if self.instagram {
            message["attachment"]["payload"]["is_reusable"] = json!("true");
        }
        let part = Part::bytes(file.bytes.clone())
            .file_name(file.filename.clone().unwrap_or_else(|| "file".into()))
            .mime_str(&file.mime_type)
            .map_err(|e| SendError::Rejected {
                reason: format!("the file's type {:?} cannot be sent: {e}", file.mime_type),
                opt_out: false,
            })?;
        let mut form = Form::new()
            .text("message", message.to_string())
            .part("filedata", part);
        if self.instagram {
            form = form.text("platform", "instagram");
        }
        let response = self
            .http
            .post(self.url(&account.id, Some("message_attachments")))
            .bearer_auth(&account.access_token)
            .multipart(form)
            .send()
            .await
            .map_err(|e| SendError::RetryLater(format!("the upload failed: {}", describe(&e))))?;
        let status = response.status();
        let bytes = response.bytes().await.unwrap_or_default();
        if status.is_success() {
            let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            return body
                .get("attachment_id")
                .and_then(|v| {
                    v.as_str()
                        .map(str::to_owned)
                        .or_else(|| v.as_u64().map(|n| n.to_string()))
                })
                .ok_or_else(|| {
                    SendError::RetryLater("the upload answered no attachment id".into())
                });
        }
        Err(judge(status.as_u16(), &bytes))
    }

    /// The person's profile: name (and username on Instagram), read with the Page token.
    pub async fn profile(
        &self,
        scoped_id: &str,
        account: &PlatformAccount,
    ) -> Result<Profile, FetchError> {
        let fields = if self.instagram {
            "name,username"
        } else {
            "first_name,last_name,name"
        };
        let mut url = self.url(scoped_id, None);
        url.query_pairs_mut().append_pair("fields", fields);
        let response = self
            .http
            .get(url)
            .bearer_auth(&account.access_token)
            .send()
            .await
            .map_err(|e| FetchError::RetryLater(describe(&e)))?;
        let status = response.status();
        let bytes = response.bytes().await.unwrap_or_default();
        if !status.is_success() {
            return Err(match judge(status.as_u16(), &bytes) {
                SendError::RetryLater(why) | SendError::Ambiguous(why) => {
                    FetchError::RetryLater(why)
                }
                SendError::Paused { reason, .. } => FetchError::RetryLater(reason),
                SendError::Rejected { reason, .. } => FetchError::Gone(reason),
            });
        }
        let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        let text = |k: &str| {
            body.get(k)
                .and_then(Value::as_str)
                .map(wm_core::platform::no_nul)
                .filter(|s| !s.trim().is_empty())
        };
        let name = text("name").or_else(|| {
            let full = [text("first_name"), text("last_name")]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(" ");
            Some(full).filter(|s| !s.is_empty())
        });
        Ok(Profile {
            name,
            username: text("username"),
        })
    }

    /// A file a person sent, from the link in their message (Meta's CDN; no token).
    pub async fn fetch(&self, link: &str, max_bytes: u64) -> Result<Fetched, FetchError> {
        let url = Url::parse(link).map_err(|_| FetchError::Gone("the link is not a URL".into()))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(FetchError::Gone("the link is not http(s)".into()));
        }
        let response = self
            .http
            .get(url)
            .send()
            .await
            .map_err(|e| FetchError::RetryLater(describe(&e)))?;
        let status = response.status();
        if status.is_client_error() {
            return Err(FetchError::Gone(format!("the platform answered {status}")));
        }
        if !status.is_success() {
            return Err(FetchError::RetryLater(format!(
                "the platform answered {status}"
            )));
        }
        if response.content_length().is_some_and(|n| n > max_bytes) {
            return Err(FetchError::Gone(format!(
                "the file is larger than {max_bytes} bytes"
            )));
        }
        let mime_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.split(';').next().unwrap_or(v).trim().to_owned());
        let bytes = response
            .bytes()
            .await
            .map_err(|e| FetchError::RetryLater(describe(&e)))?;
        if u64::try_from(bytes.len()).unwrap_or(u64::MAX) > max_bytes {
            return Err(FetchError::Gone(format!(
                "the file is larger than {max_bytes} bytes"
            )));
        }
        Ok(Fetched {
            bytes: bytes.to_vec(),
            mime_type,
        })
    }
}

/// The Send API's attachment type of a kind.
fn attachment_type(kind: MessageType) -> &'static str {
    match kind {
        MessageType::Image | MessageType::Sticker => "image",
        MessageType::Video => "video",
        MessageType::Audio => "audio",
        _ => "file",
    }
}

fn configured(account: Option<&PlatformAccount>) -> Result<&PlatformAccount, SendError> {
    account.ok_or_else(|| SendError::Paused {
        stop_reason: wm_core::whatsapp::PLATFORM_NOT_CONFIGURED.to_owned(),
        reason: "the channel has no Page token configured".into(),
    })
}

/// An error and its causes on one line (the URLs carry no token: it travels in a header).
fn describe(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// A failed exchange: a connection never opened sent nothing; anything later may have.
fn transport_error(e: reqwest::Error) -> SendError {
    let e = e.without_url();
    if e.is_connect() {
        SendError::RetryLater(format!("Meta could not be reached: {}", describe(&e)))
    } else if e.is_timeout() {
        SendError::Ambiguous(format!("no answer from Meta in time: {}", describe(&e)))
    } else {
        SendError::Ambiguous(format!(
            "the connection was lost after sending: {}",
            describe(&e)
        ))
    }
}

/// What a Graph error means for a message: `(#code) message` kept as the reason.
pub fn judge(http: u16, bytes: &[u8]) -> SendError {
    let body: Value = serde_json::from_slice(bytes).unwrap_or(Value::Null);
    let error = body.get("error");
    let int = |k: &str| {
        error.and_then(|e| e.get(k)).and_then(|v| {
            v.as_i64()
                .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
        })
    };
    let code = int("code");
    let subcode = int("error_subcode");
    let message = error
        .and_then(|e| e.get("message"))
        .and_then(Value::as_str)
        .unwrap_or("no error message");
    let reason = match code {
        Some(c) => format!("(#{c}) {message}"),
        None => format!("the platform answered HTTP {http}"),
    };
    match (code, subcode) {
        // The token: no message goes until a new one is saved.
        (Some(190 | 102 | 463 | 467), _) => SendError::Paused {
            stop_reason: wm_core::whatsapp::PLATFORM_TOKEN_EXPIRED.to_owned(),
            reason,
        },
        // Throttled, or a passing failure.
        (Some(4 | 17 | 32 | 613 | 80001 | 80002 | 1 | 2), _) => SendError::RetryLater(reason),
        (None, _) if http >= 500 => SendError::RetryLater(reason),
        // Everything else refuses this message for good (the window, a blocked person, a
        // bad parameter).
        _ => SendError::Rejected {
            reason,
            opt_out: false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn graph_errors_are_judged_by_code() {
        let body = |code: i64, sub: i64| {
            format!(
                r#"{{"error":{{"message":"m","type":"OAuthException","code":{code},"error_subcode":{sub},"fbtrace_id":"x"}}}}"#
            )
        };
        assert!(matches!(
            judge(400, body(190, 463).as_bytes()),
            SendError::Paused { .. }
        ));
        assert!(matches!(
            judge(400, body(613, 2534040).as_bytes()),
            SendError::RetryLater(_)
        ));
        match judge(400, body(10, 2534022).as_bytes()) {
            SendError::Rejected { reason, .. } => assert_eq!(reason, "(#10) m"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(judge(502, b"oops"), SendError::RetryLater(_)));
    }
}
