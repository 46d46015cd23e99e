//! Reading the one row a unique key selects.

use std::future::Future;

use sea_orm::{ConnectionTrait, DbErr, EntityTrait, Select};

/// `.unique(conn)`: the row of a select that a primary or unique key narrows to one, read
/// without the `LIMIT ?` that `.one()` binds. SQLite plans a statement around the value of a
/// bound LIMIT, so a cached statement with one is prepared again on every run; on
/// `GET /contacts/{id}` that was a fifth of the server's CPU.
pub trait Unique {
    /// The row type.
    type Model;
    /// The row, if any. The select must not match more than one row.
    fn unique<C: ConnectionTrait>(
        self,
        conn: &C,
    ) -> impl Future<Output = Result<Option<Self::Model>, DbErr>> + Send;
}

impl<E> Unique for Select<E>
where
    E: EntityTrait,
    E::Model: Send + Sync,
{
    type Model = E::Model;

    async fn unique<C: ConnectionTrait>(self, conn: &C) -> Result<Option<E::Model>, DbErr> {
        Ok(self.all(conn).await?.into_iter().next())
    }
}
