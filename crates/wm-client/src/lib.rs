//! Typed async client for the wm API v1 (rustls only).
//!
//! This first version covers contacts, lookups and typed errors; the other resources,
//! retries and pagination streams come with the client issue.
//!
//! ```no_run
//! # async fn run() -> Result<(), wm_client::Error> {
//! let client = wm_client::Client::new("http://127.0.0.1:8080/api/v1", "wm_live_...")?;
//! let contact = client
//!     .create_contact(&wm_types::contacts::CreateContact {
//!         full_name: Some("Ana".into()),
//!         ..Default::default()
//!     })
//!     .await?;
//! println!("{}", contact.id);
//! # Ok(()) }
//! ```

mod error;

pub use error::{Error, ErrorCode};

use reqwest::{Method, StatusCode};
use serde::Serialize;
use serde::de::DeserializeOwned;
use uuid::Uuid;
use wm_types::common::Deleted;
use wm_types::contacts::{Contact, ContactList, CreateContact, UpdateContact};

/// A client bound to one base URL (ending in `/api/v1`) and one API key.
#[derive(Debug, Clone)]
pub struct Client {
    http: reqwest::Client,
    base: String,
    key: String,
}

impl Client {
    /// A client with a 30 s timeout.
    pub fn new(base: impl Into<String>, key: impl Into<String>) -> Result<Client, Error> {
        // reqwest is built without a bundled crypto backend; use ring (already in the tree
        // through sqlx) as the process default. An error only means one is installed.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .timeout(std::time::Duration::from_secs(30))
            .user_agent(concat!("wm-client/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| Error::Config(e.to_string()))?;
        Ok(Client {
            http,
            base: base.into().trim_end_matches('/').to_owned(),
            key: key.into(),
        })
    }

    async fn send<B: Serialize, T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<&B>,
    ) -> Result<T, Error> {
        let mut req = self
            .http
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(&self.key);
        if let Some(b) = body {
            req = req.json(b);
        }
        let resp = req.send().await.map_err(Error::Transport)?;
        let status = resp.status();
        let bytes = resp.bytes().await.map_err(Error::Transport)?;
        if status.is_success() {
            serde_json::from_slice(&bytes).map_err(|e| Error::Decode(e.to_string()))
        } else {
            Err(Error::from_body(status.as_u16(), &bytes))
        }
    }

    /// `POST /contacts`.
    pub async fn create_contact(&self, body: &CreateContact) -> Result<Contact, Error> {
        self.send(Method::POST, "/contacts", Some(body)).await
    }

    /// `GET /contacts/{id}`.
    pub async fn get_contact(&self, id: Uuid) -> Result<Contact, Error> {
        self.send::<(), _>(Method::GET, &format!("/contacts/{id}"), None)
            .await
    }

    /// `PATCH /contacts/{id}`.
    pub async fn update_contact(&self, id: Uuid, body: &UpdateContact) -> Result<Contact, Error> {
        self.send(Method::PATCH, &format!("/contacts/{id}"), Some(body))
            .await
    }

    /// `DELETE /contacts/{id}`.
    pub async fn delete_contact(&self, id: Uuid) -> Result<Deleted, Error> {
        self.send::<(), _>(Method::DELETE, &format!("/contacts/{id}"), None)
            .await
    }

    /// `GET /contacts` with raw query pairs.
    pub async fn list_contacts(&self, query: &[(&str, &str)]) -> Result<ContactList, Error> {
        let qs: String = query
            .iter()
            .map(|(k, v)| format!("{}={}", urlencode(k), urlencode(v)))
            .collect::<Vec<_>>()
            .join("&");
        let path = if qs.is_empty() {
            "/contacts".to_owned()
        } else {
            format!("/contacts?{qs}")
        };
        self.send::<(), _>(Method::GET, &path, None).await
    }
}

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Whether a status is worth retrying (429, 5xx).
pub fn is_retryable(status: StatusCode) -> bool {
    status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error()
}
