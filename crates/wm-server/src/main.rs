//! `wm-server serve [--demo]` and `wm-server migrate`.

use clap::Parser;
use wm_server::config::{Cli, Command};

/// mimalloc instead of the system allocator: glibc's per-thread arenas cost the hot paths
/// about a sixth of their CPU (malloc, free, consolidation) and grow the resident set with
/// the number of threads. Only the binary picks it; the library leaves the choice to its host.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
