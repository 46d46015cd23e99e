//! Keeping verified webhook bodies with group commit ([`crate::db::group`]): the platform
//! may post thousands a second, and one write transaction each would have them queue for
//! the database's one writer. No request is answered before its body is committed, so
//! nothing answered 200 is ever lost.

use sea_orm::ActiveValue::Set;
use sea_orm::EntityTrait;
use uuid::Uuid;

use crate::db::entities::platform_event;
use crate::db::group::Group;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;

/// The intake's queue of bodies to keep (one per process).
pub type GroupCommit = Group<platform_event::ActiveModel, ()>;

/// Keeps a verified webhook body; returns its id once it is committed.
pub async fn keep(state: &AppState, provider: &str, payload: String) -> ApiResult<Uuid> {
    let id = Uuid::now_v7();
    let row = platform_event::ActiveModel {
        id: Set(id),
        provider: Set(provider.to_owned()),
        payload: Set(payload),
        received_at: Set(state.now_ms()),
        claimed_until: Set(None),
        processed_at: Set(None),
    };
    let st = state.clone();
    state
        .singleton(|_| GroupCommit::default())
        .run(row, move |rows| write(st.clone(), rows))
        .await
        .map(|()| id)
        .map_err(|e| ApiError::Internal(anyhow::anyhow!("the webhook was not kept: {e}")))
}

/// Writes the bodies of one turn in one transaction.
async fn write(state: AppState, rows: Vec<platform_event::ActiveModel>) -> Result<Vec<()>, String> {
    let n = rows.len();
    let written = async {
        let txn = state.db.write().await?;
        platform_event::Entity::insert_many(rows)
            .exec_without_returning(&*txn)
            .await?;
        txn.commit().await
    };
    written.await.map_err(|e| e.to_string())?;
    Ok(vec![(); n])
}
