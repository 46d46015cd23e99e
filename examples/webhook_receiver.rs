//! A webhook receiver in axum: `wm_webhook::extract::VerifiedEvent` checks `X-WM-Signature`
//! against your secrets (several while rotating), drops deliveries it has already seen
//! (answering 200, so the sender stops retrying), and hands over the typed event.
//!
//! ```text
//! WM_WEBHOOK_SECRET=whsec_… cargo run -p wm-examples --example webhook_receiver
//! ```
//!
//! - `WM_WEBHOOK_SECRET`: the secret shown when the webhook was created; during a rotation,
//!   several separated by commas (new one first).
//! - `WM_RECEIVER_LISTEN`: where to listen (default `127.0.0.1:9000`); deliveries are
//!   POSTed to `/wm` (the webhook's URL is then `http://127.0.0.1:9000/wm`, which a server
//!   accepts only with `--allow-insecure-webhooks`; put a TLS proxy in front otherwise).

use std::net::SocketAddr;

use anyhow::{Context, bail};
use axum::Router;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::Value;
use wm_types::events::{CampaignFinishedData, ContactEventData, Event, EventKind};
use wm_webhook::extract::{Rejection, VerifiedEvent, WebhookConfig};

const DEFAULT_LISTEN: &str = "127.0.0.1:9000";

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let secrets: Vec<String> = std::env::var("WM_WEBHOOK_SECRET")
        .context("WM_WEBHOOK_SECRET is not set (the whsec_… shown when the webhook was created)")?
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    if secrets.is_empty() {
        bail!("WM_WEBHOOK_SECRET holds no secret");
    }
    let listen: SocketAddr = std::env::var("WM_RECEIVER_LISTEN")
        .unwrap_or_else(|_| DEFAULT_LISTEN.to_owned())
        .parse()
        .context("WM_RECEIVER_LISTEN must be host:port")?;

    let n = secrets.len();
    let app = Router::new()
        .route("/wm", post(receive))
        .with_state(WebhookConfig::new(secrets));
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("binding {listen}"))?;
    println!(
        "receiving wm webhooks on http://{}/wm ({n} secret{})",
        listener.local_addr()?,
        if n == 1 { "" } else { "s" }
    );
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            tokio::signal::ctrl_c().await.ok();
        })
        .await?;
    Ok(())
}

/// Verified, first-seen deliveries are printed and acknowledged; replays are dropped with a
/// 200; bad signatures get a 401 and malformed bodies a 400 (the extractor's answers).
async fn receive(delivery: Result<VerifiedEvent<Value>, Rejection>) -> Response {
    match delivery {
        Ok(VerifiedEvent(event)) => {
            print_event(&event);
            StatusCode::OK.into_response()
        }
        Err(Rejection::Duplicate) => {
            println!("duplicate delivery dropped (already processed)");
            Rejection::Duplicate.into_response()
        }
        Err(rejected) => {
            eprintln!("rejected: {rejected}");
            rejected.into_response()
        }
    }
}

fn print_event(event: &Event<Value>) {
    println!(
        "{} {} (delivery {})",
        event.created_at, event.event, event.id
    );
    let typed = |data: &Value| -> Option<String> {
        match event.event {
            EventKind::ContactCreated
            | EventKind::ContactUpdated
            | EventKind::ContactStageChanged => {
                let c: ContactEventData = serde_json::from_value(data.clone()).ok()?;
                let mut line = format!(
                    "  contact {} {:?} {} stage {}",
                    c.contact_id,
                    c.full_name.as_deref().unwrap_or("-"),
                    c.primary_phone.as_deref().unwrap_or("-"),
                    c.lifecycle_stage.as_deref().unwrap_or("none")
                );
                if let Some(Some(previous)) = &c.previous_stage {
                    line.push_str(&format!(" (was {previous})"));
                }
                if let Some(fields) = &c.changed_fields {
                    line.push_str(&format!(", changed: {}", fields.join(", ")));
                }
                Some(line)
            }
            EventKind::CampaignFinished => {
                let c: CampaignFinishedData = serde_json::from_value(data.clone()).ok()?;
                Some(format!(
                    "  campaign {} {:?} {}: {} sent, {} failed",
                    c.campaign_id, c.name, c.status, c.sent, c.failed
                ))
            }
            _ => None,
        }
    };
    match typed(&event.data) {
        Some(line) => println!("{line}"),
        None => println!("  {}", event.data),
    }
}
