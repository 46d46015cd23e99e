//! A request's fingerprint, taken as its body streams to the handler (an import may be
//! hundreds of megabytes: it is never held in memory for this). The method, the path with
//! its query and the body's bytes are hashed, except a multipart body's boundary: a client
//! that retries builds its form again with a new random boundary, and that is the same
//! request.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::http::header;
use axum::http::request::Parts;
use futures::{Stream, StreamExt};
use sha2::{Digest, Sha256};

/// The running hash of one request.
pub struct Fingerprint {
    hash: Sha256,
    /// The multipart boundary, left out of the hash.
    boundary: Option<Vec<u8>>,
    /// Bytes held back because a boundary may begin in them.
    held: Vec<u8>,
    /// Whether the body was read to its end.
    complete: bool,
}

impl Fingerprint {
    /// The fingerprint of a request with these parts, its body still to come.
    pub fn new(parts: &Parts) -> Self {
        let mut hash = Sha256::new();
        hash.update(parts.method.as_str());
        hash.update(b" ");
        hash.update(parts.uri.path());
        if let Some(q) = parts.uri.query() {
            hash.update(b"?");
            hash.update(q);
        }
        hash.update(b"\n");
        let boundary = parts
            .headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|ct| multer::parse_boundary(ct).ok())
            .map(|b| format!("--{b}").into_bytes());
        Fingerprint {
            hash,
            boundary,
            held: Vec::new(),
            complete: false,
        }
    }

    fn update(&mut self, chunk: &[u8]) {
        let Some(boundary) = &self.boundary else {
            self.hash.update(chunk);
            return;
        };
        self.held.extend_from_slice(chunk);
        let mut start = 0;
        let mut i = 0;
        while i + boundary.len() <= self.held.len() {
            if self.held[i..].starts_with(boundary) {
                self.hash.update(&self.held[start..i]);
                i += boundary.len();
                start = i;
            } else {
                i += 1;
            }
        }
        // Keep what could be the start of a boundary split across chunks.
        let keep_from = self
            .held
            .len()
            .saturating_sub(boundary.len() - 1)
            .max(start);
        self.hash.update(&self.held[start..keep_from]);
        self.held.drain(..keep_from);
    }

    fn finish_body(&mut self) {
        let held = std::mem::take(&mut self.held);
        self.hash.update(&held);
        self.complete = true;
    }

    /// The hex digest, if the whole body was read (a handler that refused the request
    /// before reading all of it leaves none).
    pub fn digest(&self) -> Option<String> {
        self.complete
            .then(|| hex::encode(self.hash.clone().finalize()))
    }
}

/// `body`, hashed into `print` as it is read.
pub fn hashed(body: Body, print: Arc<Mutex<Fingerprint>>) -> Body {
    Body::from_stream(Hashing {
        inner: body.into_data_stream(),
        print,
    })
}

/// Reads `body` to its end into `print` (a request whose answer is already known).
pub async fn drain(body: Body, print: &mut Fingerprint, limit: usize) -> Result<(), ()> {
    let mut stream = body.into_data_stream();
    let mut read = 0usize;
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|_| ())?;
        read += chunk.len();
        if read > limit {
            return Err(());
        }
        print.update(&chunk);
    }
    print.finish_body();
    Ok(())
}

struct Hashing {
    inner: axum::body::BodyDataStream,
    print: Arc<Mutex<Fingerprint>>,
}

impl Stream for Hashing {
    type Item = Result<Bytes, axum::Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let polled = Pin::new(&mut self.inner).poll_next(cx);
        if let Poll::Ready(item) = &polled {
            let mut print = self
                .print
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            match item {
                Some(Ok(chunk)) => print.update(chunk),
                None => print.finish_body(),
                Some(Err(_)) => {}
            }
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::Request;

    fn print(content_type: &str, chunks: &[&[u8]]) -> String {
        let (parts, ()) = Request::post("/api/v1/contacts/imports")
            .header("content-type", content_type)
            .body(())
            .unwrap_or_else(|e| panic!("{e}"))
            .into_parts();
        let mut p = Fingerprint::new(&parts);
        for c in chunks {
            p.update(c);
        }
        p.finish_body();
        p.digest().unwrap_or_default()
    }

    #[test]
    fn a_new_boundary_is_the_same_request_and_a_new_byte_is_not() {
        let form = |b: &str, file: &str| {
            format!(
                "--{b}\r\ncontent-disposition: form-data; name=\"file\"; filename=\"a.csv\"\r\n\r\n{file}\r\n--{b}--\r\n"
            )
        };
        let one = form("XyZ123", "name\nAna\n");
        let two = form("boundary-0042-long", "name\nAna\n");
        let other = form("XyZ123", "name\nAnna\n");
        let a = print("multipart/form-data; boundary=XyZ123", &[one.as_bytes()]);
        // Split across chunks, inside the boundary too.
        let (x, y) = two.as_bytes().split_at(7);
        let b = print("multipart/form-data; boundary=boundary-0042-long", &[x, y]);
        let c = print("multipart/form-data; boundary=XyZ123", &[other.as_bytes()]);
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(
            print("application/json", &[b"{\"a\":1}"]),
            print("application/json", &[b"{\"a\":2}"])
        );
    }
}
