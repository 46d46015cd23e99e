//! The request/response core shared by every resource: URL and query building, the Bearer
//! header, JSON bodies, the retry loop and the mapping of answers to [`Error`].

use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderValue};
use reqwest::{Method, Url};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::{Client, Error};

/// One API call, described before it is sent so the retry loop can send it again.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    method: Method,
    path: String,
    query: Vec<(String, String)>,
    body: Option<Vec<u8>>,
    /// The body's type when it is not JSON.
    content_type: Option<String>,
    /// The `Idempotency-Key` every attempt of this request carries (a POST's own, drawn
    /// once): the server acts on it at most once, so a POST may be retried too.
    idempotency_key: Option<String>,
}

impl Request {
    /// A request for `path` (relative to the base URL, starting with `/`).
    pub(crate) fn new(method: Method, path: impl Into<String>) -> Request {
        let post = method == Method::POST;
        Request {
            method,
            path: path.into(),
            query: Vec::new(),
            body: None,
            content_type: None,
            idempotency_key: post.then(|| format!("wm-{:032x}", rand::random::<u128>())),
        }
    }

    /// `GET path`.
    pub(crate) fn get(path: impl Into<String>) -> Request {
        Request::new(Method::GET, path)
    }

    /// `POST path`.
    pub(crate) fn post(path: impl Into<String>) -> Request {
        Request::new(Method::POST, path)
    }

    /// `PATCH path`.
    pub(crate) fn patch(path: impl Into<String>) -> Request {
        Request::new(Method::PATCH, path)
    }

    /// `DELETE path`.
    pub(crate) fn delete(path: impl Into<String>) -> Request {
        Request::new(Method::DELETE, path)
    }

    /// Adds the fields of a query struct (see [`query_pairs`]).
    pub(crate) fn query<Q: Serialize + ?Sized>(mut self, query: &Q) -> Result<Request, Error> {
        self.query.extend(query_pairs(query)?);
        Ok(self)
    }

    /// Adds raw query pairs as given (they are still URL-encoded).
    pub(crate) fn pairs<'a>(mut self, pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        self.query
            .extend(pairs.into_iter().map(|(k, v)| (k.to_owned(), v.to_owned())));
        self
    }

    /// Sets a JSON body (serialised once, so retries resend the same bytes).
    pub(crate) fn json<B: Serialize + ?Sized>(mut self, body: &B) -> Result<Request, Error> {
        let bytes = serde_json::to_vec(body)
            .map_err(|e| Error::Config(format!("request body could not be serialised: {e}")))?;
        self.body = Some(bytes);
        Ok(self)
    }

    /// Sets a body of another type than JSON (kept whole, so retries resend the same bytes).
    pub(crate) fn raw(mut self, bytes: Vec<u8>, content_type: String) -> Request {
        self.body = Some(bytes);
        self.content_type = Some(content_type);
        self
    }
}

/// Turns a query struct into `(name, value)` pairs the way the server reads them: field
/// names as serde writes them (camelCase in wm-types), `None` fields left out, lists joined
/// with commas (`ids=a,b`; an empty list is left out), numbers and booleans in their JSON
/// spelling. Percent-encoding happens later, when the pairs are put on the URL.
pub(crate) fn query_pairs<Q: Serialize + ?Sized>(
    query: &Q,
) -> Result<Vec<(String, String)>, Error> {
    let bad = |what: &str| Error::Config(format!("query {what}"));
    let value = serde_json::to_value(query).map_err(|e| bad(&e.to_string()))?;
    let Value::Object(map) = value else {
        return Err(bad("must serialise to a map of fields"));
    };
    let mut pairs = Vec::with_capacity(map.len());
    for (name, value) in map {
        let text = match value {
            Value::Null => continue,
            Value::Array(items) if items.is_empty() => continue,
            Value::Array(items) => items
                .iter()
                .map(scalar)
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| bad(&format!("field {name} holds a nested value")))?
                .join(","),
            other => scalar(&other).ok_or_else(|| bad(&format!("field {name} is not a scalar")))?,
        };
        pairs.push((name, text));
    }
    Ok(pairs)
}

fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

impl Client {
    /// Sends `req` (with retries) and decodes the 2xx body as `T`.
    pub(crate) async fn send<T: DeserializeOwned>(&self, req: Request) -> Result<T, Error> {
        let bytes = self.send_with_retries(&req).await?;
        serde_json::from_slice(&bytes)
            .map_err(|e| Error::Decode(format!("{} {}: {e}", req.method, req.path)))
    }

    /// The retry loop: see [`crate::retry`] for what is retried and how long it waits.
    async fn send_with_retries(&self, req: &Request) -> Result<Vec<u8>, Error> {
        let url = self.url(req)?;
        let mut retries = 0;
        let keyed = req.idempotency_key.is_some();
        loop {
            let err = match self.attempt(req, &url).await {
                Ok(bytes) => return Ok(bytes),
                Err(err) => err,
            };
            match self
                .inner
                .retry
                .delay_keyed(&req.method, keyed, &err, retries)
            {
                Some(wait) => {
                    (self.inner.sleep)(wait).await;
                    retries += 1;
                }
                None => return Err(err),
            }
        }
    }

    /// One attempt: the 2xx body, or the error of the answer or of the transport.
    async fn attempt(&self, req: &Request, url: &Url) -> Result<Vec<u8>, Error> {
        let mut builder = self
            .inner
            .http
            .request(req.method.clone(), url.clone())
            .header(AUTHORIZATION, self.inner.auth.clone())
            .header(ACCEPT, HeaderValue::from_static("application/json"));
        if let Some(key) = &req.idempotency_key {
            builder = builder.header("idempotency-key", key.as_str());
        }
        if let Some(body) = &req.body {
            let content_type = match &req.content_type {
                Some(t) => HeaderValue::from_str(t)
                    .map_err(|e| Error::Config(format!("invalid content type {t}: {e}")))?,
                None => HeaderValue::from_static("application/json"),
            };
            builder = builder
                .header(CONTENT_TYPE, content_type)
                .body(body.clone());
        }
        let resp = builder.send().await.map_err(Error::Transport)?;
        let status = resp.status();
        let headers = resp.headers().clone();
        let bytes = resp.bytes().await.map_err(Error::Transport)?;
        if status.is_success() {
            Ok(bytes.to_vec())
        } else {
            Err(Error::from_response(status, &headers, &bytes))
        }
    }

    /// The base URL, the path and the percent-encoded query.
    fn url(&self, req: &Request) -> Result<Url, Error> {
        let mut url = Url::parse(&format!("{}{}", self.inner.base, req.path))
            .map_err(|e| Error::Config(format!("invalid URL for {}: {e}", req.path)))?;
        if !req.query.is_empty() {
            url.query_pairs_mut().extend_pairs(&req.query);
        }
        Ok(url)
    }
}

/// One part of a `multipart/form-data` body.
pub(crate) struct FormPart<'a> {
    /// The field name.
    pub name: &'a str,
    /// The file name, for a file part.
    pub filename: Option<&'a str>,
    /// The part's Content-Type.
    pub content_type: &'a str,
    /// Its bytes.
    pub bytes: &'a [u8],
}

/// A `multipart/form-data` body and its Content-Type. Built here, whole, so that a retried
/// request sends the same bytes (reqwest's streaming form cannot be sent twice).
pub(crate) fn form(parts: &[FormPart<'_>]) -> (Vec<u8>, String) {
    use rand::Rng;
    let boundary = format!("wm-{:032x}", rand::rng().random::<u128>());
    let safe = |s: &str| -> String {
        s.chars()
            .map(|c| if c == '"' || c.is_control() { '_' } else { c })
            .collect()
    };
    let mut body = Vec::with_capacity(parts.iter().map(|p| p.bytes.len() + 160).sum());
    for p in parts {
        let filename = p
            .filename
            .map(|f| format!("; filename=\"{}\"", safe(f)))
            .unwrap_or_default();
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"{}\"{filename}\r\n\
                 Content-Type: {}\r\n\r\n",
                safe(p.name),
                safe(p.content_type)
            )
            .as_bytes(),
        );
        body.extend_from_slice(p.bytes);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    (body, format!("multipart/form-data; boundary={boundary}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use uuid::Uuid;
    use wm_types::contacts::{
        ContactTab, ListContactsQuery, OwnerFilter, TimelineFilter, TimelineQuery,
    };

    #[test]
    fn query_structs_become_the_pairs_the_server_reads() {
        let a = Uuid::from_u128(1);
        let b = Uuid::from_u128(2);
        let q = ListContactsQuery {
            tab: Some(ContactTab::InProgress),
            owner_id: Some(OwnerFilter::Unowned),
            tag: Some("vip & co".into()),
            ids: Some(vec![a, b]),
            page_size: Some(100),
            ..Default::default()
        };
        let mut pairs = query_pairs(&q).expect("pairs");
        pairs.sort();
        assert_eq!(
            pairs,
            vec![
                ("ids".to_owned(), format!("{a},{b}")),
                ("ownerId".to_owned(), "none".to_owned()),
                ("pageSize".to_owned(), "100".to_owned()),
                ("tab".to_owned(), "in_progress".to_owned()),
                ("tag".to_owned(), "vip & co".to_owned()),
            ]
        );
        let t = TimelineQuery {
            entry_type: Some(TimelineFilter::Notes),
            ..Default::default()
        };
        assert_eq!(
            query_pairs(&t).expect("pairs"),
            vec![("type".to_owned(), "notes".to_owned())]
        );
        let empty = ListContactsQuery {
            ids: Some(vec![]),
            ..Default::default()
        };
        assert!(query_pairs(&empty).expect("pairs").is_empty());
        assert!(matches!(query_pairs(&[1, 2]), Err(Error::Config(_))));
    }
}
