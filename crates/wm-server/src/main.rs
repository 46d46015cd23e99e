//! `wm-server serve [--demo]` and `wm-server migrate`.

use clap::Parser;
use wm_server::config::{Cli, Command};

fn main() -> anyhow::Result<()> {
    // Before any thread starts, so that no thread has made an arena of its own yet.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    glibc::cap_arenas();
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(run())
}

async fn run() -> anyhow::Result<()> {
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

/// The binary's allocator setting; the library leaves the allocator to its host.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod glibc {
    /// Arenas the binary allows when `MALLOC_ARENA_MAX` does not say.
    const ARENAS: i32 = 2;

    /// Caps glibc malloc at [`ARENAS`] arenas. glibc gives a thread that allocates under
    /// contention an arena of its own, up to eight per core, and keeps what each arena
    /// freed. With sqlx's thread per SQLite connection, a million-contact import, audience
    /// and send peaked at 174 MB; capped, at 112 MB, with the same throughput (measured
    /// by `benches/scale.rs` and `benches/load.sh`). An operator's `MALLOC_ARENA_MAX` wins.
    #[allow(unsafe_code)]
    pub fn cap_arenas() {
        if std::env::var_os("MALLOC_ARENA_MAX").is_some() {
            return;
        }
        // SAFETY: called first thing in `main`, before any other thread exists; `mallopt`
        // only changes a setting of the allocator and reports failure by its return value,
        // which is ignored (the default stays).
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, ARENAS);
        }
    }
}
