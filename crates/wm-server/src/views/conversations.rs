//! Conversations (`wm_types::conversations`): a row with its contact and assignee, loaded for
//! the whole batch.

use sea_orm::{ConnectionTrait, DbErr};
use uuid::Uuid;
use wm_types::Timestamp;
use wm_types::contacts::{ChannelRef, UserRef};
use wm_types::conversations::{Conversation, ConversationContact};

use crate::db::entities::{contact, conversation, user};

/// Builds wire conversations, loading contacts and assignees in one query each.
pub async fn load(
    conn: &impl ConnectionTrait,
    rows: Vec<conversation::Model>,
) -> Result<Vec<Conversation>, DbErr> {
    let contact_ids: Vec<Uuid> = rows.iter().map(|c| c.contact_id).collect();
    let user_ids: Vec<Uuid> = rows.iter().filter_map(|c| c.assigned_to_user_id).collect();
    let contacts = crate::db::by_id::<contact::Entity>(conn, contact_ids, |c| c.id).await?;
    let users = crate::db::by_id::<user::Entity>(conn, user_ids, |u| u.id).await?;
    Ok(rows
        .into_iter()
        .map(|c| {
            let k = contacts.get(&c.contact_id);
            Conversation {
                id: c.id,
                organization_id: c.organization_id,
                contact_id: c.contact_id,
                contact: ConversationContact {
                    id: c.contact_id,
                    full_name: k.and_then(|k| k.full_name.clone()),
                    primary_phone: k.and_then(|k| k.primary_phone.clone()),
                    primary_email: k.and_then(|k| k.primary_email.clone()),
                },
                channel_id: c.channel_id,
                channel: ChannelRef {
                    id: c.channel_id,
                    channel_type: c.channel_type,
                },
                external_conversation_id: c.external_conversation_id,
                status: c.status,
                initiated_by: c.initiated_by,
                assigned_to_user_id: c.assigned_to_user_id,
                assigned_to: c
                    .assigned_to_user_id
                    .and_then(|id| users.get(&id))
                    .map(|u| UserRef {
                        id: u.id,
                        full_name: u.full_name.clone(),
                        email: u.email.clone(),
                    }),
                window_expires_at: c.window_closes_at.map(Timestamp::from_millis),
                created_at: Timestamp::from_millis(c.created_at),
                updated_at: Timestamp::from_millis(c.updated_at),
            }
        })
        .collect())
}
