//! The `idempotency_keys` table: what a POST sent with an `Idempotency-Key` answered, per
//! API key, for 24 hours (migration m0017).

use sea_orm::entity::prelude::*;

#[allow(missing_docs)]
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "idempotency_keys")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub scope: Uuid,
    #[sea_orm(primary_key, auto_increment = false)]
    pub idempotency_key: String,
    pub fingerprint: String,
    pub method: String,
    pub path: String,
    pub status_code: Option<i32>,
    pub content_type: Option<String>,
    pub body: Option<String>,
    pub locked_until: Option<i64>,
    pub created_at: i64,
    pub committed_at: Option<i64>,
}

/// Relations are resolved by explicit queries in `db::*`.
#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
