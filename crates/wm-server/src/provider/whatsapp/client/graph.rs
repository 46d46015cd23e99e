//! The Graph API connection (its base URL, version and timeouts) and how its failures read:
//! the Graph error object, a transport error's causes, and what a failed exchange means for
//! a message (not sent, or maybe sent).

use std::time::Duration;

use reqwest::Url;
use serde_json::Value;
use wm_core::provider::SendError;
use wm_core::whatsapp;

/// How long to wait for the TCP (and TLS) connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a whole request may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);
/// The WhatsApp Business Cloud API as a [`MessagingProvider`](wm_core::provider::MessagingProvider), plus template listing.
#[derive(Debug, Clone)]
pub struct WhatsAppProvider {
    pub(super) http: reqwest::Client,
    pub(super) base: Url,
    pub(super) version: String,
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
    pub(super) fn url(&self, id: &str, edge: &str) -> Url {
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
}

/// The Graph error object: `{"error":{"message","type","code","error_subcode",
/// "error_data":{"details"},"fbtrace_id"}}`.
pub(super) struct GraphError {
    pub(super) code: i64,
    pub(super) subcode: Option<i64>,
    pub(super) message: String,
    pub(super) details: Option<String>,
}

impl GraphError {
    pub(super) fn parse(bytes: &[u8]) -> Option<GraphError> {
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
    pub(super) fn text(&self) -> String {
        whatsapp::error_text(self.code, &self.message, self.details.as_deref())
    }
}

/// An error and its causes on one line, without the URL.
pub(super) fn describe(e: &reqwest::Error) -> String {
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
pub(super) fn transport_error(e: reqwest::Error) -> SendError {
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
