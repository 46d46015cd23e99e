//! The real binary under slow and idle clients: silent sockets, half headers and short
//! bodies are closed within their timeouts, idle keep-alive connections are closed, and
//! more silent sockets than the connection cap do not stop `/health` from answering. Load is
//! shed with a 503 in the business-error shape, beyond the in-flight cap (`/health` exempt)
//! and when every connection is busy. Boolean env settings take `1/0, yes/no, on/off`.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

struct Server {
    child: Child,
    addr: String,
    _dir: TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

struct TempDir(std::path::PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

use crate::replicas_harness::free_port;
use crate::support::IdOf;

/// The settings a test starts the binary with.
struct Opts {
    max_connections: usize,
    max_in_flight: usize,
    /// A file-descriptor limit (`ulimit -n`).
    nofile: Option<u32>,
    /// `WM_ALLOW_INSECURE_WEBHOOKS`.
    insecure: &'static str,
    /// `WM_REQUEST_BODY_TIMEOUT`.
    body_timeout: &'static str,
}

impl Default for Opts {
    fn default() -> Self {
        Opts {
            max_connections: 4096,
            max_in_flight: 1024,
            nofile: None,
            insecure: "1",
            body_timeout: "1s",
        }
    }
}

const ADMIN: &str = "transport-admin";

/// Starts the binary with `opts`; returns once `/health` answers.
async fn start(opts: Opts) -> Server {
    let dir = std::env::temp_dir().join(format!("wm-transport-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let addr = format!("127.0.0.1:{}", free_port());
    let bin = env!("CARGO_BIN_EXE_wm-server");
    let mut cmd = match opts.nofile {
        Some(n) => {
            let mut c = Command::new("sh");
            c.arg("-c")
                .arg(format!("ulimit -n {n} && exec \"{bin}\" serve"));
            c
        }
        None => {
            let mut c = Command::new(bin);
            c.arg("serve");
            c
        }
    };
    let child = cmd
        .env(
            "WM_DATABASE_URL",
            format!("sqlite://{}/t.db?mode=rwc", dir.display()),
        )
        .env("WM_LISTEN", &addr)
        .env("WM_ADMIN_TOKEN", ADMIN)
        .env("WM_METRICS_LISTEN", "")
        .env("WM_ALLOW_INSECURE_WEBHOOKS", opts.insecure)
        .env("WM_HEADER_READ_TIMEOUT", "1s")
        .env("WM_IDLE_TIMEOUT", "1500ms")
        .env("WM_REQUEST_BODY_TIMEOUT", opts.body_timeout)
        .env("WM_MAX_CONNECTIONS", opts.max_connections.to_string())
        .env("WM_MAX_IN_FLIGHT", opts.max_in_flight.to_string())
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start wm-server");
    let server = Server {
        child,
        addr,
        _dir: TempDir(dir),
    };
    for _ in 0..300 {
        if health(&server.addr).await == Some(200) {
            return server;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "wm-server did not start (WM_ALLOW_INSECURE_WEBHOOKS={} must be accepted)",
        opts.insecure
    );
}

/// `GET /api/v1/health` on a fresh connection: the status, or None when refused.
async fn health(addr: &str) -> Option<u16> {
    let mut s = TcpStream::connect(addr).await.ok()?;
    s.write_all(b"GET /api/v1/health HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .await
        .ok()?;
    let mut buf = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut buf))
        .await
        .ok()?
        .ok()?;
    let head = String::from_utf8_lossy(&buf);
    head.split_whitespace().nth(1)?.parse().ok()
}

/// Reads until the server closes; returns what it sent and when it closed.
async fn until_closed(s: &mut TcpStream, limit: Duration) -> (String, Option<Duration>) {
    let start = Instant::now();
    let mut buf = Vec::new();
    let closed = tokio::time::timeout(limit, s.read_to_end(&mut buf)).await;
    let at = closed.is_ok().then(|| start.elapsed());
    (String::from_utf8_lossy(&buf).into_owned(), at)
}

#[tokio::test]
async fn slow_and_idle_clients_are_closed_within_their_timeouts() {
    let server = start(Opts::default()).await;
    // A socket that sends nothing.
    let mut silent = TcpStream::connect(&server.addr).await.unwrap();
    // Half a header.
    let mut half = TcpStream::connect(&server.addr).await.unwrap();
    half.write_all(b"GET /api/v1/health HTTP/1.1\r\nHost: t\r\n")
        .await
        .unwrap();
    // A body that promises 1,000 bytes and sends 10.
    let mut short = TcpStream::connect(&server.addr).await.unwrap();
    short
        .write_all(
            b"POST /api/v1/admin/organizations HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer transport-admin\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"name\":\"x",
        )
        .await
        .unwrap();
    // A keep-alive connection after one request.
    let mut idle = TcpStream::connect(&server.addr).await.unwrap();
    idle.write_all(b"GET /api/v1/health HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();

    let limit = Duration::from_secs(8);
    let (sent, at) = until_closed(&mut silent, limit).await;
    assert!(at.is_some(), "a silent socket is closed (sent {sent:?})");
    let (_, at) = until_closed(&mut half, limit).await;
    assert!(at.is_some(), "half a header is closed");
    let (sent, at) = until_closed(&mut short, limit).await;
    assert!(at.is_some(), "a short body is ended");
    assert!(sent.starts_with("HTTP/1.1 408"), "{sent}");
    assert!(sent.contains(r#""statusCode":408"#), "{sent}");
    let (sent, at) = until_closed(&mut idle, limit).await;
    assert!(sent.starts_with("HTTP/1.1 200"), "{sent}");
    assert!(at.is_some(), "an idle keep-alive connection is closed");
    assert_eq!(health(&server.addr).await, Some(200));
}

#[tokio::test]
async fn more_silent_sockets_than_the_descriptors_do_not_stop_health() {
    // 300 silent sockets against a 256 file limit: the cap stays below the limit and the
    // longest-idle socket makes room, so accept never runs out of descriptors.
    let server = start(Opts {
        nofile: Some(256),
        ..Opts::default()
    })
    .await;
    let mut held = Vec::new();
    for _ in 0..300 {
        held.push(TcpStream::connect(&server.addr).await.unwrap());
    }
    // Throughout the next second (before the header timeout frees anything), every probe
    // on a new connection answers 200: the longest-idle silent socket makes room.
    for _ in 0..10 {
        assert_eq!(health(&server.addr).await, Some(200));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    drop(held);
}

/// A response read off a raw connection.
struct Answer {
    status: u16,
    head: String,
    body: serde_json::Value,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }
}

/// Everything the server sends until it closes (a reset after the answer ends it too).
async fn read_all(s: &mut TcpStream) -> Vec<u8> {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let read = async {
        loop {
            match s.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), read)
        .await
        .expect("the server answers and closes");
    got
}

fn parse(raw: &[u8]) -> Answer {
    let text = String::from_utf8_lossy(raw);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("no answer: {text:?}"));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status: {head:?}"));
    Answer {
        status,
        head: head.to_owned(),
        body: serde_json::from_str(body).unwrap_or(serde_json::Value::Null),
    }
}

/// One operator request on a new connection (`Connection: close`).
async fn request(addr: &str, method: &str, path: &str, body: Option<&str>) -> Answer {
    let mut s = TcpStream::connect(addr).await.unwrap();
    let body = body.unwrap_or_default();
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {ADMIN}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).await.unwrap();
    parse(&read_all(&mut s).await)
}

const HELD: &str = r#"{"name":"held"}"#;

/// A request admitted and held in flight: its headers sent with `Expect: 100-continue` and
/// the server's `100 Continue` received (hyper sends it when the handler starts reading the
/// body, so after admission), its body not sent yet.
async fn hold(addr: &str) -> TcpStream {
    let mut s = TcpStream::connect(addr).await.unwrap();
    let req = format!(
        "POST /api/v1/admin/organizations HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {ADMIN}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n",
        HELD.len()
    );
    s.write_all(req.as_bytes()).await.unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 256];
    while !got.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = tokio::time::timeout(Duration::from_secs(10), s.read(&mut buf))
            .await
            .expect("100 Continue")
            .unwrap();
        assert!(n > 0, "closed: {:?}", String::from_utf8_lossy(&got));
        got.extend_from_slice(&buf[..n]);
    }
    assert!(
        got.starts_with(b"HTTP/1.1 100 Continue\r\n"),
        "{:?}",
        String::from_utf8_lossy(&got)
    );
    s
}

/// Sends a held request's body; its answer.
async fn release(mut s: TcpStream) -> Answer {
    s.write_all(HELD.as_bytes()).await.unwrap();
    parse(&read_all(&mut s).await)
}

#[tokio::test]
async fn beyond_the_in_flight_cap_requests_are_shed_but_health_answers() {
    let server = start(Opts {
        max_in_flight: 1,
        body_timeout: "60s",
        ..Opts::default()
    })
    .await;
    let held = hold(&server.addr).await;
    let shed = request(&server.addr, "GET", "/api/v1/admin/organizations", None).await;
    assert_eq!(shed.status, 503, "{}", shed.head);
    assert_eq!(
        shed.body,
        serde_json::json!({"statusCode": 503, "message": "The server is busy; retry shortly."})
    );
    assert_eq!(shed.header("retry-after"), Some("1"));
    assert_eq!(shed.header("content-type"), Some("application/json"));
    // `/health` is exempt from the cap.
    assert_eq!(health(&server.addr).await, Some(200));
    // Once the held request ends, requests are admitted again.
    assert_eq!(release(held).await.status, 201);
    let list = request(&server.addr, "GET", "/api/v1/admin/organizations", None).await;
    assert_eq!(list.status, 200, "{}", list.head);
    assert_eq!(list.body["data"][0]["name"], "held");
}

#[tokio::test]
async fn when_every_connection_is_busy_a_new_one_is_answered_503() {
    let server = start(Opts {
        max_connections: 2,
        body_timeout: "60s",
        ..Opts::default()
    })
    .await;
    let first = hold(&server.addr).await;
    // At the cap with one idle socket: `/health` still answers, the idle one makes room.
    let mut silent = TcpStream::connect(&server.addr).await.unwrap();
    assert_eq!(health(&server.addr).await, Some(200));
    assert!(read_all(&mut silent).await.is_empty(), "evicted unanswered");
    // Both connections busy: a newcomer is answered 503 and closed.
    let second = hold(&server.addr).await;
    let shed = request(&server.addr, "GET", "/api/v1/admin/organizations", None).await;
    assert_eq!(shed.status, 503, "{}", shed.head);
    assert_eq!(
        shed.body,
        serde_json::json!({
            "statusCode": 503,
            "message": "The server is at its connection limit; retry shortly."
        })
    );
    assert_eq!(shed.header("retry-after"), Some("1"));
    assert_eq!(shed.header("content-type"), Some("application/json"));
    // The held requests were not disturbed, and a freed connection serves again.
    assert_eq!(release(second).await.status, 201);
    assert_eq!(health(&server.addr).await, Some(200));
    assert_eq!(release(first).await.status, 201);
}

#[tokio::test]
async fn boolean_env_settings_take_effect_in_every_spelling() {
    // An http:// loopback webhook is accepted only when insecure targets are allowed.
    let cases = [("yes", true), ("on", true), ("0", false), ("off", false)];
    let servers = futures::future::join_all(cases.iter().map(|(v, _)| {
        start(Opts {
            insecure: v,
            ..Opts::default()
        })
    }))
    .await;
    for ((v, insecure), server) in cases.iter().zip(&servers) {
        let org = request(
            &server.addr,
            "POST",
            "/api/v1/admin/organizations",
            Some(r#"{"name":"b"}"#),
        )
        .await;
        assert_eq!(org.status, 201, "{v}: {}", org.head);
        let id = org.body.id();
        let hook = request(
            &server.addr,
            "POST",
            &format!("/api/v1/admin/organizations/{id}/webhooks"),
            Some(r#"{"url":"http://127.0.0.1:9/hook","events":["contact.created"]}"#),
        )
        .await;
        if *insecure {
            assert_eq!(hook.status, 201, "{v}: {}", hook.body);
            assert_eq!(hook.body["url"], "http://127.0.0.1:9/hook");
        } else {
            assert_eq!(hook.status, 400, "{v}: {}", hook.body);
            assert_eq!(
                hook.body["message"],
                serde_json::json!(["url must use https"])
            );
        }
    }
}
