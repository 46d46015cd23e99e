//! Which platform messages were applied already: a platform redelivers a message until it
//! is acknowledged (and at times after), so its id is remembered in the transaction that
//! applies it. Ids are unique per platform and account only (a Messenger `mid` is a Page's,
//! an SMS gateway's a number's), so the key is (provider, account, id).

use sea_orm::sea_query::OnConflict;
use sea_orm::{ActiveValue::Set, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter};

use crate::db::entities::platform_inbound_seen as seen;

/// A platform message, as the seen list keys it.
#[derive(Debug, Clone, Copy)]
pub struct Key<'a> {
    /// The provider that delivered it.
    pub provider: &'a str,
    /// The business account it came to (the platform's id of it).
    pub account: &'a str,
    /// The platform's id of the message.
    pub message_id: &'a str,
}

impl Key<'_> {
    fn stored(&self) -> String {
        format!("{}/{}/{}", self.provider, self.account, self.message_id)
    }
}

/// Whether the message was applied already (under its key, or under the bare id that the
/// list kept before keys named their platform and account: such a key is forgotten with
/// the others after the retention period).
pub async fn was_seen(conn: &impl ConnectionTrait, key: Key<'_>) -> Result<bool, DbErr> {
    let found = seen::Entity::find()
        .filter(seen::Column::MessageId.is_in([key.stored(), key.message_id.to_owned()]))
        .one(conn)
        .await?;
    Ok(found.is_some())
}

/// Remembers the message in the caller's transaction; `false` when it was there (the caller
/// asked [`was_seen`] before, for the keys of old).
pub async fn first_sight(
    conn: &impl ConnectionTrait,
    key: Key<'_>,
    now: i64,
) -> Result<bool, DbErr> {
    let n = seen::Entity::insert(seen::ActiveModel {
        message_id: Set(key.stored()),
        created_at: Set(now),
    })
    .on_conflict(
        OnConflict::column(seen::Column::MessageId)
            .do_nothing()
            .to_owned(),
    )
    .exec_without_returning(conn)
    .await?;
    Ok(n == 1)
}
