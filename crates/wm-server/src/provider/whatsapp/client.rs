//! The Cloud API HTTP client: template sends and the template list.
//!
//! The platform has no idempotency key, so what matters most here is telling "not sent"
//! from "maybe sent": a refused connection never reached the platform (retry later), while
//! a timeout or a connection lost after the request was written may have sent the message
//! ([`SendError::Ambiguous`], never re-sent). Error codes are read here and judged by
//! [`wm_core::whatsapp`].

use reqwest::StatusCode;
use serde::Deserialize;
use serde_json::Value;
use wm_core::platform::{PlatformTemplate, TemplateCatalog};
use wm_core::provider::{
    Accepted, MediaUpload, MessagingProvider, OutboundMessage, PlatformAccount, SendError,
};
use wm_core::whatsapp;

use wm_core::platform::no_nul;

/// A bound on template pages, in case the platform kept handing out cursors.
const MAX_PAGES: usize = 500;

impl WhatsAppProvider {
    /// Every template of a WhatsApp Business Account, following the cursor pages on the
    /// configured Graph URL (a `paging.next` link is only read as "there is more": it is
    /// never fetched, so a page cannot send the token to another host).
    pub async fn list_templates(
        &self,
        waba_id: &str,
        access_token: &str,
    ) -> Result<Vec<PlatformTemplate>, String> {
        let mut templates = Vec::new();
        let mut after: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let mut url = self.url(waba_id, "message_templates");
            {
                let mut query = url.query_pairs_mut();
                query.append_pair("fields", "name,language,status,category,components");
                query.append_pair("limit", "100");
                if let Some(cursor) = &after {
                    query.append_pair("after", cursor);
                }
            }
            let response = self.http.get(url).bearer_auth(access_token).send().await;
            let response = response.map_err(|e| {
                format!(
                    "the platform could not be reached: {}",
                    describe(&e.without_url())
                )
            })?;
            let status = response.status();
            let bytes = response.bytes().await.map_err(|e| {
                format!(
                    "the platform's answer was cut: {}",
                    describe(&e.without_url())
                )
            })?;
            if !status.is_success() {
                return Err(match GraphError::parse(&bytes) {
                    Some(g) => g.text(),
                    None => format!("the platform answered HTTP {status}"),
                });
            }
            let page: Page = serde_json::from_slice(&bytes)
                .map_err(|e| format!("the platform's template list could not be read: {e}"))?;
            templates.extend(page.data.iter().filter_map(template_from_node));
            let next = page
                .paging
                .filter(|p| p.next.is_some())
                .and_then(|p| p.cursors)
                .and_then(|c| c.after)
                .filter(|c| !c.is_empty());
            match next {
                Some(cursor) if after.as_ref() != Some(&cursor) => after = Some(cursor),
                _ => return Ok(templates),
            }
        }
        Err(format!("the template list has more than {MAX_PAGES} pages"))
    }
}

/// One page of an edge.
#[derive(Deserialize)]
struct Page {
    #[serde(default)]
    data: Vec<Value>,
    #[serde(default)]
    paging: Option<Paging>,
}

#[derive(Deserialize)]
struct Paging {
    #[serde(default)]
    cursors: Option<Cursors>,
    #[serde(default)]
    next: Option<String>,
}

#[derive(Deserialize)]
struct Cursors {
    #[serde(default)]
    after: Option<String>,
}

fn template_from_node(node: &Value) -> Option<PlatformTemplate> {
    let field = |key: &str| node.get(key).and_then(Value::as_str).map(no_nul);
    let body_text = node
        .get("components")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|c| {
            c.get("type")
                .and_then(Value::as_str)
                .is_some_and(|t| t.eq_ignore_ascii_case("body"))
        })
        .and_then(|c| c.get("text"))
        .and_then(Value::as_str)
        .map(no_nul);
    Some(PlatformTemplate {
        name: field("name").filter(|n| !n.is_empty())?,
        language: field("language").unwrap_or_default(),
        status: field("status").unwrap_or_default(),
        category: field("category").unwrap_or_default(),
        body_text,
    })
}

/// What an answer means: a message id (with the person's `wa_id`), or the platform's error
/// judged by the code table.
fn interpret(status: StatusCode, bytes: &[u8]) -> Result<Accepted, SendError> {
    if status.is_success() {
        let body: Value = serde_json::from_slice(bytes).unwrap_or(Value::Null);
        let message_id = body
            .pointer("/messages/0/id")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty())
            .map(no_nul)
            .ok_or_else(|| {
                SendError::Ambiguous(format!(
                    "the platform answered {status} without a message id"
                ))
            })?;
        let contact = |field: &str| {
            body.pointer(&format!("/contacts/0/{field}"))
                .and_then(Value::as_str)
                .filter(|w| !w.is_empty())
                .map(no_nul)
        };
        return Ok(Accepted {
            message_id,
            recipient: contact("wa_id"),
            recipient_user_id: contact("user_id"),
        });
    }
    if let Some(error) = GraphError::parse(bytes) {
        let text = error.text();
        if status.is_server_error() && whatsapp::classify(error.code).is_none() {
            return Err(SendError::RetryLater(text));
        }
        return Err(whatsapp::send_error_with_subcode(
            error.code,
            error.subcode,
            &text,
        ));
    }
    let text = format!("the platform answered HTTP {status} without a Graph error");
    if status.is_server_error()
        || status == StatusCode::TOO_MANY_REQUESTS
        || status == StatusCode::REQUEST_TIMEOUT
    {
        Err(SendError::RetryLater(text))
    } else {
        Err(SendError::Paused {
            stop_reason: whatsapp::PLATFORM_BAD_RESPONSE.to_owned(),
            reason: text,
        })
    }
}

#[async_trait::async_trait]
impl MessagingProvider for WhatsAppProvider {
    fn name(&self) -> &'static str {
        "whatsapp"
    }

    async fn send(&self, message: &OutboundMessage) -> Result<Accepted, SendError> {
        let Some(account) = message
            .account
            .as_ref()
            .filter(|a| !a.id.trim().is_empty() && !a.access_token.is_empty())
        else {
            return Err(SendError::Paused {
                stop_reason: whatsapp::PLATFORM_NOT_CONFIGURED.to_owned(),
                reason: format!(
                    "the sender {} has no WhatsApp account configured",
                    message.from
                ),
            });
        };
        let url = self.url(account.id.trim(), "messages");
        let response = self
            .http
            .post(url)
            .bearer_auth(&account.access_token)
            .json(&outbound::send_body(message))
            .send()
            .await
            .map_err(transport_error)?;
        let status = response.status();
        match response.bytes().await {
            Ok(bytes) => interpret(status, &bytes),
            // The head arrived but the body did not: a success may hide in it.
            Err(e) if status.is_success() => Err(transport_error(e)),
            Err(_) => interpret(status, b""),
        }
    }

    async fn upload_media(
        &self,
        account: Option<&PlatformAccount>,
        file: &MediaUpload,
    ) -> Result<String, SendError> {
        self.upload(configured(account)?, file).await
    }

    async fn mark_read(
        &self,
        account: Option<&PlatformAccount>,
        message_id: &str,
    ) -> Result<(), SendError> {
        self.read(configured(account)?, message_id).await
    }
}

/// The account of a call that needs one.
fn configured(account: Option<&PlatformAccount>) -> Result<&PlatformAccount, SendError> {
    account
        .filter(|a| !a.id.trim().is_empty() && !a.access_token.is_empty())
        .ok_or_else(|| SendError::Paused {
            stop_reason: whatsapp::PLATFORM_NOT_CONFIGURED.to_owned(),
            reason: "the sender has no WhatsApp account configured".into(),
        })
}

#[async_trait::async_trait]
impl TemplateCatalog for WhatsAppProvider {
    async fn list_templates(
        &self,
        account_id: &str,
        access_token: &str,
    ) -> Result<Vec<PlatformTemplate>, String> {
        WhatsAppProvider::list_templates(self, account_id, access_token).await
    }
}

mod graph;
mod media;
mod outbound;

pub use graph::WhatsAppProvider;
use graph::{GraphError, describe, transport_error};
#[cfg(test)]
mod tests;
