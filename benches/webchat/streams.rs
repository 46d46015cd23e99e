//! The event streams of `webchat.rs`, on raw HTTP/1.1 sockets (a browser's `EventSource`
//! without a client pool per stream): opening them, reading their events, and counting
//! those the server closed.

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use futures::StreamExt as _;
use serde_json::Value;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;
use tokio::sync::oneshot;

/// Who waits for the event carrying a text: the text, and where its arrival time goes.
pub type Waiters = Arc<Mutex<HashMap<String, oneshot::Sender<Instant>>>>;

/// Where `needle` first occurs in `hay`.
pub fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Opens an event stream: `GET path` on `addr` as a browser's `EventSource` sends it; the
/// socket once the answer's header (200) is read, and what came after the header.
pub async fn open_stream(
    addr: SocketAddr,
    path: &str,
    origin: Option<&str>,
) -> anyhow::Result<(TcpStream, Vec<u8>)> {
    let mut s = TcpStream::connect(addr).await.context("connect")?;
    let mut req = format!(
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\nCache-Control: no-cache\r\n"
    );
    if let Some(o) = origin {
        req.push_str(&format!("Origin: {o}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes())
        .await
        .context("write the request")?;
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 2048];
    loop {
        let n = tokio::time::timeout(Duration::from_secs(30), s.read(&mut chunk))
            .await
            .context("no answer header in 30 s")?
            .context("read the answer header")?;
        anyhow::ensure!(n > 0, "closed before the answer header");
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = find(&buf, b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]);
            let status = head.lines().next().unwrap_or_default().to_owned();
            if !status.starts_with("HTTP/1.1 200") {
                let body = String::from_utf8_lossy(&buf[end + 4..]);
                anyhow::bail!("{status}: {}", body.chars().take(200).collect::<String>());
            }
            return Ok((s, buf[end + 4..].to_vec()));
        }
        anyhow::ensure!(buf.len() < 64 * 1024, "answer header over 64 KiB");
    }
}

/// Opens `paths.len()` streams, `SETUP_CONCURRENCY` at a time; the open ones and, for those
/// that failed, each distinct error with its count.
pub async fn open_many(
    addr: SocketAddr,
    paths: Vec<String>,
    origin: Option<&'static str>,
) -> (Vec<TcpStream>, BTreeMap<String, usize>) {
    let mut open = Vec::with_capacity(paths.len());
    let mut failed = BTreeMap::new();
    let mut results = futures::stream::iter(paths)
        .map(|p| async move { open_stream(addr, &p, origin).await })
        .buffer_unordered(super::SETUP_CONCURRENCY);
    while let Some(r) = results.next().await {
        match r {
            Ok((s, _)) => open.push(s),
            Err(e) => *failed.entry(format!("{e:#}")).or_insert(0) += 1,
        }
    }
    (open, failed)
}

/// Reads a stream's events until it ends: each `data:` line's text (`text_of`) that someone
/// waits for gets the time its bytes arrived.
pub fn listen(
    mut s: TcpStream,
    mut buf: Vec<u8>,
    waiters: Waiters,
    text_of: fn(&str) -> Option<String>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut chunk = [0u8; 8192];
        let mut at = Instant::now();
        loop {
            // Whole lines only (an event is one chunk of the chunked body; the chunk-size
            // lines and blank lines are skipped as not `data:`).
            while let Some(i) = buf.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = buf.drain(..=i).collect();
                let line = String::from_utf8_lossy(&line);
                let Some(data) = line.trim_end().strip_prefix("data:") else {
                    continue;
                };
                let data = data.strip_prefix(' ').unwrap_or(data);
                if let Some(text) = text_of(data) {
                    let waiter = waiters
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .remove(&text);
                    if let Some(w) = waiter {
                        let _ = w.send(at);
                    }
                }
            }
            match s.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    at = Instant::now();
                    buf.extend_from_slice(&chunk[..n]);
                }
            }
        }
    })
}

/// The text of a website chat event (a message as the widget reads it).
pub fn message_text(data: &str) -> Option<String> {
    serde_json::from_str::<Value>(data).ok()?["text"]
        .as_str()
        .map(str::to_owned)
}

/// The text of a bare event: its data.
pub fn raw_text(data: &str) -> Option<String> {
    Some(data.to_owned())
}

/// Of the held streams, how many the server has closed (read end or error; a keep-alive
/// comment waiting is no close).
pub fn closed(streams: &[TcpStream]) -> usize {
    let mut buf = [0u8; 4096];
    streams
        .iter()
        .filter(|s| {
            loop {
                match s.try_read(&mut buf) {
                    Ok(0) => break true,
                    Ok(_) => continue,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break false,
                    Err(_) => break true,
                }
            }
        })
        .count()
}
