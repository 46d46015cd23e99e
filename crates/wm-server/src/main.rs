//! `wm-server serve [--demo]` and `wm-server migrate`.

use clap::Parser;
use tracing_subscriber::EnvFilter;
use wm_server::config::{Cli, Command};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .init();
    match Cli::parse().command {
        Command::Serve(args) => wm_server::serve(*args).await,
        Command::Migrate(args) => {
            let db = wm_server::db::Db::connect(&args.database_url).await?;
            db.migrate().await?;
            println!("migrations applied");
            Ok(())
        }
    }
}
