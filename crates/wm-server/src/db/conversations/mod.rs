//! Conversation queries shared by contacts and the inbox; the inbox list's filters and
//! tabs are in [`list`].

pub mod list;

use std::collections::HashMap;

use sea_orm::{ColumnTrait, ConnectionTrait, DbErr, QueryFilter, QueryOrder};
use uuid::Uuid;
use wm_types::Timestamp;
use wm_types::contacts::LastConversation;

use super::entities::conversation;
use super::tenant::in_org_by;

/// The latest conversation of each contact (for list items' `lastConversation`).
pub async fn latest_of(
    conn: &impl ConnectionTrait,
    org: Uuid,
    contacts: Vec<Uuid>,
) -> Result<HashMap<Uuid, LastConversation>, DbErr> {
    let mut out = HashMap::new();
    if contacts.is_empty() {
        return Ok(out);
    }
    let rows = in_org_by::<conversation::Entity>(conn.get_database_backend(), org)
        .filter(conversation::Column::ContactId.is_in(contacts))
        .order_by_desc(conversation::Column::UpdatedAt)
        .all(conn)
        .await?;
    for c in rows {
        out.entry(c.contact_id).or_insert_with(|| LastConversation {
            id: c.id,
            status: c.status,
            channel_type: c.channel_type,
            updated_at: Timestamp::from_millis(c.updated_at),
        });
    }
    Ok(out)
}
