//! Maintained tallies (migration `m0013`): how many rows a campaign, an organisation or an
//! automation has per dimension and key, with the sum of an amount, kept by triggers in the
//! transaction of every change, except a recipient's insert, which its only writer (an
//! audience step) tallies itself with [`add`] (m0014): a new way of inserting recipients must
//! call it too. A campaign's stats, cost and estimate, the conversation
//! tabs and an automation log's totals add up a handful of these rows instead of counting
//! a million.
//!
//! On PostgreSQL the triggers append deltas (concurrent writers never wait on a shared row)
//! and [`fold`] moves them into the tallies; a reader adds tallies and deltas in one
//! statement, which sees one snapshot, so the answer is exact at any moment.

use sea_orm::sea_query::{Alias, Expr, Func, Query, SelectStatement, SimpleExpr, UnionType};
use sea_orm::{ConnectionTrait, DbErr, ExprTrait, FromQueryResult};
use uuid::Uuid;

/// What a tally counts. The numbers are stored (and written by the triggers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dim {
    /// A campaign's recipients by status (key: the status word); amount: their cost.
    RecipientStatus = 1,
    /// A campaign's failed recipients by reason (key: the first [`REASON_CHARS`]
    /// characters of the error message, `""` for none).
    RecipientFailure = 2,
    /// A campaign's pending recipients not charged yet, by market (key: the market, `""`
    /// for none).
    RecipientUnqueued = 3,
    /// An organisation's conversations (key: [`conversation_key`]).
    Conversation = 4,
    /// An automation's runs by result (key: the result word).
    RunResult = 5,
    /// An organisation's conversations by the quarter hour they were created in and their
    /// channel type (key: [`bucket_key`], a space, the channel type word).
    ConversationCreated = 6,
    /// Its resolved conversations by the quarter hour they were resolved in, as above.
    ConversationResolved = 7,
}

/// The length of a time bucket: a quarter hour, which every time zone's midnight falls on.
pub const BUCKET_MS: i64 = 900_000;

/// The key of the bucket holding `ms` (ten digits, so keys compare as times do), or `None`
/// when `ms` does not start a bucket.
pub fn bucket_key(ms: i64) -> Option<String> {
    (ms.rem_euclid(BUCKET_MS) == 0).then(|| format!("{:010}", ms.div_euclid(BUCKET_MS)))
}

/// The characters of a failure reason a tally keeps as its key.
pub const REASON_CHARS: usize = 500;

/// Rows of one scope and key.
#[derive(Clone, Debug, FromQueryResult)]
pub struct Tally {
    /// The campaign, organisation or automation (nil when added up over several).
    pub scope: Uuid,
    /// The key.
    pub key: String,
    /// How many rows.
    pub n: i64,
    /// The sum of their amount.
    pub amount: i64,
}

/// A conversation's key: channel type, channel, status and assignee, space-separated (ids
/// as 32 hex digits, `""` for no assignee), as the triggers write it.
pub struct ConversationKey<'a> {
    /// The channel type word.
    pub channel_type: &'a str,
    /// The channel's id.
    pub channel: Option<Uuid>,
    /// The status word.
    pub status: &'a str,
    /// The assignee.
    pub assignee: Option<Uuid>,
}

/// The parts of a [`Dim::Conversation`] key; `None` for a key not written by the triggers.
pub fn conversation_key(key: &str) -> Option<ConversationKey<'_>> {
    let mut parts = key.split(' ');
    let channel_type = parts.next()?;
    let channel = Uuid::parse_str(parts.next()?).ok();
    let status = parts.next()?;
    let assignee = parts.next().and_then(|a| Uuid::parse_str(a).ok());
    Some(ConversationKey {
        channel_type,
        channel,
        status,
        assignee,
    })
}

/// One table's rows of `dim` for the scopes `scopes` selects (columns unqualified: the
/// deltas have the same ones).
fn part(table: &str, dim: Dim, scopes: &SimpleExpr) -> SelectStatement {
    Query::select()
        .columns([
            Alias::new("scope"),
            Alias::new("key"),
            Alias::new("n"),
            Alias::new("amount"),
        ])
        .from(Alias::new(table))
        .and_where(Expr::col(Alias::new("dim")).eq(dim as i16))
        .and_where(scopes.clone())
        .to_owned()
}

/// Tallies and deltas of `dim` where `scopes` holds, added up by key, and by scope unless
/// `by_scope` is false (then `scope` reads nil). Keys whose rows cancel out are left out.
async fn read_where(
    conn: &impl ConnectionTrait,
    dim: Dim,
    scopes: SimpleExpr,
    by_scope: bool,
) -> Result<Vec<Tally>, DbErr> {
    let mut both = part("tallies", dim, &scopes);
    both.union(UnionType::All, part("tally_deltas", dim, &scopes));
    // PostgreSQL sums bigints into a numeric.
    let sum = |c: &str| Func::cast_as(Func::sum(Expr::col(Alias::new(c))), Alias::new("bigint"));
    let mut q = Query::select();
    if by_scope {
        q.column(Alias::new("scope"))
            .group_by_col(Alias::new("scope"));
    } else {
        q.expr_as(Expr::val(Uuid::nil()), Alias::new("scope"));
    }
    q.column(Alias::new("key"))
        .expr_as(sum("n"), Alias::new("n"))
        .expr_as(sum("amount"), Alias::new("amount"))
        .from_subquery(both, Alias::new("x"))
        .add_group_by([SimpleExpr::from(Expr::col(Alias::new("key")))])
        .and_having(
            ExprTrait::ne(SimpleExpr::from(Func::sum(Expr::col(Alias::new("n")))), 0).or(
                ExprTrait::ne(
                    SimpleExpr::from(Func::sum(Expr::col(Alias::new("amount")))),
                    0,
                ),
            ),
        );
    Tally::find_by_statement(conn.get_database_backend().build(&q))
        .all(conn)
        .await
}

/// The tallies of `dim` for each of `scopes`.
pub async fn read(
    conn: &impl ConnectionTrait,
    dim: Dim,
    scopes: &[Uuid],
) -> Result<Vec<Tally>, DbErr> {
    let mut out = Vec::new();
    // Under both databases' bound-parameter limits, twice over (tallies and deltas).
    for chunk in scopes.chunks(500) {
        let scopes = Expr::col(Alias::new("scope")).is_in(chunk.iter().copied());
        out.extend(read_where(conn, dim, scopes, true).await?);
    }
    Ok(out)
}

/// The tallies of `dim` added up over the scopes `scopes` selects (one uuid column), by
/// key.
pub async fn read_over(
    conn: &impl ConnectionTrait,
    dim: Dim,
    scopes: SelectStatement,
) -> Result<Vec<Tally>, DbErr> {
    let scopes = Expr::col(Alias::new("scope")).in_subquery(scopes);
    read_where(conn, dim, scopes, false).await
}

/// The tallies of `dim` for `scope` whose keys are at least `from` and, if given, below
/// `to` (a range of buckets).
pub async fn read_range(
    conn: &impl ConnectionTrait,
    dim: Dim,
    scope: Uuid,
    from: &str,
    to: Option<&str>,
) -> Result<Vec<Tally>, DbErr> {
    let key = || Expr::col(Alias::new("key"));
    let mut c = Expr::col(Alias::new("scope"))
        .eq(scope)
        .and(key().gte(from));
    if let Some(to) = to {
        c = c.and(key().lt(to));
    }
    read_where(conn, dim, c, true).await
}

/// Whether the tally of `dim` and `key` is above zero for the scope in the column
/// `scope` of the outer query's `table`, as a condition.
pub fn positive(table: &str, scope: &str, dim: Dim, key: &str) -> SimpleExpr {
    let part = |from: &str| -> SimpleExpr {
        let t = Alias::new("t");
        let sub = Query::select()
            .expr(Func::coalesce([
                SimpleExpr::from(Func::sum(Expr::col((t.clone(), Alias::new("n"))))),
                Expr::val(0),
            ]))
            .from_as(Alias::new(from), t.clone())
            .and_where(
                Expr::col((t.clone(), Alias::new("scope")))
                    .equals((Alias::new(table), Alias::new(scope))),
            )
            .and_where(Expr::col((t.clone(), Alias::new("dim"))).eq(dim as i16))
            .and_where(Expr::col((t, Alias::new("key"))).eq(key))
            .to_owned();
        SimpleExpr::SubQuery(
            None,
            Box::new(sea_orm::sea_query::SubQueryStatement::SelectStatement(sub)),
        )
    };
    part("tallies").add(part("tally_deltas")).gt(0)
}

/// Rows a caller adds to one key's tally.
#[derive(Clone, Debug)]
pub struct Added {
    /// The campaign, organisation or automation.
    pub scope: Uuid,
    /// What is counted.
    pub dim: Dim,
    /// The key.
    pub key: String,
    /// How many rows.
    pub n: i64,
    /// The sum of their amount.
    pub amount: i64,
}

/// Adds to the tallies in the caller's transaction, for rows a caller writes in one place
/// only and tallies itself (recipients, added by an audience step), as the triggers do for
/// the others: straight into the tallies on SQLite (one writer), as deltas on PostgreSQL.
pub async fn add(conn: &impl ConnectionTrait, added: Vec<Added>) -> Result<(), DbErr> {
    use sea_orm::sea_query::OnConflict;
    if added.is_empty() {
        return Ok(());
    }
    let postgres = conn.get_database_backend() == sea_orm::DbBackend::Postgres;
    let cols = ["scope", "dim", "key", "n", "amount"].map(Alias::new);
    let mut q = Query::insert();
    q.into_table(Alias::new(if postgres {
        "tally_deltas"
    } else {
        "tallies"
    }))
    .columns(cols.clone());
    for a in added {
        q.values([
            a.scope.into(),
            (a.dim as i16).into(),
            a.key.into(),
            a.n.into(),
            a.amount.into(),
        ])
        .map_err(|e| DbErr::Custom(e.to_string()))?;
    }
    if !postgres {
        let sum = |c: &str| {
            Expr::col((Alias::new("tallies"), Alias::new(c)))
                .add(Expr::cust(format!("excluded.{c}")))
        };
        q.on_conflict(
            OnConflict::columns(cols[..3].to_vec())
                .value(Alias::new("n"), sum("n"))
                .value(Alias::new("amount"), sum("amount"))
                .to_owned(),
        );
    }
    conn.execute(&q).await?;
    Ok(())
}

/// Folds PostgreSQL's deltas into the tallies (see [`super::fold_deltas`]). Returns how
/// many tallies changed.
pub async fn fold(conn: &sea_orm::DatabaseConnection) -> Result<u64, DbErr> {
    super::fold_deltas(
        conn,
        FOLD_LOCK,
        "WITH moved AS (DELETE FROM tally_deltas RETURNING scope, dim, key, n, amount) \
         INSERT INTO tallies (scope, dim, key, n, amount) \
         SELECT scope, dim, key, sum(n), sum(amount) FROM moved \
         GROUP BY scope, dim, key ORDER BY scope, dim, key \
         ON CONFLICT (scope, dim, key) \
         DO UPDATE SET n = tallies.n + excluded.n, amount = tallies.amount + excluded.amount",
    )
    .await
}

/// Drops the tallies that came back to zero (readers skip them anyway).
pub async fn prune(conn: &impl ConnectionTrait) -> Result<u64, DbErr> {
    Ok(conn
        .execute_unprepared("DELETE FROM tallies WHERE n = 0 AND amount = 0")
        .await?
        .rows_affected())
}

/// The advisory lock a fold holds ("wm-tals" as a number).
const FOLD_LOCK: i64 = 0x0077_6d2d_7461_6c73;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_keys_start_on_quarter_hours_and_sort_as_times() {
        assert_eq!(bucket_key(0).as_deref(), Some("0000000000"));
        assert_eq!(bucket_key(BUCKET_MS * 7).as_deref(), Some("0000000007"));
        assert_eq!(bucket_key(BUCKET_MS * 7 + 1), None);
        // Every zone's midnight starts a bucket, the odd quarter-hour offsets too.
        let now = chrono::Utc::now();
        for tz in [
            "UTC",
            "Asia/Kathmandu",
            "Asia/Kolkata",
            "Australia/Eucla",
            "Pacific/Chatham",
            "America/St_Johns",
            "America/Mexico_City",
        ] {
            let (today, yesterday) = wm_core::time::day_starts(tz, now);
            assert!(bucket_key(today).is_some(), "{tz}: {today}");
            assert!(bucket_key(yesterday).is_some(), "{tz}: {yesterday}");
        }
        let (a, b) = (bucket_key(9 * BUCKET_MS), bucket_key(10 * BUCKET_MS));
        assert!(a < b, "{a:?} < {b:?}");
    }

    #[test]
    fn conversation_keys_read_back_their_parts() {
        let ch = Uuid::now_v7();
        let user = Uuid::now_v7();
        let key = format!("MESSAGING_APP_A {} OPEN {}", ch.simple(), user.simple());
        let k = conversation_key(&key).expect("key");
        assert_eq!(
            (k.channel_type, k.channel, k.status, k.assignee),
            ("MESSAGING_APP_A", Some(ch), "OPEN", Some(user))
        );
        let key = format!("EMAIL {} RESOLVED ", ch.simple());
        let k = conversation_key(&key).expect("key");
        assert_eq!((k.status, k.assignee), ("RESOLVED", None));
        assert!(conversation_key("garbage").is_none());
    }
}
