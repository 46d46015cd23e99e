//! The request with an `Idempotency-Key` that a task is serving, and how its effects and
//! its answer commit together (zero2prod's `save_response` in the handler's transaction).
//!
//! Every write transaction of a keyed request notes on the key, just before it commits,
//! that the request's effects are in ([`Keyed`] as the transaction's
//! [`BeforeCommit`](crate::db::BeforeCommit)). A route whose answer is known before its
//! transaction commits also [`seal`]s it there: the key's answer commits with the work,
//! and nothing is written after. So a process killed between the commit and the answer
//! leaves a key that answers the retry with the first attempt's answer (sealed), or says
//! the first attempt completed (`IDEMPOTENCY_KEY_ANSWER_LOST`) — never runs it again.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use axum::http::StatusCode;
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, DbErr, EntityTrait, QueryFilter};
use uuid::Uuid;

use super::fingerprint::Fingerprint;
use crate::db::WriteTxn;
use crate::db::entities::idempotency_key as row;

/// How long a request whose effects committed holds its key to answer (each commit renews
/// it): a handler answers within moments of its last commit, so a key held longer than
/// this after one belongs to a process that died, and a retry learns the first attempt
/// completed (`IDEMPOTENCY_KEY_ANSWER_LOST`) instead of waiting out the whole lease.
pub const COMMITTED_LEASE_MS: i64 = 5_000;

/// The request a task serves, holding the key `key` of `scope` since `taken_at`.
pub struct Keyed {
    pub(super) scope: Uuid,
    pub(super) key: String,
    /// When the key was taken (its row's `created_at`): a key taken over by another
    /// request since is not this request's any more.
    pub(super) taken_at: i64,
    pub(super) print: Arc<Mutex<Fingerprint>>,
    /// The answer committed with the work.
    pub(super) sealed: AtomicBool,
    /// Some effect of the request committed.
    pub(super) committed: AtomicBool,
    pub(super) clock: Arc<dyn wm_core::time::Clock>,
}

tokio::task_local! {
    pub(super) static KEYED: Arc<Keyed>;
}

/// The keyed request the current task serves, if any: a route that hands its write to
/// another task (a group commit) takes it along to [`Keyed::seal`] there.
pub fn current() -> Option<Arc<Keyed>> {
    KEYED.try_with(Arc::clone).ok()
}

/// Keeps `answer` (sent as JSON with `status`) as the current request's answer, in `txn`:
/// it commits with the work. Nothing when the request has no key.
pub async fn seal<T: serde::Serialize>(
    txn: &WriteTxn,
    status: StatusCode,
    answer: &T,
) -> Result<(), DbErr> {
    match current() {
        Some(k) => k.seal(txn, status, answer).await,
        None => Ok(()),
    }
}

impl Keyed {
    /// The key of this request, still its own (not taken over), in `txn`.
    fn mine(&self) -> sea_orm::UpdateMany<row::Entity> {
        row::Entity::update_many()
            .filter(row::Column::Scope.eq(self.scope))
            .filter(row::Column::IdempotencyKey.eq(self.key.clone()))
            .filter(row::Column::CreatedAt.eq(self.taken_at))
            .filter(row::Column::StatusCode.is_null())
    }

    /// [`seal`] for this request (from whichever task writes its effects).
    pub async fn seal<T: serde::Serialize>(
        self: &Arc<Self>,
        txn: &WriteTxn,
        status: StatusCode,
        answer: &T,
    ) -> Result<(), DbErr> {
        let digest = self
            .print
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .digest();
        // A body not read to its end cannot be compared with a retry's: the answer is kept
        // the usual way, after the handler.
        let Some(digest) = digest else {
            return Ok(());
        };
        let body = serde_json::to_string(answer).map_err(|e| DbErr::Custom(e.to_string()))?;
        let n = self
            .mine()
            .col_expr(row::Column::Fingerprint, Expr::val(digest))
            .col_expr(
                row::Column::StatusCode,
                Expr::val(i32::from(status.as_u16())),
            )
            .col_expr(
                row::Column::ContentType,
                Expr::val("application/json".to_owned()),
            )
            .col_expr(row::Column::Body, Expr::val(body))
            .col_expr(row::Column::LockedUntil, Expr::val(Option::<i64>::None))
            .exec(&**txn)
            .await?
            .rows_affected;
        if n == 1 {
            let me = Arc::clone(self);
            txn.after_commit(move || me.sealed.store(true, Ordering::SeqCst));
        }
        Ok(())
    }

    /// Whether the answer committed with the work.
    pub(super) fn is_sealed(&self) -> bool {
        self.sealed.load(Ordering::SeqCst)
    }

    /// Whether an effect of the request committed.
    pub(super) fn has_committed(&self) -> bool {
        self.committed.load(Ordering::SeqCst)
    }
}

/// Every write transaction of a keyed request notes on the key that the request's effects
/// are in (unless its answer was sealed in it already).
pub(super) struct Marker(pub(super) Arc<Keyed>);

#[async_trait::async_trait]
impl crate::db::BeforeCommit for Marker {
    async fn before_commit(&self, txn: &WriteTxn) -> Result<(), DbErr> {
        let now = self.0.clock.now().timestamp_millis();
        self.0
            .mine()
            .col_expr(row::Column::CommittedAt, Expr::val(now))
            .col_expr(
                row::Column::LockedUntil,
                Expr::val(now + COMMITTED_LEASE_MS),
            )
            .exec(&**txn)
            .await?;
        let me = Arc::clone(&self.0);
        txn.after_commit(move || me.committed.store(true, Ordering::SeqCst));
        Ok(())
    }
}
