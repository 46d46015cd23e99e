//! `POST /conversations/{id}/read`: the customer's latest message is marked read at the
//! platform (they see blue ticks), then every message of theirs up to it is READ in wm.
//! Marking read twice changes nothing, so the call is made in the request and a platform
//! that cannot take it now answers 502 without changing anything.

use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};
use uuid::Uuid;
use wm_types::messages::{MarkedRead, MessageDirection};

use crate::db::Unique;
use crate::db::entities::{message, phone_number};
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;

/// Marks the conversation's inbound messages read.
pub async fn mark(state: &AppState, org: Uuid, id: Uuid) -> ApiResult<MarkedRead> {
    crate::services::conversations::get(state, org, id).await?;
    let conn = &state.db.conn;
    let latest = message::Entity::find()
        .filter(message::Column::ConversationId.eq(id))
        .filter(message::Column::Direction.eq(MessageDirection::Inbound))
        .order_by_desc(message::Column::CreatedAt)
        .order_by_desc(message::Column::Id)
        .one(conn)
        .await?;
    let Some(latest) = latest else {
        return Ok(MarkedRead {
            message_id: None,
            marked: 0,
        });
    };
    if let (Some(platform_id), Some(number)) = (&latest.platform_message_id, latest.phone_number_id)
    {
        let number = phone_number::Entity::find_by_id(number)
            .unique(conn)
            .await?;
        let Some(sender) = number
            .as_ref()
            .and_then(|n| crate::services::outbound::sender::Sender::of_number(state, n))
        else {
            return Err(ApiError::bad_request(
                "The business number the customer wrote to is gone.",
            ));
        };
        sender
            .provider
            .sender
            .mark_read(sender.account.as_ref(), platform_id)
            .await
            .map_err(|e| {
                ApiError::business(
                    axum::http::StatusCode::BAD_GATEWAY,
                    None,
                    format!("The platform did not take the read mark: {e}"),
                )
            })?;
    }
    let now = state.now_ms();
    let txn = state.db.write().await?;
    let marked = crate::db::messages::mark_read(&*txn, id, latest.created_at, now).await?;
    txn.commit().await?;
    Ok(MarkedRead {
        message_id: Some(latest.id),
        marked,
    })
}
