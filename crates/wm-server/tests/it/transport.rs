//! The real binary under slow and idle clients: silent sockets, half headers and short
//! bodies are closed within their timeouts, idle keep-alive connections are closed, and
//! more silent sockets than the connection cap do not stop `/health` from answering.
//! Boolean settings take `1` (the server starts with `WM_ALLOW_INSECURE_WEBHOOKS=1`).

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

/// Starts the binary with `max_connections` and, when given, a file-descriptor limit.
async fn start(max_connections: usize, nofile: Option<u32>) -> Server {
    let dir = std::env::temp_dir().join(format!("wm-transport-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let addr = format!("127.0.0.1:{}", free_port());
    let bin = env!("CARGO_BIN_EXE_wm-server");
    let mut cmd = match nofile {
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
        .env("WM_ADMIN_TOKEN", "transport-admin")
        .env("WM_METRICS_LISTEN", "")
        .env("WM_ALLOW_INSECURE_WEBHOOKS", "1")
        .env("WM_HEADER_READ_TIMEOUT", "1s")
        .env("WM_IDLE_TIMEOUT", "1500ms")
        .env("WM_REQUEST_BODY_TIMEOUT", "1s")
        .env("WM_MAX_CONNECTIONS", max_connections.to_string())
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
    panic!("wm-server did not start (WM_ALLOW_INSECURE_WEBHOOKS=1 must be accepted)");
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
    let server = start(4096, None).await;
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
    let server = start(4096, Some(256)).await;
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
