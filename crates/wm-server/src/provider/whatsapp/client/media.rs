//! Inbound media from the Cloud API: `GET /{media-id}` for a short-lived URL, then that URL
//! with the same token (Meta's "Retrieve media URL" and "Download media"). The URL is
//! another host (Meta's lookaside CDN), so the token is only sent to an https URL or to the
//! configured Graph host itself (the fake in tests); redirects are never followed.

use std::time::Duration;

use reqwest::{StatusCode, Url};
use serde::Deserialize;
use wm_core::platform::{FetchError, Fetched, MediaSource};
use wm_core::provider::PlatformAccount;

use super::graph::{GraphError, WhatsAppProvider, describe};

/// A download may be a 100 MB document: longer than a send.
const DOWNLOAD_TIMEOUT: Duration = Duration::from_secs(120);

#[derive(Deserialize)]
struct MediaUrl {
    url: String,
    #[serde(default)]
    mime_type: Option<String>,
}

impl WhatsAppProvider {
    /// `{graph}/{version}/{id}`.
    fn node_url(&self, id: &str) -> Url {
        let mut url = self.base.clone();
        url.set_query(None);
        url.set_fragment(None);
        if let Ok(mut segments) = url.path_segments_mut() {
            segments.pop_if_empty().push(&self.version).push(id);
        }
        url
    }

    /// Whether the token may be sent to `url`.
    fn may_receive_token(&self, url: &Url) -> bool {
        url.scheme() == "https"
            || (url.scheme() == self.base.scheme()
                && url.host_str() == self.base.host_str()
                && url.port_or_known_default() == self.base.port_or_known_default())
    }
}

fn unreachable(e: reqwest::Error) -> FetchError {
    FetchError::RetryLater(format!(
        "the platform could not be reached: {}",
        describe(&e.without_url())
    ))
}

/// A refusal of the retrieval: an unknown or expired id (code 100) is gone for good; the
/// rest (an expired token the operator may renew, a rate limit, an outage) is retried.
fn refused(status: StatusCode, bytes: &[u8]) -> FetchError {
    match GraphError::parse(bytes) {
        Some(g) if g.code == 100 => FetchError::Gone(g.text()),
        Some(g) => FetchError::RetryLater(g.text()),
        None if status.is_client_error() && status != StatusCode::TOO_MANY_REQUESTS => {
            FetchError::Gone(format!("the platform answered HTTP {status}"))
        }
        None => FetchError::RetryLater(format!("the platform answered HTTP {status}")),
    }
}

#[async_trait::async_trait]
impl MediaSource for WhatsAppProvider {
    fn name(&self) -> &'static str {
        "whatsapp"
    }

    async fn fetch(
        &self,
        media_id: &str,
        account: &PlatformAccount,
        max_bytes: u64,
    ) -> Result<Fetched, FetchError> {
        let mut url = self.node_url(media_id);
        url.query_pairs_mut()
            .append_pair("phone_number_id", &account.id);
        let response = self
            .http
            .get(url)
            .bearer_auth(&account.access_token)
            .send()
            .await
            .map_err(unreachable)?;
        let status = response.status();
        let bytes = response.bytes().await.map_err(unreachable)?;
        if !status.is_success() {
            return Err(refused(status, &bytes));
        }
        let found: MediaUrl = serde_json::from_slice(&bytes)
            .map_err(|e| FetchError::RetryLater(format!("the media URL could not be read: {e}")))?;
        let download = Url::parse(&found.url)
            .map_err(|e| FetchError::RetryLater(format!("the media URL is not a URL: {e}")))?;
        if !self.may_receive_token(&download) {
            return Err(FetchError::Gone(format!(
                "the media URL's host {:?} is neither https nor the Graph host",
                download.host_str()
            )));
        }
        let mut response = self
            .http
            .get(download)
            .bearer_auth(&account.access_token)
            .timeout(DOWNLOAD_TIMEOUT)
            .send()
            .await
            .map_err(unreachable)?;
        let status = response.status();
        if !status.is_success() {
            // An expired URL (404) is retried: the next attempt asks for a new one.
            return Err(FetchError::RetryLater(format!(
                "the media download answered HTTP {status}"
            )));
        }
        let too_large = || FetchError::Gone(format!("the media file is over {max_bytes} bytes"));
        if response.content_length().is_some_and(|n| n > max_bytes) {
            return Err(too_large());
        }
        let mime_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
            .or(found.mime_type);
        let mut out = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(unreachable)? {
            if (out.len() + chunk.len()) as u64 > max_bytes {
                return Err(too_large());
            }
            out.extend_from_slice(&chunk);
        }
        Ok(Fetched {
            bytes: out,
            mime_type,
        })
    }
}
