//! Keeping verified webhook bodies with group commit: the platform may post thousands a
//! second, and one write transaction each would have them queue for the database's one
//! writer. A body is queued; whoever then holds the writer's turn writes every body queued
//! so far in one transaction and tells each request its fate. No request is answered
//! before its body is committed, so nothing answered 200 is ever lost; there is no
//! background task, so an embedding app that mounts the routes without the workers keeps
//! its webhooks all the same.

use std::sync::Mutex;

use sea_orm::ActiveValue::Set;
use sea_orm::EntityTrait;
use tokio::sync::oneshot;
use uuid::Uuid;

use crate::db::entities::platform_event;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;

/// How many bodies one transaction writes at most (the rest wait for the next turn).
const GROUP: usize = 500;

/// A body waiting to be written, and whom to tell.
struct Queued {
    row: platform_event::ActiveModel,
    done: oneshot::Sender<Result<(), String>>,
}

/// The intake's queue and the writer's turn (one per process).
#[derive(Default)]
pub struct GroupCommit {
    queue: Mutex<Vec<Queued>>,
    turn: tokio::sync::Mutex<()>,
}

impl GroupCommit {
    fn push(&self, q: Queued) {
        self.queue
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(q);
    }

    fn take(&self) -> Vec<Queued> {
        let mut queue = self
            .queue
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let n = queue.len().min(GROUP);
        queue.drain(..n).collect()
    }
}

/// Keeps a verified webhook body; returns its id once it is committed.
pub async fn keep(state: &AppState, provider: &str, payload: String) -> ApiResult<Uuid> {
    let id = Uuid::now_v7();
    let (done, mut told) = oneshot::channel();
    let group = &state.intake_commit;
    group.push(Queued {
        row: platform_event::ActiveModel {
            id: Set(id),
            provider: Set(provider.to_owned()),
            payload: Set(payload),
            received_at: Set(state.now_ms()),
            claimed_until: Set(None),
            processed_at: Set(None),
        },
        done,
    });
    loop {
        let turn = group.turn.lock().await;
        // Written by the turn before this one?
        match told.try_recv() {
            Ok(result) => {
                return result.map(|()| id).map_err(|e| {
                    ApiError::Internal(anyhow::anyhow!("the webhook was not kept: {e}"))
                });
            }
            Err(oneshot::error::TryRecvError::Closed) => {
                return Err(ApiError::Internal(anyhow::anyhow!(
                    "the webhook was not kept"
                )));
            }
            Err(oneshot::error::TryRecvError::Empty) => {}
        }
        // In a task of its own: a request that goes away mid-write (its caller hung up) does
        // not abandon the others' bodies.
        let _ = tokio::spawn(write(state.clone(), group.take())).await;
        drop(turn);
    }
}

/// Writes `queued` in one transaction and tells each its fate.
async fn write(state: AppState, queued: Vec<Queued>) {
    if queued.is_empty() {
        return;
    }
    let (rows, waiting): (Vec<_>, Vec<_>) = queued.into_iter().map(|q| (q.row, q.done)).unzip();
    let result = async {
        let txn = state.db.write().await?;
        platform_event::Entity::insert_many(rows)
            .exec_without_returning(&*txn)
            .await?;
        txn.commit().await
    }
    .await
    .map_err(|e| e.to_string());
    for done in waiting {
        let _ = done.send(result.clone());
    }
}
