//! What the benchmarks that run a release `wm-server` process share: the binary
//! (`WM_SERVER_BIN`, default `target/release/wm-server`), a scratch directory, and the
//! database (a SQLite file there, or a fresh database on the PostgreSQL server of
//! `WM_BENCH_DATABASE_URL`).

#![allow(dead_code)] // each benchmark uses the part it needs

use std::path::PathBuf;

use uuid::Uuid;

/// Where a benchmark runs.
pub struct Setup {
    /// The server binary.
    pub bin: PathBuf,
    /// Its scratch directory (logs, the SQLite file).
    pub dir: PathBuf,
    /// The database URL.
    pub db: String,
    /// `SQLite` or `PostgreSQL`.
    pub kind: &'static str,
}

/// The binary, a new scratch directory named after `name`, and the database.
pub async fn setup(name: &str) -> anyhow::Result<Setup> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let bin = std::env::var("WM_SERVER_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root.join("target/release/wm-server"));
    let dir = std::env::temp_dir().join(format!("wm-bench-{name}-{}", Uuid::new_v4()));
    std::fs::create_dir_all(&dir)?;
    let (db, kind) = crate::harness::process_database("WM_BENCH_DATABASE_URL", &dir).await;
    Ok(Setup { bin, dir, db, kind })
}

/// A number from the environment, or `default`.
pub fn env_num(k: &str, default: usize) -> usize {
    std::env::var(k)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
