//! The import worker: takes a queued job (or one whose worker stopped: its lease ran out)
//! and writes its chunks in order, each in one transaction with the job's progress, so a
//! restart resumes at the first chunk not written and no row is written twice. Each chunk
//! renews the lease; SIGTERM hands the job back between chunks.

use tracing::Instrument;
use wm_types::imports::ImportStatus;

use crate::db::{self, entities::contact_import};
use crate::observe::health::{Worker, pass};
use crate::services::imports::process::{self, Prepared};
use crate::state::AppState;

/// How long a job stays with a worker that stops renewing it (a chunk takes well under a
/// second), so a killed replica's job is resumed elsewhere within this.
pub const LEASE_MS: i64 = 10_000;

/// Consecutive failures of one chunk before the job is failed (a failure that repeats is
/// not a passing conflict).
const ATTEMPTS: u32 = 3;

/// Contacts created or updated by an import from which the planner's statistics are
/// refreshed when it ends (PostgreSQL): below it, a change too small to mislead the planner.
const ANALYZE_AFTER: i64 = 10_000;

/// The import worker.
#[derive(Clone)]
pub struct ImportWorker {
    state: AppState,
}

impl ImportWorker {
    /// A worker over the server's state.
    pub fn new(state: AppState) -> Self {
        ImportWorker { state }
    }

    /// Runs until cancelled; an upload wakes it at once.
    pub async fn run(self, cancel: tokio_util::sync::CancellationToken) {
        self.state
            .health
            .started(Worker::Imports, self.state.now_ms());
        loop {
            // A failed pass is logged by `pass`; the next one tries again.
            let _ = self.run_once().await;
            tokio::select! {
                _ = cancel.cancelled() => return,
                _ = self.state.imports_wake.notified() => {}
                _ = tokio::time::sleep(super::poll::POLL) => {}
            }
        }
    }

    /// One pass: every claimable job to its end. Returns the chunks written.
    pub async fn run_once(&self) -> anyhow::Result<usize> {
        self.run_chunks(usize::MAX).await
    }

    /// A pass that stops after `limit` chunks, keeping its lease as a crashed worker would
    /// (tests use it to stop a job midway).
    pub async fn run_chunks(&self, limit: usize) -> anyhow::Result<usize> {
        pass(&self.state, Worker::Imports, self.steps(limit)).await
    }

    async fn steps(&self, limit: usize) -> anyhow::Result<usize> {
        let mut written = 0;
        while written < limit && !self.state.stopping() {
            let now = self.state.now_ms();
            let Some(mut job) =
                db::imports::claim(&self.state.db.conn, now, now + LEASE_MS).await?
            else {
                break;
            };
            let span = tracing::info_span!(
                "import",
                import_id = %job.id,
                organization_id = %job.organization_id,
            );
            written += self
                .work(&mut job, limit - written)
                .instrument(span)
                .await?;
        }
        Ok(written)
    }

    /// Prepares a chunk of `job` on a task of its own, in the chunk's `import_chunk` span
    /// (inside the job's `import` span), where its write runs too.
    fn prepare(&self, job: &contact_import::Model, seq: i32) -> Ahead {
        let span = tracing::info_span!("import_chunk", import_id = %job.id, chunk = seq);
        let task = tokio::spawn(
            process::prepare(
                self.state.clone(),
                job.id,
                job.organization_id,
                job.user_id,
                seq,
            )
            .instrument(span.clone()),
        );
        Ahead { seq, task, span }
    }

    /// Writes the job's chunks from where it stands, preparing each next chunk while the
    /// previous one is written; ends the job after the last.
    async fn work(&self, job: &mut contact_import::Model, limit: usize) -> anyhow::Result<usize> {
        let conn = &self.state.db.conn;
        let (mut written, mut failures) = (0, 0);
        let mut ahead: Option<Ahead> = None;
        while job.next_chunk < job.chunks {
            if written >= limit {
                return Ok(written);
            }
            if self.state.stopping() {
                db::imports::release(conn, job.id).await?;
                return Ok(written);
            }
            let seq = job.next_chunk;
            let current = match ahead.take() {
                Some(a) if a.seq == seq => a,
                _ => self.prepare(job, seq),
            };
            if seq + 1 < job.chunks {
                ahead = Some(self.prepare(job, seq + 1));
            }
            let lease_until = self.state.now_ms() + LEASE_MS;
            let span = current.span.clone();
            let outcome = async {
                match current.finish().await {
                    Ok(prepared) => process::write(&self.state, job, prepared, lease_until).await,
                    Err(e) => Err(e),
                }
            }
            .instrument(span.clone())
            .await;
            match outcome {
                Ok(true) => {
                    job.next_chunk = seq + 1;
                    written += 1;
                    failures = 0;
                    self.state.health.beat(Worker::Imports, self.state.now_ms());
                }
                // Another worker took the job over and wrote the chunk: it goes on from there.
                Ok(false) => return Ok(written),
                Err(e) => {
                    failures += 1;
                    span.in_scope(|| {
                        tracing::warn!(error = %format!("{e:#}"), "import chunk failed");
                    });
                    if failures >= ATTEMPTS {
                        let message = format!("rows of chunk {seq} could not be written: {e}");
                        let now = self.state.now_ms();
                        db::imports::finish(conn, job.id, ImportStatus::Failed, Some(message), now)
                            .await?;
                        return Ok(written);
                    }
                    // A passing conflict or outage: wait a little before the next attempt.
                    tokio::time::sleep(std::time::Duration::from_millis(500 * u64::from(failures)))
                        .await;
                }
            }
        }
        // Before the job reads as completed, so the lists its client reads next are planned
        // for the organisation's new size; a failure only leaves that to autovacuum.
        if job.created_count + job.updated_count >= ANALYZE_AFTER
            && let Err(e) = db::contacts::analyze(conn).await
        {
            tracing::warn!(error = %e, "statistics not refreshed after the import");
        }
        let now = self.state.now_ms();
        db::imports::finish(conn, job.id, ImportStatus::Completed, None, now).await?;
        tracing::info!(
            rows = job.rows_processed,
            created = job.created_count,
            updated = job.updated_count,
            skipped = job.skipped_count,
            failed = job.failed_count,
            "import completed"
        );
        Ok(written)
    }
}

/// A chunk being prepared ahead of its write; dropping it stops the preparation.
struct Ahead {
    seq: i32,
    task: tokio::task::JoinHandle<anyhow::Result<Prepared>>,
    span: tracing::Span,
}

impl Ahead {
    async fn finish(mut self) -> anyhow::Result<Prepared> {
        (&mut self.task).await?
    }
}

impl Drop for Ahead {
    fn drop(&mut self) {
        self.task.abort();
    }
}
