//! Contact notes.

use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, PaginatorTrait,
    QueryFilter, QueryOrder, QuerySelect,
};
use uuid::Uuid;

use super::entities::note;
use super::tenant::in_org;

/// Inserts a note.
pub async fn insert(
    conn: &impl ConnectionTrait,
    org: Uuid,
    contact: Uuid,
    author: Uuid,
    body: &str,
    now_ms: i64,
) -> Result<note::Model, DbErr> {
    let model = note::Model {
        id: Uuid::now_v7(),
        organization_id: org,
        contact_id: contact,
        author_id: author,
        body: body.to_owned(),
        created_at: now_ms,
    };
    note::Entity::insert(note::ActiveModel {
        id: Set(model.id),
        organization_id: Set(org),
        contact_id: Set(contact),
        author_id: Set(author),
        body: Set(model.body.clone()),
        created_at: Set(now_ms),
    })
    .exec_without_returning(conn)
    .await?;
    Ok(model)
}

/// One page of a contact's notes, newest first, and the total.
pub async fn page(
    conn: &impl ConnectionTrait,
    org: Uuid,
    contact: Uuid,
    page: u64,
    page_size: u64,
) -> Result<(Vec<note::Model>, u64), DbErr> {
    let q = in_org::<note::Entity>(org).filter(note::Column::ContactId.eq(contact));
    let total = q.clone().count(conn).await?;
    let rows = q
        .order_by_desc(note::Column::CreatedAt)
        .order_by_desc(note::Column::Id)
        .offset(crate::db::offset(page, page_size))
        .limit(page_size)
        .all(conn)
        .await?;
    Ok((rows, total))
}
