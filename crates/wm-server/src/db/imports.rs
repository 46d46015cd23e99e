//! Contact import jobs and their stored chunks.

use crate::db::Unique;
use sea_orm::sea_query::{Expr, Query};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, Condition, ConnectionTrait, DbErr, EntityTrait, ExprTrait,
    IntoActiveModel, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect,
};
use uuid::Uuid;
use wm_types::imports::ImportStatus;

use super::entities::{contact_import as job, contact_import_chunk as chunk};
use super::tenant::{find_in_org, in_org};

/// Stores one chunk of an upload's rows.
pub async fn insert_chunk(
    conn: &impl ConnectionTrait,
    import: Uuid,
    seq: i32,
    rows: String,
    now: i64,
) -> Result<(), DbErr> {
    chunk::Entity::insert(chunk::ActiveModel {
        import_id: Set(import),
        seq: Set(seq),
        rows: Set(rows),
        created_at: Set(now),
    })
    .exec_without_returning(conn)
    .await?;
    Ok(())
}

/// Deletes an upload's chunks (an upload cut short, or a job that ended).
pub async fn delete_chunks(conn: &impl ConnectionTrait, import: Uuid) -> Result<(), DbErr> {
    chunk::Entity::delete_many()
        .filter(chunk::Column::ImportId.eq(import))
        .exec(conn)
        .await?;
    Ok(())
}

/// Writes a new job.
pub async fn insert(conn: &impl ConnectionTrait, m: job::Model) -> Result<(), DbErr> {
    job::Entity::insert(m.into_active_model())
        .exec_without_returning(conn)
        .await?;
    Ok(())
}

/// One job of the organisation.
pub async fn find(
    conn: &impl ConnectionTrait,
    org: Uuid,
    id: Uuid,
) -> Result<Option<job::Model>, DbErr> {
    find_in_org::<job::Entity>(org, id).unique(conn).await
}

/// One page of the organisation's jobs, newest first, and the total.
pub async fn page(
    conn: &impl ConnectionTrait,
    org: Uuid,
    page: u64,
    page_size: u64,
) -> Result<(Vec<job::Model>, u64), DbErr> {
    let q = in_org::<job::Entity>(org);
    let total = q.clone().count(conn).await?;
    let rows = q
        .order_by_desc(job::Column::CreatedAt)
        .order_by_desc(job::Column::Id)
        .offset(super::offset(page, page_size))
        .limit(page_size)
        .all(conn)
        .await?;
    Ok((rows, total))
}

fn claimable(now: i64) -> Condition {
    Condition::all()
        .add(job::Column::Status.is_in([ImportStatus::Queued, ImportStatus::Running]))
        .add(
            Condition::any()
                .add(job::Column::LeaseUntil.is_null())
                .add(job::Column::LeaseUntil.lt(now)),
        )
}

/// Takes the oldest job no live worker holds, until `lease_until`: a queued job, or one
/// whose worker stopped (its lease ran out). A conditional update, so two replicas never
/// both take it.
pub async fn claim(
    conn: &impl ConnectionTrait,
    now: i64,
    lease_until: i64,
) -> Result<Option<job::Model>, DbErr> {
    let Some(candidate) = job::Entity::find()
        .filter(claimable(now))
        .order_by_asc(job::Column::CreatedAt)
        .one(conn)
        .await?
    else {
        return Ok(None);
    };
    let taken = job::Entity::update_many()
        .col_expr(job::Column::LeaseUntil, Expr::val(lease_until))
        .col_expr(job::Column::Status, Expr::val(ImportStatus::Running))
        .col_expr(
            job::Column::StartedAt,
            Expr::val(candidate.started_at.unwrap_or(now)),
        )
        .filter(job::Column::Id.eq(candidate.id))
        .filter(claimable(now))
        .exec(conn)
        .await?;
    if taken.rows_affected == 0 {
        return Ok(None);
    }
    job::Entity::find_by_id(candidate.id).unique(conn).await
}

/// A stored chunk of a job.
pub async fn chunk(
    conn: &impl ConnectionTrait,
    import: Uuid,
    seq: i32,
) -> Result<Option<chunk::Model>, DbErr> {
    chunk::Entity::find_by_id((import, seq)).unique(conn).await
}

/// Records a job's progress after the chunk `done` (its rows were written in the same
/// transaction) and drops that chunk. `false` when the job no longer expects that chunk
/// (another worker took the job over and wrote it): the caller then rolls back.
pub async fn advance(
    conn: &impl ConnectionTrait,
    m: &job::Model,
    done: i32,
) -> Result<bool, DbErr> {
    let r = job::Entity::update_many()
        .col_expr(job::Column::NextChunk, Expr::val(done + 1))
        .col_expr(job::Column::RowsProcessed, Expr::val(m.rows_processed))
        .col_expr(job::Column::CreatedCount, Expr::val(m.created_count))
        .col_expr(job::Column::UpdatedCount, Expr::val(m.updated_count))
        .col_expr(job::Column::SkippedCount, Expr::val(m.skipped_count))
        .col_expr(job::Column::FailedCount, Expr::val(m.failed_count))
        .col_expr(job::Column::Errors, Expr::val(m.errors.clone()))
        .col_expr(job::Column::LeaseUntil, Expr::val(m.lease_until))
        .filter(job::Column::Id.eq(m.id))
        .filter(job::Column::NextChunk.eq(done))
        .exec(conn)
        .await?;
    if r.rows_affected == 0 {
        return Ok(false);
    }
    chunk::Entity::delete_by_id((m.id, done)).exec(conn).await?;
    Ok(true)
}

/// Ends a job: `COMPLETED`, or `FAILED` with the reason.
pub async fn finish(
    conn: &impl ConnectionTrait,
    id: Uuid,
    status: ImportStatus,
    error_message: Option<String>,
    now: i64,
) -> Result<(), DbErr> {
    job::Entity::update_many()
        .col_expr(job::Column::Status, Expr::val(status))
        .col_expr(job::Column::ErrorMessage, Expr::val(error_message))
        .col_expr(job::Column::FinishedAt, Expr::val(now))
        .col_expr(job::Column::LeaseUntil, Expr::val(None::<i64>))
        .filter(job::Column::Id.eq(id))
        .exec(conn)
        .await?;
    delete_chunks(conn, id).await
}

/// Hands a job back at shutdown, so another replica resumes it at once.
pub async fn release(conn: &impl ConnectionTrait, id: Uuid) -> Result<(), DbErr> {
    job::Entity::update_many()
        .col_expr(job::Column::LeaseUntil, Expr::val(None::<i64>))
        .filter(job::Column::Id.eq(id))
        .exec(conn)
        .await?;
    Ok(())
}

/// Deletes the chunks of uploads that never became a job (cut short) and were stored
/// before `before`.
pub async fn purge_orphan_chunks(conn: &impl ConnectionTrait, before: i64) -> Result<u64, DbErr> {
    let jobs = Query::select()
        .column(job::Column::Id)
        .from(job::Entity)
        .to_owned();
    let r = chunk::Entity::delete_many()
        .filter(chunk::Column::CreatedAt.lt(before))
        .filter(Expr::col(chunk::Column::ImportId).not_in_subquery(jobs))
        .exec(conn)
        .await?;
    Ok(r.rows_affected)
}
