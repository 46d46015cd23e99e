//! The anchor of `benches/webchat.rs`: a bare axum server whose `GET /events` is an
//! `axum::response::sse::Sse` of a `tokio::sync::broadcast` receiver (keep-alive comments
//! every 15 s, as the website chat's stream sends) and whose `POST /send` broadcasts its body
//! (text) as one `message` event to every open stream. No database, authentication or
//! middleware: what holding an idle event stream costs axum and tokio alone.
//!
//! Run: `cargo run --release -p wm-benches --bin bare-sse -- 127.0.0.1:8082`; it prints
//! `listening` once it accepts connections.

use std::convert::Infallible;
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::routing::{get, post};
use futures::Stream;
use tokio::sync::broadcast;

/// `GET /events`: every text broadcast from now on, as a `message` event.
async fn events(
    State(tx): State<broadcast::Sender<String>>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let stream = futures::stream::unfold(tx.subscribe(), |mut rx| async move {
        loop {
            match rx.recv().await {
                Ok(text) => return Some((Ok(Event::default().event("message").data(text)), rx)),
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    });
    Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}

/// `POST /send`: broadcasts the body.
async fn send(State(tx): State<broadcast::Sender<String>>, text: String) -> StatusCode {
    // No stream open is no error: nobody listens.
    let _ = tx.send(text);
    StatusCode::NO_CONTENT
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:8082".to_owned());
    let (tx, _) = broadcast::channel::<String>(1024);
    let app = Router::new()
        .route("/events", get(events))
        .route("/send", post(send))
        .with_state(tx);
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    println!("listening");
    axum::serve(listener, app).await
}
