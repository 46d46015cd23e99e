//! Moving a SQLite file's write-ahead log into the database, off the writer's path.
//!
//! By default the connection that commits past 1,000 pages of log copies them into the
//! database and syncs it before its commit returns. Under a bulk write that is a quarter of
//! each write transaction (a 1,000-row import chunk: 8.2 ms of commit against 2.7 ms
//! without), spent while every other write waits on the single writer. Here a thread of its
//! own checkpoints instead, `PASSIVE`, which never waits for or blocks the writer or the
//! readers. The writers' own automatic checkpoint stays as a backstop at a higher mark, so
//! the log cannot grow without bound if this thread falls behind.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

/// Pages of log at which a writer checkpoints itself (40 MB at 4 KiB pages), the backstop.
pub const WRITER_AUTOCHECKPOINT: u32 = 10_000;

/// How often the thread checkpoints. A checkpoint with nothing new to copy writes and syncs
/// nothing.
const EVERY: Duration = Duration::from_millis(200);

/// The checkpointing thread; it stops when this is dropped (with the last `Db` handle).
pub struct Checkpointer {
    stop: Arc<AtomicBool>,
}

impl Checkpointer {
    /// Starts checkpointing the database file at `path` (which must exist: call after the
    /// pool has opened it).
    pub fn start(path: &Path) -> std::io::Result<Checkpointer> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let path = path.to_path_buf();
        std::thread::Builder::new()
            .name("wm-checkpoint".into())
            .spawn(move || run(&path, &flag))?;
        Ok(Checkpointer { stop })
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn run(path: &Path, stop: &AtomicBool) {
    let conn = match Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    ) {
        Ok(c) => c,
        Err(e) => {
            tracing::warn!(error = %e, "no checkpoint thread: writers checkpoint the log themselves");
            return;
        }
    };
    let mut failing = false;
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(EVERY);
        // (busy, frames in the log, frames copied): only the outcome matters here.
        let done = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| r.get::<_, i64>(0));
        match done {
            Ok(_) => failing = false,
            Err(e) if !failing => {
                failing = true;
                tracing::warn!(error = %e, "checkpoint failed; the writers' backstop remains");
            }
            Err(_) => {}
        }
    }
}
