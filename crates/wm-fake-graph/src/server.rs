//! The HTTP server: routes, start/shutdown, and per-connection control.
//!
//! Why a custom listener: to make an outcome ambiguous the fake must close a
//! connection *without writing any response bytes* after it has accepted the
//! message. Each accepted socket is wrapped in [`FakeIo`], whose [`ConnHandle`]
//! (handed to handlers through `ConnectInfo`) can kill it: the socket is shut
//! down at once and any later read/write on it fails.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::extract::connect_info::Connected;
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::serve::{IncomingStream, Listener};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

use crate::FakeGraph;
use crate::errors::fbtrace_id;
use crate::model::FakeGraphOptions;
use crate::state::Shared;

#[derive(Debug)]
struct ConnCtl {
    killed: AtomicBool,
    /// A duplicate of the socket, used to shut it down from outside the IO.
    sock: Option<std::net::TcpStream>,
}

/// A handle on one client connection, available to handlers via `ConnectInfo`.
#[derive(Debug, Clone)]
pub struct ConnHandle(Arc<ConnCtl>);

impl ConnHandle {
    /// Closes the connection without writing anything more on it.
    pub fn kill(&self) {
        self.0.killed.store(true, Ordering::SeqCst);
        if let Some(sock) = &self.0.sock {
            let _ = sock.shutdown(std::net::Shutdown::Both);
        }
    }
}

/// A TCP stream that fails every operation once its connection is killed.
#[derive(Debug)]
pub struct FakeIo {
    inner: TcpStream,
    ctl: Arc<ConnCtl>,
}

fn killed_error() -> io::Error {
    io::Error::new(
        io::ErrorKind::ConnectionAborted,
        "connection dropped by the fake",
    )
}

impl FakeIo {
    fn is_killed(&self) -> bool {
        self.ctl.killed.load(Ordering::SeqCst)
    }
}

impl AsyncRead for FakeIo {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.is_killed() {
            return Poll::Ready(Err(killed_error()));
        }
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for FakeIo {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if self.is_killed() {
            return Poll::Ready(Err(killed_error()));
        }
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        if self.is_killed() {
            return Poll::Ready(Err(killed_error()));
        }
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.is_killed() {
            return Poll::Ready(Err(killed_error()));
        }
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// A TCP listener producing [`FakeIo`] connections.
#[derive(Debug)]
pub struct FakeListener(TcpListener);

fn wrap(stream: TcpStream) -> io::Result<FakeIo> {
    let _ = stream.set_nodelay(true);
    let std_stream = stream.into_std()?;
    let dup = std_stream.try_clone().ok();
    let inner = TcpStream::from_std(std_stream)?;
    Ok(FakeIo {
        inner,
        ctl: Arc::new(ConnCtl {
            killed: AtomicBool::new(false),
            sock: dup,
        }),
    })
}

impl Listener for FakeListener {
    type Io = FakeIo;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            match self.0.accept().await {
                Ok((stream, addr)) => match wrap(stream) {
                    Ok(io) => return (io, addr),
                    Err(e) => tracing::debug!(error = %e, "could not wrap an accepted connection"),
                },
                Err(e) => {
                    tracing::debug!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.0.local_addr()
    }
}

impl Connected<IncomingStream<'_, FakeListener>> for ConnHandle {
    fn connect_info(stream: IncomingStream<'_, FakeListener>) -> Self {
        ConnHandle(stream.io().ctl.clone())
    }
}

/// Graph answers unknown paths with code 2500 "Unknown path components".
pub(crate) async fn unknown_path(uri: Uri) -> Response {
    let body = serde_json::json!({
        "error": {
            "message": format!("Unknown path components: {}", uri.path()),
            "type": "OAuthException",
            "code": 2500,
            "fbtrace_id": fbtrace_id(),
        }
    });
    (StatusCode::BAD_REQUEST, axum::Json(body)).into_response()
}

/// The fake's routes (Graph endpoints plus the `/_fake` control API).
///
/// `/{version}/{id}` (media retrieve/delete) shares its first two segments with the
/// edge routes and `/_fake/...`; axum's router prefers static segments and matches
/// by segment count, so the edges, the control API and the download path
/// (`/whatsapp_business/attachments/`) keep their handlers, and an unversioned
/// two-segment path still answers 2500.
pub fn router(fake: FakeGraph) -> Router {
    use crate::media_http;
    Router::new()
        .route(
            "/{version}/{id}/messages",
            crate::messenger::routes::messages_route(),
        )
        .route(
            "/{version}/{id}/message_templates",
            get(crate::templates::list_templates),
        )
        .route(
            "/{version}/{id}",
            get(crate::messenger::routes::node).delete(media_http::delete),
        )
        .route(
            "/{version}/{id}/media",
            post(media_http::upload).layer(DefaultBodyLimit::max(media_http::MAX_UPLOAD_BODY)),
        )
        .route("/whatsapp_business/attachments/", get(media_http::download))
        .merge(crate::control::routes())
        .merge(crate::messenger::routes::routes())
        .fallback(unknown_path)
        .with_state(fake)
}

impl FakeGraph {
    /// Binds `opts.addr`, spawns the server and returns a handle to it.
    pub async fn start(opts: FakeGraphOptions) -> anyhow::Result<Self> {
        // reqwest is built with `rustls-no-provider`; webhook targets are plain
        // http:// but building a client still needs a process-wide provider.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .no_proxy()
            .pool_max_idle_per_host(256)
            .build()?;
        let listener = TcpListener::bind(opts.addr).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared::new(
            http,
            opts.webhook.clone(),
            opts.webhook_log_cap,
        ));
        let base = opts
            .public_base_url
            .clone()
            .unwrap_or_else(|| format!("http://{addr}"));
        let _ = shared.base_url.set(base.trim_end_matches('/').to_owned());
        let _ = shared.addr.set(addr);
        let fake = FakeGraph { shared };
        fake.set_media_url_ttl(Duration::from_millis(opts.media_url_ttl_ms));
        let app = router(fake.clone()).into_make_service_with_connect_info::<ConnHandle>();
        let stop = fake.shared.clone();
        let task = tokio::spawn(async move {
            let serve = axum::serve(FakeListener(listener), app)
                .with_graceful_shutdown(async move { stop.shutting_down().await });
            if let Err(e) = serve.await {
                tracing::warn!(error = %e, "fake graph server stopped with an error");
            }
        });
        *fake.shared.server.lock().unwrap_or_else(|e| e.into_inner()) = Some(task);
        Ok(fake)
    }

    /// The base URL, e.g. `http://127.0.0.1:41234` (point the Graph base URL here).
    pub fn url(&self) -> String {
        self.shared.base_url()
    }

    /// The bound socket address.
    pub fn addr(&self) -> SocketAddr {
        self.shared
            .addr
            .get()
            .copied()
            .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 0)))
    }

    /// Stops the server: hung and delayed sends are released (their connections
    /// dropped), then the listener closes. Idempotent.
    pub async fn shutdown(&self) {
        self.shared.shutdown.send_replace(true);
        let task = self
            .shared
            .server
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(mut task) = task
            && tokio::time::timeout(Duration::from_secs(5), &mut task)
                .await
                .is_err()
        {
            task.abort();
        }
    }

    /// Resolves once a shutdown was requested (by [`FakeGraph::shutdown`] or
    /// `POST /_fake/shutdown`); the binary waits on this.
    pub async fn shutdown_requested(&self) {
        self.shared.shutting_down().await;
    }
}
