//! The Cloud API HTTP client: template sends and the template list.
//!
//! The platform has no idempotency key, so what matters most here is telling "not sent"
//! from "maybe sent": a refused connection never reached the platform (retry later), while
//! a timeout or a connection lost after the request was written may have sent the message
//! ([`SendError::Ambiguous`], never re-sent). Error codes are read here and judged by
//! [`wm_core::whatsapp`].

use std::time::Duration;

use reqwest::{StatusCode, Url};
use serde::Deserialize;
use serde_json::Value;
use wm_core::platform::{PlatformTemplate, TemplateCatalog};
use wm_core::provider::{
    Accepted, MediaUpload, MessagingProvider, OutboundMessage, PlatformAccount, SendError,
};
use wm_core::whatsapp;

use super::no_nul;

/// How long to wait for the TCP (and TLS) connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a whole request may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);
/// A bound on template pages, in case the platform kept handing out cursors.
const MAX_PAGES: usize = 500;

/// The WhatsApp Business Cloud API as a [`MessagingProvider`], plus template listing.
#[derive(Debug, Clone)]
pub struct WhatsAppProvider {
    http: reqwest::Client,
    base: Url,
    version: String,
    connect_timeout: Duration,
}

fn build_http(connect: Duration, request: Duration) -> Result<reqwest::Client, String> {
    // reqwest is built without a bundled crypto backend; ring is the process default.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .connect_timeout(connect)
        .timeout(request)
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("wm/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| format!("the HTTP client could not be built: {e}"))
}

impl WhatsAppProvider {
    /// A client for `graph_url` (`https://graph.facebook.com`) and `api_version` (`v23.0`),
    /// with a 5 s connect and 15 s request timeout and no redirects.
    pub fn new(graph_url: &str, api_version: &str) -> Result<Self, String> {
        let base = Url::parse(graph_url.trim())
            .map_err(|e| format!("the Graph API URL {graph_url:?} is not a URL ({e})"))?;
        if !matches!(base.scheme(), "http" | "https") || base.cannot_be_a_base() {
            return Err(format!("the Graph API URL {graph_url:?} must be http(s)"));
        }
        let version = api_version.trim().trim_matches('/');
        if version.is_empty() || version.contains(['/', '?', '#']) {
            return Err(format!(
                "the Graph API version {api_version:?} is not like v23.0"
            ));
        }
        Ok(WhatsAppProvider {
            http: build_http(CONNECT_TIMEOUT, REQUEST_TIMEOUT)?,
            base,
            version: version.to_owned(),
            connect_timeout: CONNECT_TIMEOUT,
        })
    }

    /// The same client with another request timeout (tests use a short one).
    pub fn with_timeout(mut self, request: Duration) -> Result<Self, String> {
        self.http = build_http(self.connect_timeout.min(request), request)?;
        Ok(self)
    }

    /// `{graph}/{version}/{id}/{edge}`, the id percent-encoded as one path segment.
    fn url(&self, id: &str, edge: &str) -> Url {
        let mut url = self.base.clone();
        url.set_query(None);
        url.set_fragment(None);
        if let Ok(mut segments) = url.path_segments_mut() {
            segments
                .pop_if_empty()
                .push(&self.version)
                .push(id)
                .push(edge);
        }
        url
    }

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

/// The Graph error object: `{"error":{"message","type","code","error_subcode",
/// "error_data":{"details"},"fbtrace_id"}}`.
struct GraphError {
    code: i64,
    subcode: Option<i64>,
    message: String,
    details: Option<String>,
}

impl GraphError {
    fn parse(bytes: &[u8]) -> Option<GraphError> {
        let body: Value = serde_json::from_slice(bytes).ok()?;
        let error = body.get("error")?;
        let int = |v: Option<&Value>| {
            v.and_then(|v| {
                v.as_i64()
                    .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
            })
        };
        Some(GraphError {
            code: int(error.get("code"))?,
            subcode: int(error.get("error_subcode")),
            message: error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            details: error
                .pointer("/error_data/details")
                .and_then(Value::as_str)
                .map(str::to_owned),
        })
    }

    /// `(#131026) Message undeliverable: <details>`.
    fn text(&self) -> String {
        whatsapp::error_text(self.code, &self.message, self.details.as_deref())
    }
}

/// An error and its causes on one line, without the URL.
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

/// What a failed exchange means: a connection that never opened sent nothing; anything
/// later (a timeout, a connection lost while waiting) may have sent the message.
fn transport_error(e: reqwest::Error) -> SendError {
    let e = e.without_url();
    if e.is_connect() {
        SendError::RetryLater(format!(
            "the platform could not be reached: {}",
            describe(&e)
        ))
    } else if e.is_builder() {
        SendError::Paused {
            stop_reason: whatsapp::PLATFORM_NOT_CONFIGURED.to_owned(),
            reason: format!("the request could not be built: {}", describe(&e)),
        }
    } else if e.is_timeout() {
        SendError::Ambiguous(format!(
            "no answer from the platform in time: {}",
            describe(&e)
        ))
    } else {
        SendError::Ambiguous(format!(
            "the connection was lost after sending: {}",
            describe(&e)
        ))
    }
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

mod media;
mod outbound;
#[cfg(test)]
mod tests;
