//! `wm-server serve [--demo]` and `wm-server migrate`.

use clap::Parser;
use wm_server::config::{Cli, Command};

/// mimalloc instead of the system allocator: glibc's per-thread arenas cost the hot paths
/// about a sixth of their CPU (malloc, free, consolidation) and grow the resident set with
/// the number of threads. Only the binary picks it; the library leaves the choice to its host.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's settings for a server: memory freed is given back at once rather than after
/// 10 ms, and arenas are committed as they are used rather than up front. With its defaults
/// a million-contact import, audience and send peaked at 254 MB; with these, under 150 MB.
const ALLOCATOR_SETTINGS: [(&str, &str); 2] = [
    ("MIMALLOC_PURGE_DELAY", "0"),
    ("MIMALLOC_ARENA_EAGER_COMMIT", "0"),
];

/// Set when the process was started again with [`ALLOCATOR_SETTINGS`].
const RESTARTED: &str = "WM_ALLOCATOR_SETTINGS_APPLIED";

/// mimalloc reads its settings from the environment when the process starts, and setting
/// them from Rust needs `unsafe`, which the workspace forbids. So, unless the operator set
/// every one of them, the binary starts itself once more (same pid, same arguments) with
/// the missing ones set. Should that fail, it runs on mimalloc's defaults.
#[cfg(unix)]
fn apply_allocator_settings() {
    use std::os::unix::process::CommandExt;
    let missing: Vec<_> = ALLOCATOR_SETTINGS
        .iter()
        .filter(|(k, _)| std::env::var_os(k).is_none())
        .collect();
    if missing.is_empty() || std::env::var_os(RESTARTED).is_some() {
        return;
    }
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let mut args = std::env::args_os();
    let mut cmd = std::process::Command::new(exe);
    if let Some(arg0) = args.next() {
        cmd.arg0(arg0);
    }
    cmd.args(args).env(RESTARTED, "1");
    for (k, v) in missing {
        cmd.env(k, v);
    }
    let err = cmd.exec();
    eprintln!("wm-server: running on mimalloc's default settings ({err})");
}

#[cfg(not(unix))]
fn apply_allocator_settings() {}

fn main() -> anyhow::Result<()> {
    apply_allocator_settings();
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
