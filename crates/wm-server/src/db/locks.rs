//! Row locks that PostgreSQL needs and SQLite, with one writer at a time, does not.

use sea_orm::DbBackend;

/// `FOR UPDATE` on PostgreSQL, so the rows read stay as read until the caller's transaction
/// ends; SQLite has one writer at a time anyway.
pub fn for_update<S: sea_orm::QuerySelect>(backend: DbBackend, q: S) -> S {
    if backend == DbBackend::Postgres {
        q.lock_exclusive()
    } else {
        q
    }
}

/// `FOR SHARE` on PostgreSQL, so the rows read stay as read until the caller's transaction
/// ends while other readers may share them; SQLite has one writer at a time anyway.
pub fn for_share<S: sea_orm::QuerySelect>(backend: DbBackend, q: S) -> S {
    if backend == DbBackend::Postgres {
        q.lock_shared()
    } else {
        q
    }
}
