//! `wm-fake-graph`: runs the fake WhatsApp Cloud API on an address so shell
//! scripts and multi-process tests can use it (drive it with `/_fake/...`).

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context;
use clap::Parser;
use wm_fake_graph::{FakeGraph, FakeGraphOptions, Setup, WebhookConfig};

/// Fake WhatsApp Business Cloud API (Meta Graph API) for tests.
#[derive(Debug, Parser)]
#[command(name = "wm-fake-graph", version)]
struct Args {
    /// Address to listen on (port 0 picks a free port).
    #[arg(long, env = "WM_FAKE_GRAPH_LISTEN", default_value = "127.0.0.1:0")]
    listen: SocketAddr,
    /// Base URL used in `paging.next` links (default: http://<bound address>).
    #[arg(long, env = "WM_FAKE_GRAPH_PUBLIC_URL")]
    public_url: Option<String>,
    /// JSON file with `{"numbers":[...],"templates":[...],"webhook":{...}}`.
    #[arg(long, env = "WM_FAKE_GRAPH_SETUP")]
    setup: Option<PathBuf>,
    /// Webhook URL for status webhooks (needs --app-secret).
    #[arg(long, env = "WM_FAKE_GRAPH_WEBHOOK_URL", requires = "app_secret")]
    webhook_url: Option<String>,
    /// App secret used for X-Hub-Signature-256.
    #[arg(long, env = "WM_FAKE_GRAPH_APP_SECRET")]
    app_secret: Option<String>,
    /// Write the base URL to this file once listening (for scripts).
    #[arg(long, env = "WM_FAKE_GRAPH_URL_FILE")]
    url_file: Option<PathBuf>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let args = Args::parse();
    let webhook = match (args.webhook_url, args.app_secret) {
        (Some(url), Some(app_secret)) => Some(WebhookConfig {
            url,
            app_secret,
            statuses: Default::default(),
            retry: Default::default(),
        }),
        _ => None,
    };
    let opts = FakeGraphOptions {
        addr: args.listen,
        public_base_url: args.public_url,
        webhook,
        ..Default::default()
    };
    let fake = FakeGraph::start(opts).await?;
    if let Some(path) = &args.setup {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let setup: Setup =
            serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
        fake.apply_setup(setup);
    }
    let url = fake.url();
    if let Some(path) = &args.url_file {
        std::fs::write(path, format!("{url}\n"))
            .with_context(|| format!("writing {}", path.display()))?;
    }
    println!("wm-fake-graph listening on {url}");
    tokio::select! {
        r = tokio::signal::ctrl_c() => r.context("waiting for ctrl-c")?,
        () = fake.shutdown_requested() => {}
    }
    fake.shutdown().await;
    Ok(())
}
