//! The HTTP listener of `wm-server serve`: hyper connections with a header-read timeout,
//! an idle keep-alive timeout, a request-body deadline, a cap on connections and one on
//! requests in flight, so slow or idle clients cannot hold the server's sockets.
//!
//! At the connection cap a new connection first evicts the connection idle the longest (no
//! request in flight: a client still sending its headers, or a keep-alive connection
//! waiting); only when every connection is busy is the newcomer answered 503 and closed. So
//! `/health` keeps answering while hundreds of silent sockets are held open. The cap is
//! kept below the process's file-descriptor limit, so `accept` never fails for lack of one.

use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

use crate::error::ApiError;

/// Binds `addr`, or fails saying which address could not be taken and which setting
/// moves it (`setting`: the flag and its `WM_` twin), so a second server on the same host
/// says more than "Address already in use".
pub async fn bind(addr: SocketAddr, setting: &str) -> anyhow::Result<tokio::net::TcpListener> {
    tokio::net::TcpListener::bind(addr).await.map_err(|e| {
        anyhow::anyhow!("cannot listen on {addr}: {e}. Set {setting} to another address.")
    })
}

/// File descriptors kept free for the database pool, files and the metrics listener.
const FD_RESERVE: u64 = 64;
/// How long open connections may finish their requests at shutdown.
const DRAIN: Duration = Duration::from_secs(30);

/// The listener's limits (flags `--header-read-timeout`, `--idle-timeout`,
/// `--request-body-timeout`, `--max-connections`, `--max-in-flight`, `--shutdown-delay`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// A client must send a request's whole header within this time.
    pub header_read_timeout: Duration,
    /// A keep-alive connection with no request for this long is closed.
    pub idle_timeout: Duration,
    /// A request body must arrive whole within this time (408 otherwise).
    pub request_body_timeout: Duration,
    /// Connections held at once (also kept below the file-descriptor limit).
    pub max_connections: usize,
    /// Requests handled at once; beyond it 503 (`/health` is exempt).
    pub max_in_flight: usize,
    /// At shutdown, how long the replica keeps serving with readiness at 503 before it
    /// stops accepting, so the load balancer has seen it leave (a second signal cuts it
    /// short).
    pub shutdown_delay: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            header_read_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            request_body_timeout: Duration::from_secs(30),
            max_connections: 4096,
            max_in_flight: 1024,
            shutdown_delay: Duration::from_secs(5),
        }
    }
}

/// The connection cap actually used: `wanted`, but below the soft `RLIMIT_NOFILE` minus a
/// reserve, so that accepting never runs out of descriptors.
pub fn effective_max_connections(wanted: usize) -> usize {
    #[cfg(unix)]
    {
        let soft = rustix::process::getrlimit(rustix::process::Resource::Nofile)
            .current
            .unwrap_or(u64::MAX);
        let room = soft.saturating_sub(FD_RESERVE).max(8);
        wanted
            .min(usize::try_from(room).unwrap_or(usize::MAX))
            .max(1)
    }
    #[cfg(not(unix))]
    {
        wanted.max(1)
    }
}

struct Conn {
    in_flight: Arc<AtomicUsize>,
    /// Milliseconds since the listener started, of the last request's end (or the accept).
    last_active: Arc<AtomicU64>,
    close: CancellationToken,
}

/// The open connections.
struct Registry {
    conns: Mutex<HashMap<u64, Conn>>,
    next_id: AtomicU64,
    started: Instant,
}

impl Registry {
    fn now_ms(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Makes room for one more connection: evicts the longest-idle one when at `cap`.
    /// `false` when every connection has a request in flight. A connection already told to
    /// close (evicted a moment ago) no longer counts: its task is ending and its slot is
    /// free, even if it has not yet left the registry.
    fn make_room(&self, cap: usize) -> bool {
        let conns = self.conns.lock().unwrap_or_else(|p| p.into_inner());
        if conns.values().filter(|c| !c.close.is_cancelled()).count() < cap {
            return true;
        }
        let idlest = conns
            .values()
            .filter(|c| c.in_flight.load(Ordering::Acquire) == 0 && !c.close.is_cancelled())
            .min_by_key(|c| c.last_active.load(Ordering::Acquire));
        match idlest {
            Some(c) => {
                c.close.cancel();
                true
            }
            None => false,
        }
    }
}

/// Serves `app` on `listener` with `limits` until `shutdown` resolves, then lets open
/// connections finish (up to 30 s).
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let app = with_request_limits(app, limits);
    let cap = effective_max_connections(limits.max_connections);
    let registry = Arc::new(Registry {
        conns: Mutex::new(HashMap::new()),
        next_id: AtomicU64::new(0),
        started: Instant::now(),
    });
    let stop = CancellationToken::new();
    tokio::pin!(shutdown);
    let mut tasks = tokio::task::JoinSet::new();
    loop {
        let (stream, _peer) = tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(s) => s,
                Err(e) => {
                    // Out of descriptors or a connection reset before accept: wait, go on.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        while tasks.try_join_next().is_some() {}
        if !registry.make_room(cap) {
            tasks.spawn(refuse(stream));
            continue;
        }
        let _ = stream.set_nodelay(true);
        let id = registry.next_id.fetch_add(1, Ordering::Relaxed);
        let conn = Conn {
            in_flight: Arc::new(AtomicUsize::new(0)),
            last_active: Arc::new(AtomicU64::new(registry.now_ms())),
            close: stop.child_token(),
        };
        let (in_flight, last_active, close) = (
            conn.in_flight.clone(),
            conn.last_active.clone(),
            conn.close.clone(),
        );
        registry
            .conns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id, conn);
        let (app, registry) = (app.clone(), registry.clone());
        tasks.spawn(async move {
            let tracker = Tracker {
                in_flight,
                last_active,
                registry: registry.clone(),
            };
            connection(stream, app, limits, tracker, close).await;
            registry
                .conns
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&id);
        });
    }
    drop(listener);
    stop.cancel();
    let _ = tokio::time::timeout(DRAIN, async { while tasks.join_next().await.is_some() {} }).await;
    Ok(())
}

/// Counts a connection's requests in flight and stamps the end of each.
#[derive(Clone)]
struct Tracker {
    in_flight: Arc<AtomicUsize>,
    last_active: Arc<AtomicU64>,
    registry: Arc<Registry>,
}

struct InFlight(Tracker);

impl Drop for InFlight {
    fn drop(&mut self) {
        let t = &self.0;
        t.last_active.store(t.registry.now_ms(), Ordering::Release);
        t.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The address a request's connection came from (a request extension), for limits per
/// address; behind a proxy it is the proxy's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Peer(pub std::net::SocketAddr);

/// Drives one connection until it ends, is idle past `idle_timeout`, or is told to close
/// (eviction, or shutdown: then it finishes the request in flight).
async fn connection(
    stream: TcpStream,
    app: Router,
    limits: Limits,
    tracker: Tracker,
    close: CancellationToken,
) {
    let counted = tracker.clone();
    let peer = stream.peer_addr().ok().map(Peer);
    let svc = tower::service_fn(move |req: Request<hyper::body::Incoming>| {
        counted.in_flight.fetch_add(1, Ordering::AcqRel);
        let guard = InFlight(counted.clone());
        let app = app.clone();
        let mut req = req.map(axum::body::Body::new);
        if let Some(peer) = peer {
            req.extensions_mut().insert(peer);
        }
        async move {
            use http_body_util::BodyExt;
            // The request counts as in flight until its body is sent: a long answer (an
            // event stream) keeps its connection from being closed as idle.
            app.oneshot(req).await.map(|r| {
                r.map(move |body| {
                    axum::body::Body::new(body.map_frame(move |frame| {
                        let _in_flight = &guard;
                        frame
                    }))
                })
            })
        }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .keep_alive(true);
    let conn = builder.serve_connection(TokioIo::new(stream), TowerToHyperService::new(svc));
    tokio::pin!(conn);
    let idle_ms = u64::try_from(limits.idle_timeout.as_millis()).unwrap_or(u64::MAX);
    loop {
        let idle_for = tracker
            .registry
            .now_ms()
            .saturating_sub(tracker.last_active.load(Ordering::Acquire));
        let wait = Duration::from_millis(idle_ms.saturating_sub(idle_for).max(10));
        tokio::select! {
            _ = conn.as_mut() => return,
            _ = close.cancelled() => {
                if tracker.in_flight.load(Ordering::Acquire) == 0 {
                    return; // idle or still sending headers: dropped at once
                }
                conn.as_mut().graceful_shutdown();
                let _ = tokio::time::timeout(DRAIN, conn.as_mut()).await;
                return;
            }
            _ = tokio::time::sleep(wait) => {
                let idle_for = tracker
                    .registry
                    .now_ms()
                    .saturating_sub(tracker.last_active.load(Ordering::Acquire));
                if tracker.in_flight.load(Ordering::Acquire) == 0 && idle_for >= idle_ms {
                    return;
                }
            }
        }
    }
}

/// Answers a connection the server has no room for: 503, then closes it.
async fn refuse(mut stream: TcpStream) {
    let body =
        r#"{"statusCode":503,"message":"The server is at its connection limit; retry shortly."}"#;
    let head = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: {}\r\nretry-after: 1\r\nconnection: close\r\n\r\n",
        body.len()
    );
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        stream.write_all(head.as_bytes()).await?;
        stream.write_all(body.as_bytes()).await?;
        stream.shutdown().await
    })
    .await;
}

/// The request-level limits: a body deadline (408 through the JSON extractors) and the
/// in-flight cap (503; `/health` is exempt so probes still answer under load).
fn with_request_limits(app: Router, limits: Limits) -> Router {
    let permits = Arc::new(Semaphore::new(limits.max_in_flight.max(1)));
    app.layer(axum::middleware::from_fn(
        move |req: Request, next: Next| {
            let permits = permits.clone();
            async move { admit(permits, req, next).await }
        },
    ))
    .layer(tower_http::timeout::RequestBodyDeadlineLayer::new(
        limits.request_body_timeout,
    ))
}

async fn admit(permits: Arc<Semaphore>, req: Request, next: Next) -> Response {
    if req.uri().path().ends_with("/health") {
        return next.run(req).await;
    }
    match permits.try_acquire_owned() {
        Ok(_permit) => next.run(req).await,
        Err(_) => {
            let mut r = ApiError::business(
                StatusCode::SERVICE_UNAVAILABLE,
                None,
                "The server is busy; retry shortly.",
            )
            .into_response();
            r.headers_mut()
                .insert(axum::http::header::RETRY_AFTER, 1.into());
            r
        }
    }
}
