//! The maintained contact counts (migration `m0009`): how many contacts an organisation has
//! per dimension, key, stage and consent, kept by triggers in the transaction of every
//! change. Tabs and the summary add up a few of these rows instead of scanning contacts.
//!
//! On PostgreSQL the triggers append deltas (so concurrent writers never wait on a shared
//! counter row) and [`fold`] moves them into the counts; a reader adds counts and deltas in
//! one statement, which sees one snapshot, so the answer is exact at any moment.

use sea_orm::sea_query::{Alias, Expr, Func, Query, SelectStatement, SimpleExpr, UnionType};
use sea_orm::{ColumnTrait, ConnectionTrait, DbErr, ExprTrait, FromQueryResult};
use uuid::Uuid;

use crate::db::entities::contact_count::{self, Column};

/// What a count is kept by. The numbers are stored (and written by the triggers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dim {
    /// Every contact (key `""`).
    All = 0,
    /// By source (key: the source word).
    Source = 1,
    /// By owner (key: the owner's id as 32 lowercase hex digits, `""` for none).
    Owner = 2,
    /// By tag (key: the tag key).
    Tag = 3,
    /// By channel type the contact has an identity of (key: the channel type).
    Channel = 4,
    /// By UTC day created (key: [`day_key`]).
    Created = 5,
    /// By UTC day the contact entered its current stage (key: [`day_key`]).
    StageChanged = 6,
}

/// Milliseconds in a day: day keys are UTC days since the epoch.
pub const DAY_MS: i64 = 86_400_000;

/// The key of the UTC day holding `ms`: ten digits, so keys compare as the days do.
pub fn day_key(ms: i64) -> String {
    format!("{:010}", ms.div_euclid(DAY_MS))
}

/// The key of an owner (or of no owner).
pub fn owner_key(owner: Option<Uuid>) -> String {
    owner.map(|u| u.simple().to_string()).unwrap_or_default()
}

/// Which keys of a dimension to add up.
#[derive(Clone, Debug)]
pub enum Keys {
    /// One key.
    Is(String),
    /// Every key after this one (days after a day).
    After(String),
    /// Every key (a dimension's list, such as the tags).
    Any,
}

/// Contacts of one key, stage and consent.
#[derive(Clone, Debug, FromQueryResult)]
pub struct Group {
    /// The key.
    pub key: String,
    /// The stage (`None`: no stage).
    pub stage: Option<Uuid>,
    /// Whether they gave consent.
    pub consent: bool,
    /// How many.
    pub n: i64,
}

#[derive(FromQueryResult)]
struct Row {
    key: String,
    stage: Uuid,
    consent: bool,
    n: i64,
}

/// One table's rows of the counts asked for (columns unqualified: the deltas have the
/// same ones).
fn part(table: &str, org: Uuid, dim: Dim, keys: &Keys) -> SelectStatement {
    let mut q = Query::select();
    q.columns([Column::Key, Column::Stage, Column::Consent, Column::N])
        .from(Alias::new(table))
        .and_where(Expr::col(Column::OrganizationId).eq(org))
        .and_where(Expr::col(Column::Dim).eq(dim as i16));
    match keys {
        Keys::Is(k) => {
            q.and_where(Expr::col(Column::Key).eq(k.as_str()));
        }
        Keys::After(k) => {
            q.and_where(Expr::col(Column::Key).gt(k.as_str()));
        }
        Keys::Any => {}
    }
    q
}

/// The organisation's contacts of `dim` for `keys`, by key, stage and consent (groups of
/// none left out).
pub async fn read(
    conn: &impl ConnectionTrait,
    org: Uuid,
    dim: Dim,
    keys: Keys,
) -> Result<Vec<Group>, DbErr> {
    let mut both = part("contact_counts", org, dim, &keys);
    both.union(
        UnionType::All,
        part("contact_count_deltas", org, dim, &keys),
    );
    let sum = Alias::new("n");
    let q = Query::select()
        .columns([Column::Key, Column::Stage, Column::Consent])
        // PostgreSQL sums bigints into a numeric.
        .expr_as(
            Func::cast_as(Func::sum(Expr::col(Column::N)), Alias::new("bigint")),
            sum,
        )
        .from_subquery(both, Alias::new("x"))
        .group_by_columns([Column::Key, Column::Stage, Column::Consent])
        .and_having(ExprTrait::ne(
            SimpleExpr::from(Func::sum(Expr::col(Column::N))),
            0,
        ))
        .to_owned();
    let rows = Row::find_by_statement(conn.get_database_backend().build(&q))
        .all(conn)
        .await?;
    Ok(rows
        .into_iter()
        .map(|r| Group {
            key: r.key,
            stage: (!r.stage.is_nil()).then_some(r.stage),
            consent: r.consent,
            n: r.n,
        })
        .collect())
}

/// Folds PostgreSQL's deltas into the counts (see [`crate::db::fold_deltas`]). Returns
/// how many counts changed.
pub async fn fold(conn: &sea_orm::DatabaseConnection) -> Result<u64, DbErr> {
    crate::db::fold_deltas(
        conn,
        FOLD_LOCK,
        "WITH moved AS (DELETE FROM contact_count_deltas \
           RETURNING organization_id, dim, key, stage, consent, n) \
         INSERT INTO contact_counts (organization_id, dim, key, stage, consent, n) \
         SELECT organization_id, dim, key, stage, consent, sum(n) FROM moved \
         GROUP BY organization_id, dim, key, stage, consent \
         ORDER BY organization_id, dim, key, stage, consent \
         ON CONFLICT (organization_id, dim, key, stage, consent) \
         DO UPDATE SET n = contact_counts.n + excluded.n",
    )
    .await
}

/// Drops the counts that came back to zero (readers skip them anyway).
pub async fn prune(conn: &impl ConnectionTrait) -> Result<u64, DbErr> {
    use sea_orm::{EntityTrait, QueryFilter};
    Ok(contact_count::Entity::delete_many()
        .filter(Column::N.eq(0))
        .exec(conn)
        .await?
        .rows_affected)
}

/// The advisory lock a fold holds ("wm-cnts" as a number).
const FOLD_LOCK: i64 = 0x0077_6d2d_636e_7473;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn day_keys_sort_as_days_do() {
        assert_eq!(day_key(0), "0000000000");
        assert_eq!(day_key(DAY_MS - 1), "0000000000");
        assert_eq!(day_key(DAY_MS), "0000000001");
        let (a, b) = (day_key(9 * DAY_MS), day_key(10 * DAY_MS));
        assert!(a < b, "{a} < {b}");
    }

    #[test]
    fn owner_keys_are_the_hex_the_triggers_write() {
        let u = Uuid::parse_str("01A20D32-87E0-75D6-BB31-433E3B5E868F").unwrap();
        assert_eq!(owner_key(Some(u)), "01a20d3287e075d6bb31433e3b5e868f");
        assert_eq!(owner_key(None), "");
    }
}
