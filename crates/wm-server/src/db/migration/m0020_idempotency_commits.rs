//! An `Idempotency-Key` notes, in the very transaction that writes its request's effects,
//! that they are in (`committed_at`), and the routes that can keep their answer there too.
//! A process killed after that commit and before the answer left it is no longer a gap a
//! retry runs through twice: the retry finds the answer, or learns that the first attempt
//! completed.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(
            Table::alter()
                .table("idempotency_keys")
                .add_column(big_integer_null("committed_at"))
                .to_owned(),
        )
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(
            Table::alter()
                .table("idempotency_keys")
                .drop_column("committed_at")
                .to_owned(),
        )
        .await
    }
}
