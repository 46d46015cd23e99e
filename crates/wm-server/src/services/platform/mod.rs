//! The messaging platform's webhooks: kept as received (after the signature check) so the
//! platform gets its 200 at once, then applied — statuses to recipients, inbound messages
//! like the operator's `inbound` route, template status changes to templates (pausing the
//! campaigns whose template became unusable), quality updates to sender numbers.
//!
//! Applying is idempotent: statuses only move recipients forward, inbound message ids are
//! remembered in the very transaction that applies the message, and the rest are plain
//! overwrites. So the platform's redeliveries, and a replay after a crash, change nothing
//! twice; and an event whose application fails is not marked processed but applied again
//! when its claim lapses, so nothing is lost to a passing failure.

use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter};

use crate::db::entities::{platform_event, platform_inbound_seen};

mod apply;
mod batch;
mod keep;
pub mod unapplied;

pub use apply::CLAIM_MS;
pub use batch::{BATCH, apply_pending};
pub use keep::{GroupCommit, keep};

/// Forgets, after the retention period, applied platform webhooks, the inbound ids kept to
/// recognise redeliveries, and statuses whose message never appeared.
pub async fn purge(conn: &impl ConnectionTrait, cutoff: i64) -> Result<(), sea_orm::DbErr> {
    use crate::db::entities::pending_status;
    platform_event::Entity::delete_many()
        .filter(platform_event::Column::ProcessedAt.lt(cutoff))
        .exec(conn)
        .await?;
    platform_inbound_seen::Entity::delete_many()
        .filter(platform_inbound_seen::Column::CreatedAt.lt(cutoff))
        .exec(conn)
        .await?;
    unapplied::purge(conn, cutoff).await?;
    pending_status::Entity::delete_many()
        .filter(pending_status::Column::CreatedAt.lt(cutoff))
        .exec(conn)
        .await?;
    Ok(())
}
