//! The one way tenant rows are looked up: always filtered by organisation.

use sea_orm::sea_query::{Expr, SimpleExpr};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DbBackend, DbErr, EntityTrait, ExprTrait, QueryFilter, Select,
};
use uuid::Uuid;

use super::entities::*;
use super::unique::Unique;

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
    message,
    media,
    automation,
    automation_run
);

/// Every row of `E` in `org`.
pub fn in_org<E: TenantEntity>(org: Uuid) -> Select<E> {
    E::find().filter(E::org_column().eq(org))
}

/// The organisation check of `E`'s rows as a guard, not a way in: for rows reached through a
/// narrower key (a contact's, a search's). SQLite keeps no statistics that tell it an
/// organisation holds every row, and would walk an organisation-wide index instead of the
/// narrower one (a contact's conversations read through all of the organisation's); the
/// unary `+` keeps the column out of its index choice. PostgreSQL plans by its statistics.
pub fn org_guard<E: TenantEntity>(backend: DbBackend, org: Uuid) -> SimpleExpr {
    if backend == DbBackend::Sqlite {
        let table = E::default().table_name().to_owned();
        Expr::cust_with_values(format!("+\"{table}\".\"organization_id\" = ?"), [org])
    } else {
        Expr::col((E::default(), E::org_column())).eq(org)
    }
}

/// The rows of `E` in `org` that the caller's narrower filter finds ([`org_guard`]).
pub fn in_org_by<E: TenantEntity>(backend: DbBackend, org: Uuid) -> Select<E> {
    E::find().filter(org_guard::<E>(backend, org))
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
    super::locks::for_update(conn.get_database_backend(), find_in_org::<E>(org, id))
        .unique(conn)
        .await
}
