//! The one way tenant rows are looked up: always filtered by organisation.

use sea_orm::{ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, Select};
use uuid::Uuid;

use super::Unique;
use super::entities::*;

/// An entity that belongs to an organisation.
pub trait TenantEntity: EntityTrait {
    /// Its `organization_id` column.
    fn org_column() -> Self::Column;
    /// Its `id` column.
    fn id_column() -> Self::Column;
}

macro_rules! tenant {
    ($($m:ident),+) => {$(
        impl TenantEntity for $m::Entity {
            fn org_column() -> Self::Column { $m::Column::OrganizationId }
            fn id_column() -> Self::Column { $m::Column::Id }
        }
    )+};
}
tenant!(
    user,
    api_key,
    lifecycle_stage,
    channel,
    contact,
    contact_import,
    identity,
    note,
    deal,
    timeline_entry,
    webhook,
    webhook_delivery,
    phone_number,
    template,
    ledger_entry,
    campaign,
    recipient,
    conversation,
    automation,
    automation_run
);

/// Every row of `E` in `org`.
pub fn in_org<E: TenantEntity>(org: Uuid) -> Select<E> {
    E::find().filter(E::org_column().eq(org))
}

/// The row `id` of `E`, only if it is `org`'s.
pub fn find_in_org<E: TenantEntity>(org: Uuid, id: Uuid) -> Select<E> {
    in_org::<E>(org).filter(E::id_column().eq(id))
}

/// The row `id` of `E`, only if it is `org`'s, locked (`FOR UPDATE` on PostgreSQL; SQLite has
/// one writer at a time) until `conn`'s transaction ends: what the caller decides from it
/// stays true until it commits.
pub async fn find_locked<E>(
    conn: &impl ConnectionTrait,
    org: Uuid,
    id: Uuid,
) -> Result<Option<E::Model>, DbErr>
where
    E: TenantEntity,
    E::Model: Send + Sync,
{
    super::for_update(conn.get_database_backend(), find_in_org::<E>(org, id))
        .unique(conn)
        .await
}
