//! The console's way to the data: the API itself, called in-process. Each page asks the
//! same routes an integrator would, as the signed-in key (by its hash, see
//! [`crate::auth::KeyByHash`]), so the console can do nothing the API cannot and a missing
//! scope is refused by the same check.

use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::{Method, Request, StatusCode, header};
use http_body_util::BodyExt;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tower::ServiceExt;

use crate::auth::KeyByHash;

/// Largest API answer the console reads (a page of 100 contacts is far below).
const MAX_ANSWER: usize = 16 * 1024 * 1024;

/// The API as one signed-in key sees it.
#[derive(Clone)]
pub struct Api {
    router: Router,
    key_hash: String,
}

/// An API answer other than 2xx, in the words the API gave.
#[derive(Debug, Clone)]
pub struct Failure {
    /// The API's status.
    pub status: StatusCode,
    /// Its error code (`API_KEY_SCOPE_MISSING`, ...), when it gave one.
    pub code: Option<String>,
    /// Its message; validation messages joined.
    pub message: String,
}

impl Failure {
    fn from_answer(status: StatusCode, body: &[u8]) -> Failure {
        let value: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
        let message = match &value["message"] {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Array(items) => items
                .iter()
                .filter_map(|m| m.as_str())
                .collect::<Vec<_>>()
                .join("; "),
            _ => status
                .canonical_reason()
                .unwrap_or("The request failed")
                .to_owned(),
        };
        Failure {
            status,
            code: value["code"].as_str().map(str::to_owned),
            message,
        }
    }

    fn internal(what: impl std::fmt::Display) -> Failure {
        Failure {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            code: None,
            message: format!("The console could not read the API's answer: {what}"),
        }
    }
}

impl Api {
    /// The API router (relative to `/api/v1`) as the key with this hash.
    pub fn new(router: Router, key_hash: String) -> Api {
        Api { router, key_hash }
    }

    /// `GET path` (with its query), decoded.
    pub async fn get<T: DeserializeOwned>(&self, path: impl AsRef<str>) -> Result<T, Failure> {
        let bytes = self
            .call(Method::GET, path.as_ref(), None, Body::empty(), None)
            .await?;
        decode(&bytes)
    }

    /// A JSON request; `idempotency` is the form's own key, so a form sent twice (a double
    /// click, a reload after a timeout) does its work once.
    pub async fn send<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: &impl Serialize,
        idempotency: Option<&str>,
    ) -> Result<T, Failure> {
        let json = serde_json::to_vec(body).map_err(Failure::internal)?;
        let bytes = self
            .call(
                method,
                path,
                Some("application/json"),
                Body::from(json),
                idempotency,
            )
            .await?;
        decode(&bytes)
    }

    /// Any request, answered as bytes (media, multipart uploads).
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        content_type: Option<&str>,
        body: Body,
        idempotency: Option<&str>,
    ) -> Result<Bytes, Failure> {
        self.call_with_type(method, path, content_type, body, idempotency)
            .await
            .map(|(_, _, bytes)| bytes)
    }

    /// [`Api::call`], also giving the answer's status and content type (2xx only).
    pub async fn call_with_type(
        &self,
        method: Method,
        path: &str,
        content_type: Option<&str>,
        body: Body,
        idempotency: Option<&str>,
    ) -> Result<(StatusCode, Option<String>, Bytes), Failure> {
        let mut req = Request::builder().method(method).uri(path);
        if let Some(ct) = content_type {
            req = req.header(header::CONTENT_TYPE, ct);
        }
        if let Some(key) = idempotency {
            req = req.header("idempotency-key", format!("console-{key}"));
        }
        let mut req = req.body(body).map_err(Failure::internal)?;
        req.extensions_mut()
            .insert(KeyByHash(self.key_hash.clone()));
        let answer = match self.router.clone().oneshot(req).await {
            Ok(answer) => answer,
            Err(never) => match never {},
        };
        let status = answer.status();
        let kind = answer
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let bytes = http_body_util::Limited::new(answer.into_body(), MAX_ANSWER)
            .collect()
            .await
            .map_err(Failure::internal)?
            .to_bytes();
        if status.is_success() {
            Ok((status, kind, bytes))
        } else {
            Err(Failure::from_answer(status, &bytes))
        }
    }
}

/// An API answer's JSON, decoded.
pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, Failure> {
    serde_json::from_slice(bytes).map_err(Failure::internal)
}

/// A path with its query, the values percent-encoded.
pub fn with_query(path: &str, pairs: &[(&str, &str)]) -> String {
    let mut query = form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs.iter().filter(|(_, v)| !v.is_empty()) {
        query.append_pair(k, v);
    }
    let query = query.finish();
    if query.is_empty() {
        path.to_owned()
    } else {
        format!("{path}?{query}")
    }
}
