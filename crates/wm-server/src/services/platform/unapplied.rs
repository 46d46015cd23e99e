//! What wm could not apply of a platform's webhooks: a message that names no sender, a
//! status or a field it does not read, an event for an account that is no organisation's.
//! Nothing vanishes behind the 200 the platform got: each part is logged at WARN with its
//! reason, counted (`wm_platform_unapplied_total{provider, reason}`) and kept
//! (`platform_unapplied`, 7 days) for the operator (`GET /admin/platform/unapplied`).

use sea_orm::{ActiveValue::Set, ConnectionTrait, DbErr, EntityTrait, QueryOrder};
use uuid::Uuid;
use wm_core::platform::Unapplied;

use crate::db::entities::platform_unapplied as row;

/// Why an event whose account is no organisation's is not applied.
pub const UNKNOWN_ACCOUNT: &str = "account not connected";

/// Logs, counts and keeps `u` (from the kept webhook `event_id` of `provider`), in the
/// caller's transaction.
pub async fn record(
    conn: &impl ConnectionTrait,
    provider: &str,
    event_id: Option<Uuid>,
    u: &Unapplied,
    now: i64,
) -> Result<(), DbErr> {
    tracing::warn!(
        provider,
        reason = u.reason,
        account = u.account.as_deref().unwrap_or(""),
        event = %event_id.map(|e| e.to_string()).unwrap_or_default(),
        "a part of a platform webhook was not applied"
    );
    crate::observe::metrics::platform_unapplied(provider, u.reason);
    row::Entity::insert(row::ActiveModel {
        id: Set(Uuid::now_v7()),
        provider: Set(provider.to_owned()),
        event_id: Set(event_id),
        account: Set(u.account.clone()),
        reason: Set(u.reason.to_owned()),
        part: Set(u.part.clone()),
        created_at: Set(now),
    })
    .exec_without_returning(conn)
    .await?;
    Ok(())
}

/// The newest kept parts, at most `limit`.
pub async fn newest(conn: &impl ConnectionTrait, limit: u64) -> Result<Vec<row::Model>, DbErr> {
    use sea_orm::QuerySelect;
    row::Entity::find()
        .order_by_desc(row::Column::CreatedAt)
        .order_by_desc(row::Column::Id)
        .limit(limit)
        .all(conn)
        .await
}

/// Forgets the parts kept before `cutoff`.
pub async fn purge(conn: &impl ConnectionTrait, cutoff: i64) -> Result<(), DbErr> {
    use sea_orm::{ColumnTrait, QueryFilter};
    row::Entity::delete_many()
        .filter(row::Column::CreatedAt.lt(cutoff))
        .exec(conn)
        .await?;
    Ok(())
}
