//! `wm-server serve [--demo]` and `wm-server migrate`.

use clap::Parser;
use wm_server::config::{Cli, Command};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let _log_writer = wm_server::observe::init_tracing(cli.log_format)?;
    match cli.command {
        Command::Serve(args) => wm_server::serve(*args).await,
        Command::Migrate(args) => {
            let db = wm_server::db::Db::connect(&args.database_url).await?;
            db.migrate().await?;
            println!("migrations applied");
            Ok(())
        }
    }
}
