//! [`Client`] and its [`ClientBuilder`].

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use reqwest::Url;
use reqwest::header::HeaderValue;
use serde::de::DeserializeOwned;

use crate::Error;
use crate::http::Request;
use crate::retry::{RetryPolicy, Sleeper, tokio_sleeper};

/// A client bound to one base URL (ending in `/api/v1`) and one API key.
///
/// Cheap to clone (the connection pool and settings are shared), `Send + Sync`. Resources
/// are reached through accessors: [`Client::contacts`], [`Client::campaigns`],
/// [`Client::webhooks`], [`Client::lookups`], [`Client::conversations`],
/// [`Client::automations`], [`Client::reports`].
#[derive(Clone)]
pub struct Client {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) http: reqwest::Client,
    /// Base URL without a trailing `/`.
    pub(crate) base: String,
    /// `Bearer <key>`, marked sensitive.
    pub(crate) auth: HeaderValue,
    pub(crate) retry: RetryPolicy,
    pub(crate) sleep: Sleeper,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("base_url", &self.inner.base)
            .field("api_key", &"<redacted>")
            .field("retry", &self.inner.retry)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// A client with the default settings (30 s timeout, 3 retries); see
    /// [`Client::builder`] for the others.
    pub fn new(base_url: impl Into<String>, api_key: impl Into<String>) -> Result<Client, Error> {
        Client::builder()
            .base_url(base_url)
            .api_key(api_key)
            .build()
    }

    /// A builder for a client with non-default settings.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    /// The base URL, without a trailing `/`.
    pub fn base_url(&self) -> &str {
        &self.inner.base
    }

    /// The retry policy in force.
    pub fn retry_policy(&self) -> &RetryPolicy {
        &self.inner.retry
    }

    /// `GET {base}{path}` with raw query pairs, decoded as `T` — with the same auth, retries
    /// and error mapping as the typed calls. For endpoints or fields this client has no
    /// typed call for (yet); `path` starts with `/`.
    pub async fn get<T: DeserializeOwned>(
        &self,
        path: &str,
        query: &[(&str, &str)],
    ) -> Result<T, Error> {
        self.send(Request::get(path).pairs(query.iter().copied()))
            .await
    }
}

/// Settings of a [`Client`]. `base_url` and `api_key` are required.
///
/// ```
/// use std::time::Duration;
/// let client = wm_client::Client::builder()
///     .base_url("https://wm.example.com/api/v1")
///     .api_key("wm_live_...")
///     .timeout(Duration::from_secs(10))
///     .max_retries(5)
///     .backoff_base(Duration::from_millis(100))
///     .backoff_cap(Duration::from_secs(2))
///     .user_agent("my-app/1.0")
///     .build()?;
/// # Ok::<(), wm_client::Error>(())
/// ```
#[derive(Clone)]
#[must_use]
pub struct ClientBuilder {
    base_url: Option<String>,
    api_key: Option<String>,
    timeout: Duration,
    retry: RetryPolicy,
    user_agent: String,
    sleep: Option<Sleeper>,
}

impl Default for ClientBuilder {
    fn default() -> Self {
        ClientBuilder {
            base_url: None,
            api_key: None,
            timeout: Duration::from_secs(30),
            retry: RetryPolicy::default(),
            user_agent: concat!("wm-client/", env!("CARGO_PKG_VERSION")).to_owned(),
            sleep: None,
        }
    }
}

impl fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("timeout", &self.timeout)
            .field("retry", &self.retry)
            .field("user_agent", &self.user_agent)
            .finish_non_exhaustive()
    }
}

impl ClientBuilder {
    /// The API's base URL, including `/api/v1` (a trailing `/` is ignored).
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    /// The API key (`wm_live_…`), sent as `Authorization: Bearer <key>`.
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// Timeout of each attempt, from sending the request to reading the whole answer
    /// (default 30 s). A timed-out GET is retried; a timed-out write is not.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Retries after the first attempt (default 3; 0 disables retries).
    pub fn max_retries(mut self, n: u32) -> Self {
        self.retry.max_retries = n;
        self
    }

    /// Backoff ceiling of the first retry, doubling with each retry (default 200 ms).
    pub fn backoff_base(mut self, base: Duration) -> Self {
        self.retry.backoff_base = base;
        self
    }

    /// Largest backoff ceiling (default 5 s).
    pub fn backoff_cap(mut self, cap: Duration) -> Self {
        self.retry.backoff_cap = cap;
        self
    }

    /// Longest `Retry-After` the client waits for before retrying (default 60 s); a longer
    /// one returns the error at once.
    pub fn max_retry_after(mut self, max: Duration) -> Self {
        self.retry.max_retry_after = max;
        self
    }

    /// The whole retry policy at once.
    pub fn retry_policy(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// The `User-Agent` header (default `wm-client/<version>`).
    pub fn user_agent(mut self, ua: impl Into<String>) -> Self {
        self.user_agent = ua.into();
        self
    }

    /// Replaces the wait between retries (default `tokio::time::sleep`). Tests use it to
    /// record the waits instead of sleeping; a runtime other than tokio can plug its own
    /// timer in.
    pub fn sleep_with<F, Fut>(mut self, sleep: F) -> Self
    where
        F: Fn(Duration) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.sleep = Some(Arc::new(move |d| Box::pin(sleep(d))));
        self
    }

    /// Builds the client; [`Error::Config`] when the base URL or the key is missing or
    /// malformed.
    pub fn build(self) -> Result<Client, Error> {
        let base = self
            .base_url
            .ok_or_else(|| Error::Config("base_url is required".into()))?;
        let base = base.trim_end_matches('/').to_owned();
        let parsed =
            Url::parse(&base).map_err(|e| Error::Config(format!("base_url {base:?}: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https")
            || parsed.query().is_some()
            || parsed.fragment().is_some()
        {
            return Err(Error::Config(format!(
                "base_url {base:?} must be an http(s) URL without query or fragment"
            )));
        }
        let key = self
            .api_key
            .filter(|k| !k.trim().is_empty())
            .ok_or_else(|| Error::Config("api_key is required".into()))?;
        let mut auth = HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| {
            Error::Config("api_key holds characters not allowed in a header".into())
        })?;
        auth.set_sensitive(true);

        // reqwest is built without a bundled crypto backend; use ring (already in the tree
        // through sqlx) as the process default. An error only means one is installed.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .timeout(self.timeout)
            .user_agent(self.user_agent)
            .build()
            .map_err(|e| Error::Config(e.to_string()))?;
        Ok(Client {
            inner: Arc::new(Inner {
                http,
                base,
                auth,
                retry: self.retry,
                sleep: self.sleep.unwrap_or_else(tokio_sleeper),
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_checks_url_and_key_and_redacts_the_key() {
        assert!(matches!(
            Client::builder().api_key("k").build(),
            Err(Error::Config(_))
        ));
        assert!(matches!(
            Client::new("not a url", "k"),
            Err(Error::Config(_))
        ));
        assert!(matches!(
            Client::new("ftp://x/api/v1", "k"),
            Err(Error::Config(_))
        ));
        assert!(matches!(
            Client::new("http://x/api/v1", " "),
            Err(Error::Config(_))
        ));
        assert!(matches!(
            Client::new("http://x/api/v1", "a\nb"),
            Err(Error::Config(_))
        ));
        let c = Client::new("http://x/api/v1/", "wm_live_secret").expect("client");
        assert_eq!(c.base_url(), "http://x/api/v1");
        assert!(!format!("{c:?}").contains("secret"));
        let b = Client::builder().api_key("wm_live_secret");
        assert!(!format!("{b:?}").contains("secret"));
    }
}
