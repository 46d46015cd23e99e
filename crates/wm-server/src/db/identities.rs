//! Channel identities of contacts.

use sea_orm::sea_query::OnConflict;
use sea_orm::{
    ColumnTrait, ConnectionTrait, DbErr, EntityTrait, IntoActiveModel, QueryFilter, QueryOrder,
};
use uuid::Uuid;
use wm_types::contacts::IdentityRef;
use wm_types::enums::ChannelType;

use super::entities::contact;
use super::entities::identity::{self, Model};
use super::tenant::in_org;

/// The identity `(type, externalId)` in the organisation, whoever holds it.
pub async fn find(
    conn: &impl ConnectionTrait,
    org: Uuid,
    kind: ChannelType,
    external_id: &str,
) -> Result<Option<identity::Model>, DbErr> {
    in_org::<identity::Entity>(org)
        .filter(identity::Column::ChannelType.eq(kind))
        .filter(identity::Column::ExternalId.eq(external_id))
        .one(conn)
        .await
}

/// The organisation's identities of `kind` among `external_ids` (joined as one JSON
/// parameter on PostgreSQL, like [`super::contacts::with_phones`]).
pub async fn with_external_ids(
    conn: &impl ConnectionTrait,
    org: Uuid,
    kind: ChannelType,
    external_ids: &[&str],
) -> Result<Vec<identity::Model>, DbErr> {
    if external_ids.is_empty() {
        return Ok(Vec::new());
    }
    if conn.get_database_backend() == sea_orm::DbBackend::Postgres {
        let list = serde_json::to_string(external_ids).map_err(|e| DbErr::Custom(e.to_string()))?;
        return identity::Entity::find()
            .from_raw_sql(sea_orm::Statement::from_sql_and_values(
                sea_orm::DbBackend::Postgres,
                "SELECT i.* FROM contact_identities i \
                 JOIN json_array_elements_text($3::json) AS p(ext) ON i.external_id = p.ext \
                 WHERE i.organization_id = $1 AND i.channel_type = $2",
                [org.into(), kind.as_str().into(), list.into()],
            ))
            .all(conn)
            .await;
    }
    in_org::<identity::Entity>(org)
        .filter(identity::Column::ChannelType.eq(kind))
        .filter(identity::Column::ExternalId.is_in(external_ids.iter().copied()))
        .all(conn)
        .await
}

/// What a platform says of a person beside their id: the username they show, the parent id
/// of a managed business's portfolios.
#[derive(Debug, Clone, Copy, Default)]
pub struct Shown<'a> {
    /// Their username.
    pub username: Option<&'a str>,
    /// Their parent id.
    pub parent_id: Option<&'a str>,
}

/// A new identity of `contact` (a fresh id, in the contact's organisation), with the copy of
/// the contact's creation time, stage and consent its row keeps.
fn row(
    contact: &super::entities::contact::Model,
    channel: Uuid,
    kind: ChannelType,
    external_id: &str,
    now_ms: i64,
) -> Model {
    let mirror = super::contacts::Mirror::of(contact);
    Model {
        id: Uuid::now_v7(),
        organization_id: contact.organization_id,
        contact_id: contact.id,
        channel_id: channel,
        channel_type: kind,
        external_id: external_id.to_owned(),
        created_at: now_ms,
        contact_created_at: mirror.created_at,
        contact_stage_id: mirror.stage,
        contact_consent: mirror.consent,
        username: None,
        parent_id: None,
        profile_due_at: None,
        profile_checked_at: None,
        profile_attempts: 0,
    }
}

/// Inserts an identity (the caller mirrors it on the contact row).
#[allow(clippy::too_many_arguments)]
pub async fn insert(
    conn: &impl ConnectionTrait,
    id: Uuid,
    org: Uuid,
    contact: &super::entities::contact::Model,
    channel: Uuid,
    kind: ChannelType,
    external_id: &str,
    now_ms: i64,
) -> Result<identity::Model, DbErr> {
    let model = Model {
        id,
        organization_id: org,
        ..row(contact, channel, kind, external_id, now_ms)
    };
    insert_many(conn, vec![model.clone()]).await?;
    Ok(model)
}

/// Inserts an identity unless the organisation has it already (whoever holds it), without
/// failing the caller's transaction; `true` when it was inserted (the caller mirrors it).
pub async fn insert_if_absent(
    conn: &impl ConnectionTrait,
    contact: &super::entities::contact::Model,
    channel: Uuid,
    kind: ChannelType,
    external_id: &str,
    shown: Shown<'_>,
    now_ms: i64,
) -> Result<bool, DbErr> {
    let row = Model {
        username: shown.username.map(str::to_owned),
        parent_id: shown.parent_id.map(str::to_owned),
        ..row(contact, channel, kind, external_id, now_ms)
    };
    let inserted = identity::Entity::insert(row.into_active_model())
        .on_conflict(
            OnConflict::columns([
                identity::Column::OrganizationId,
                identity::Column::ChannelType,
                identity::Column::ExternalId,
            ])
            .do_nothing()
            .to_owned(),
        )
        .exec_without_returning(conn)
        .await?;
    Ok(inserted == 1)
}

/// Sets what the platform shows of the person beside an identity (a username that
/// changed, a parent id); `true` when it changed (the caller mirrors it).
pub async fn set_shown(
    conn: &impl ConnectionTrait,
    id: Uuid,
    shown: Shown<'_>,
) -> Result<bool, DbErr> {
    use sea_orm::sea_query::{Expr, ExprTrait};
    let mut q = identity::Entity::update_many().filter(identity::Column::Id.eq(id));
    let mut differs = sea_orm::Condition::any();
    if let Some(u) = shown.username {
        q = q.col_expr(identity::Column::Username, Expr::val(u));
        differs = differs.add(
            Expr::col(identity::Column::Username)
                .is_null()
                .or(Expr::col(identity::Column::Username).ne(u)),
        );
    }
    if let Some(p) = shown.parent_id {
        q = q.col_expr(identity::Column::ParentId, Expr::val(p));
        differs = differs.add(
            Expr::col(identity::Column::ParentId)
                .is_null()
                .or(Expr::col(identity::Column::ParentId).ne(p)),
        );
    }
    if shown.username.is_none() && shown.parent_id.is_none() {
        return Ok(false);
    }
    Ok(q.filter(differs).exec(conn).await?.rows_affected == 1)
}

/// Moves the identity `(kind, from)` of the organisation to the id `to` (a platform id the
/// person was given in its place), with a new parent id when given; the contact it belongs
/// to, or `None` when nobody holds `from` (the caller mirrors it).
pub async fn rename(
    conn: &impl ConnectionTrait,
    org: Uuid,
    kind: ChannelType,
    from: &str,
    to: &str,
    parent_id: Option<&str>,
) -> Result<Option<Uuid>, DbErr> {
    use sea_orm::sea_query::Expr;
    let Some(held) = find(conn, org, kind, from).await? else {
        return Ok(None);
    };
    if find(conn, org, kind, to).await?.is_some() {
        // Renamed already (a redelivery): the old id goes.
        identity::Entity::delete_by_id(held.id).exec(conn).await?;
        return Ok(Some(held.contact_id));
    }
    let mut q = identity::Entity::update_many()
        .col_expr(identity::Column::ExternalId, Expr::val(to))
        .filter(identity::Column::Id.eq(held.id));
    if let Some(p) = parent_id {
        q = q.col_expr(identity::Column::ParentId, Expr::val(p));
    }
    q.exec(conn).await?;
    Ok(Some(held.contact_id))
}

/// A contact's identities of `kind` whose ids satisfy `which` (its business-scoped user
/// ids, say).
pub async fn of_contact_where(
    conn: &impl ConnectionTrait,
    contact: Uuid,
    kind: ChannelType,
    which: impl Fn(&str) -> bool,
) -> Result<Vec<identity::Model>, DbErr> {
    Ok(identity::Entity::find()
        .filter(identity::Column::ContactId.eq(contact))
        .filter(identity::Column::ChannelType.eq(kind))
        .all(conn)
        .await?
        .into_iter()
        .filter(|i| which(&i.external_id))
        .collect())
}

/// Deletes a contact's identities of `kind` among `external_ids` (the caller mirrors it).
pub async fn delete_of_contact(
    conn: &impl ConnectionTrait,
    contact: Uuid,
    kind: ChannelType,
    external_ids: &[String],
) -> Result<u64, DbErr> {
    Ok(identity::Entity::delete_many()
        .filter(identity::Column::ContactId.eq(contact))
        .filter(identity::Column::ChannelType.eq(kind))
        .filter(identity::Column::ExternalId.is_in(external_ids.iter().map(String::as_str)))
        .exec(conn)
        .await?
        .rows_affected)
}

/// Inserts identities (the callers mirror them on the contact rows), a few hundred per
/// statement.
pub async fn insert_many(
    conn: &impl ConnectionTrait,
    rows: Vec<identity::Model>,
) -> Result<(), DbErr> {
    let rows: Vec<identity::ActiveModel> =
        rows.into_iter().map(|m| m.into_active_model()).collect();
    super::insert_chunked(conn, rows).await
}

/// The identities of several contacts, oldest first.
pub async fn of_contacts(
    conn: &impl ConnectionTrait,
    org: Uuid,
    contacts: Vec<Uuid>,
) -> Result<Vec<identity::Model>, DbErr> {
    if contacts.is_empty() {
        return Ok(Vec::new());
    }
    in_org::<identity::Entity>(org)
        .filter(identity::Column::ContactId.is_in(contacts))
        .order_by_asc(identity::Column::CreatedAt)
        .order_by_asc(identity::Column::Id)
        .all(conn)
        .await
}

/// Rewrites the identities mirrored on a contact row from `contact_identities` (after
/// any change of them).
pub async fn refresh_mirror(
    conn: &impl ConnectionTrait,
    org: Uuid,
    contact: Uuid,
) -> Result<(), DbErr> {
    use sea_orm::sea_query::Expr;
    let list: Vec<IdentityRef> = of_contacts(conn, org, vec![contact])
        .await?
        .into_iter()
        .map(IdentityRef::from)
        .collect();
    contact::Entity::update_many()
        .col_expr(
            contact::Column::Identities,
            Expr::val(super::contacts::identities_json(&list)),
        )
        .filter(contact::Column::Id.eq(contact))
        .exec(conn)
        .await?;
    Ok(())
}

/// How long a profile read stays fresh: a person who writes after it is read again (an
/// Instagram username changes).
pub const PROFILE_FRESH_MS: i64 = 7 * 24 * 3_600_000;

/// Marks the identity `(kind, external_id)` of `org` due for a profile read, unless one is
/// due already or was read within [`PROFILE_FRESH_MS`].
pub async fn profile_due(
    conn: &impl ConnectionTrait,
    org: Uuid,
    kind: ChannelType,
    external_id: &str,
    now: i64,
) -> Result<(), DbErr> {
    use sea_orm::Condition;
    use sea_orm::sea_query::Expr;
    identity::Entity::update_many()
        .col_expr(identity::Column::ProfileDueAt, Expr::val(now))
        .col_expr(identity::Column::ProfileAttempts, Expr::val(0))
        .filter(identity::Column::OrganizationId.eq(org))
        .filter(identity::Column::ChannelType.eq(kind))
        .filter(identity::Column::ExternalId.eq(external_id))
        .filter(identity::Column::ProfileDueAt.is_null())
        .filter(
            Condition::any()
                .add(identity::Column::ProfileCheckedAt.is_null())
                .add(identity::Column::ProfileCheckedAt.lt(now - PROFILE_FRESH_MS)),
        )
        .exec(conn)
        .await?;
    Ok(())
}
