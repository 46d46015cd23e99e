//! Contact notes.

use sea_orm::{
    ColumnTrait, ConnectionTrait, DbErr, EntityTrait, IntoActiveModel, PaginatorTrait, QueryFilter,
    QueryOrder, QuerySelect,
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
    let mut notes = insert_many(conn, org, author, &[(contact, body)], now_ms).await?;
    notes
        .pop()
        .ok_or_else(|| DbErr::Custom("no note was written".to_owned()))
}

/// Inserts one note by `author` per `(contact, body)`, a few hundred per statement.
pub async fn insert_many(
    conn: &impl ConnectionTrait,
    org: Uuid,
    author: Uuid,
    notes: &[(Uuid, &str)],
    now_ms: i64,
) -> Result<Vec<note::Model>, DbErr> {
    let models: Vec<note::Model> = notes
        .iter()
        .map(|(contact, body)| note::Model {
            id: Uuid::now_v7(),
            organization_id: org,
            contact_id: *contact,
            author_id: author,
            body: (*body).to_owned(),
            created_at: now_ms,
        })
        .collect();
    for batch in models.chunks(super::INSERT_BATCH) {
        note::Entity::insert_many(batch.iter().map(|m| m.clone().into_active_model()))
            .exec_without_returning(conn)
            .await?;
    }
    Ok(models)
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
