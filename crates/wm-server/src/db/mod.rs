//! Storage: connection, migrations, entities and the queries of each resource.
//!
//! Every tenant query starts from [`tenant::find_in_org`] or filters on `organization_id`;
//! query functions take `&impl ConnectionTrait` so they run on the pool or in a transaction.

pub mod automations;
pub mod bell;
pub mod campaigns;
pub mod channels;
pub mod checkpoint;
pub mod contacts;
pub mod conversations;
pub mod deals;
pub mod entities;
pub mod group;
pub mod identities;
pub mod imports;
pub mod locks;
pub mod lookups;
pub mod messages;
pub mod migration;
pub mod notes;
pub mod outbox;
pub mod reader;
pub mod stored;
pub mod tallies;
pub mod tenant;
pub mod timeline;
pub mod unique;

pub use locks::{for_share, for_update};
pub use unique::Unique;

use std::sync::Arc;
use std::time::Duration;

use sea_orm::{
    ConnectOptions, Database, DatabaseConnection, DatabaseTransaction, DbBackend, DbErr,
    TransactionTrait,
};
use sea_orm_migration::MigratorTrait;
use tokio::sync::{Mutex, OwnedMutexGuard};

/// A case-insensitive "contains" pattern for LIKE over lower-cased text, with `%`, `_` and
/// `\` escaped so they match themselves.
pub fn like_contains(text: &str) -> sea_orm::sea_query::LikeExpr {
    let escaped: String = text
        .to_lowercase()
        .chars()
        .flat_map(|c| match c {
            '%' | '_' | '\\' => vec!['\\', c],
            c => vec![c],
        })
        .collect();
    sea_orm::sea_query::LikeExpr::new(format!("%{escaped}%")).escape('\\')
}

/// Runs `fold` (a statement that moves a deltas table into its counts) in one transaction
/// under the advisory lock `lock`, on PostgreSQL only (SQLite's triggers write the counts
/// directly). Another replica folding at the same moment makes this call a no-op, and the
/// statement upserts in key order, so two folds could never lock rows in opposite orders.
/// Returns how many counts changed.
pub async fn fold_deltas(
    conn: &sea_orm::DatabaseConnection,
    lock: i64,
    fold: &str,
) -> Result<u64, sea_orm::DbErr> {
    use sea_orm::{ConnectionTrait, Statement, TransactionTrait};
    if conn.get_database_backend() != DbBackend::Postgres {
        return Ok(0);
    }
    let txn = conn.begin().await?;
    let locked = txn
        .query_one_raw(Statement::from_string(
            DbBackend::Postgres,
            format!("SELECT pg_try_advisory_xact_lock({lock}) AS locked"),
        ))
        .await?
        .map(|r| r.try_get::<bool>("", "locked"))
        .transpose()?
        .unwrap_or(false);
    if !locked {
        return Ok(0);
    }
    let folded = txn.execute_unprepared(fold).await?.rows_affected();
    txn.commit().await?;
    Ok(folded)
}

/// The rows of `E` whose ids are `ids`, in that order: a page whose ids an ordered index gave
/// (skipping index entries, never rows) is then read by primary key.
pub async fn rows_in_order<E: tenant::TenantEntity>(
    conn: &impl sea_orm::ConnectionTrait,
    ids: Vec<uuid::Uuid>,
    id_of: fn(&E::Model) -> uuid::Uuid,
) -> Result<Vec<E::Model>, sea_orm::DbErr> {
    let mut rows = by_id::<E>(conn, ids.clone(), id_of).await?;
    Ok(ids.iter().filter_map(|id| rows.remove(id)).collect())
}

/// The rows of `E` with these ids, keyed by id (no query for none): what a page's views
/// look up their contacts, users, templates and numbers in.
pub async fn by_id<E: tenant::TenantEntity>(
    conn: &impl sea_orm::ConnectionTrait,
    ids: Vec<uuid::Uuid>,
    id_of: fn(&E::Model) -> uuid::Uuid,
) -> Result<std::collections::HashMap<uuid::Uuid, E::Model>, sea_orm::DbErr> {
    use sea_orm::{ColumnTrait, QueryFilter};
    if ids.is_empty() {
        return Ok(std::collections::HashMap::new());
    }
    Ok(E::find()
        .filter(E::id_column().is_in(ids))
        .all(conn)
        .await?
        .into_iter()
        .map(|m| (id_of(&m), m))
        .collect())
}

/// `COALESCE(SUM(CASE WHEN c THEN 1 ELSE 0 END), 0)`: how many rows match `c`, so that
/// several counts over the same rows (a list's tabs) come from one query.
pub fn count_if(c: sea_orm::Condition) -> sea_orm::sea_query::SimpleExpr {
    use sea_orm::sea_query::{CaseStatement, Expr, Func, SimpleExpr};
    let case: SimpleExpr = CaseStatement::new()
        .case(c, Expr::val(1))
        .finally(Expr::val(0))
        .into();
    Func::coalesce([SimpleExpr::from(Func::sum(case)), Expr::val(0)]).into()
}

/// `(at, id) > (cursor)`: a keyset cursor over (creation time, id) as a row comparison,
/// which both databases seek an index to. PostgreSQL cannot seek the same condition written
/// `at > a OR (at = a AND id > b)`: it reads every row before the cursor, so a walk over a
/// million rows costs the square of its steps (0.2 s a step half way).
pub fn after_key(
    at: sea_orm::sea_query::Expr,
    id: sea_orm::sea_query::Expr,
    cursor: (i64, uuid::Uuid),
) -> sea_orm::sea_query::Expr {
    use sea_orm::sea_query::{Expr, ExprTrait};
    Expr::tuple([at, id]).gt(Expr::tuple([Expr::val(cursor.0), Expr::val(cursor.1)]))
}

/// Rows per multi-row statement: far below SQLite's and PostgreSQL's bound parameters.
pub const INSERT_BATCH: usize = 500;

/// Inserts `rows` a few hundred per statement ([`INSERT_BATCH`]), moving each
/// into its statement: copying a chunk first (`chunk.to_vec()`) duplicated every text of a
/// bulk write (about 2 ms of a 1,000-row import chunk's 45 on the writer's path).
pub async fn insert_chunked<A>(
    conn: &impl sea_orm::ConnectionTrait,
    rows: Vec<A>,
) -> Result<(), DbErr>
where
    A: sea_orm::ActiveModelTrait + Send,
{
    use sea_orm::EntityTrait;
    let mut rows = rows.into_iter().peekable();
    while rows.peek().is_some() {
        let batch: Vec<A> = rows.by_ref().take(INSERT_BATCH).collect();
        A::Entity::insert_many(batch)
            .exec_without_returning(conn)
            .await?;
    }
    Ok(())
}

/// The row offset of a 1-based page. It saturates and stays within `i64` (both databases
/// take a signed 64-bit offset), so no page number can overflow the arithmetic or the
/// query builder; the validator bounds `page` long before that.
pub fn offset(page: u64, page_size: u64) -> u64 {
    page.saturating_sub(1)
        .saturating_mul(page_size)
        .min(i64::MAX as u64)
}

/// `FOR UPDATE SKIP LOCKED` on PostgreSQL, so workers on several replicas never claim the
/// same rows; SQLite has one writer at a time anyway.
pub fn skip_locked<S: sea_orm::QuerySelect>(db: &Db, q: S) -> S {
    if db.backend() == DbBackend::Postgres {
        q.lock_with_behavior(
            sea_orm::sea_query::LockType::Update,
            sea_orm::sea_query::LockBehavior::SkipLocked,
        )
    } else {
        q
    }
}

/// The advisory lock key the migrations hold on PostgreSQL ("wm-migr" as a number).
const MIGRATION_LOCK: i64 = 0x0077_6d2d_6d69_6772;

/// The database: a pool, plus on SQLite a gate that lets one write transaction run at a time
/// in this process. SQLite has a single writer anyway; taking turns here, instead of inside
/// SQLite, avoids `SQLITE_BUSY` when a read transaction tries to upgrade to a write.
#[derive(Clone)]
pub struct Db {
    /// The pool.
    pub conn: DatabaseConnection,
    write_gate: Option<Arc<Mutex<()>>>,
    /// On a SQLite file, point reads that skip sqlx's worker thread.
    reader: Option<Arc<reader::Reader>>,
    /// On a SQLite file, the thread that checkpoints its log; it stops with the last handle.
    _checkpointer: Option<Arc<checkpoint::Checkpointer>>,
    /// Who watches which contact's messages in this process.
    bell: bell::Bell,
}

/// The file a SQLite `url` names; `None` for an in-memory database, which lives inside its
/// one sqlx connection.
fn sqlite_file(url: &str) -> Result<Option<std::path::PathBuf>, DbErr> {
    use std::str::FromStr;
    if url.contains(":memory:") || url.contains("mode=memory") {
        return Ok(None);
    }
    let opts = sea_orm::sqlx::sqlite::SqliteConnectOptions::from_str(url)
        .map_err(|e| DbErr::Custom(e.to_string()))?;
    Ok(Some(opts.get_filename().to_path_buf()))
}

/// A write transaction (holding the SQLite write gate while it lives).
pub struct WriteTxn {
    txn: DatabaseTransaction,
    _gate: Option<OwnedMutexGuard<()>>,
    committed: std::sync::Mutex<Vec<Box<dyn FnOnce() + Send>>>,
}

/// Work a request wants done inside each of its write transactions just before it
/// commits (its `Idempotency-Key` noting that the request's effects are in), installed for
/// the request's task with [`BEFORE_COMMIT`]'s `scope`. Storage knows nothing of why.
#[async_trait::async_trait]
pub trait BeforeCommit: Send + Sync {
    /// Runs in `txn` (which may take [`WriteTxn::after_commit`] callbacks); an error
    /// rolls the transaction back.
    async fn before_commit(&self, txn: &WriteTxn) -> Result<(), DbErr>;
}

tokio::task_local! {
    /// The [`BeforeCommit`] of the request the current task serves, if any.
    pub static BEFORE_COMMIT: Arc<dyn BeforeCommit>;
}

impl WriteTxn {
    /// Commits: the task's [`BEFORE_COMMIT`] runs in the transaction first, and the
    /// [`after_commit`](Self::after_commit) callbacks once it is durable.
    pub async fn commit(self) -> Result<(), DbErr> {
        if let Ok(hook) = BEFORE_COMMIT.try_with(Arc::clone) {
            hook.before_commit(&self).await?;
        }
        self.txn.commit().await?;
        let done = self
            .committed
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for f in done {
            f();
        }
        Ok(())
    }

    /// Runs `f` once this transaction has committed (never when it rolls back): what a
    /// write inside it means is true only from then on.
    pub fn after_commit(&self, f: impl FnOnce() + Send + 'static) {
        self.committed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(Box::new(f));
    }
}

impl std::ops::Deref for WriteTxn {
    type Target = DatabaseTransaction;
    fn deref(&self) -> &DatabaseTransaction {
        &self.txn
    }
}

impl Db {
    /// The contact bell of this process ([`bell`]).
    pub fn bell(&self) -> &bell::Bell {
        &self.bell
    }

    /// Rings `contact`'s watchers here and on every replica ([`bell::Bell::ring`]).
    pub async fn ring(&self, contact: uuid::Uuid) {
        self.bell.ring(&self.conn, contact).await;
    }

    /// Connects: SQLite gets WAL, `synchronous=NORMAL` and a busy timeout; an in-memory
    /// SQLite database uses one connection (each connection would see its own database), a
    /// file gets the point reader and the checkpoint thread.
    pub async fn connect(url: &str) -> Result<Db, DbErr> {
        let mut opts = ConnectOptions::new(url.to_owned());
        opts.sqlx_logging(false)
            .connect_timeout(Duration::from_secs(10))
            .acquire_timeout(Duration::from_secs(30));
        let sqlite = url.starts_with("sqlite:");
        let file = if sqlite { sqlite_file(url)? } else { None };
        if sqlite {
            opts.max_connections(if file.is_none() { 1 } else { 8 })
                .min_connections(1)
                .map_sqlx_sqlite_opts(|o| {
                    o.journal_mode(sea_orm::sqlx::sqlite::SqliteJournalMode::Wal)
                        .synchronous(sea_orm::sqlx::sqlite::SqliteSynchronous::Normal)
                        .busy_timeout(Duration::from_secs(10))
                        .foreign_keys(true)
                        .pragma(
                            "wal_autocheckpoint",
                            checkpoint::WRITER_AUTOCHECKPOINT.to_string(),
                        )
                });
        } else {
            opts.max_connections(16).min_connections(1);
        }
        let conn = Database::connect(opts).await?;
        let checkpointer = match &file {
            Some(path) => Some(Arc::new(
                checkpoint::Checkpointer::start(path).map_err(|e| DbErr::Custom(e.to_string()))?,
            )),
            None => None,
        };
        Ok(Db {
            reader: file.map(|path| Arc::new(reader::Reader::new(path))),
            _checkpointer: checkpointer,
            write_gate: (conn.get_database_backend() == DbBackend::Sqlite)
                .then(|| Arc::new(Mutex::new(()))),
            conn,
            bell: bell::Bell::default(),
        })
    }

    /// Applies pending migrations. On PostgreSQL they run in one transaction holding an
    /// advisory lock, so replicas starting together on an empty database take turns: the
    /// first migrates, the others find nothing left to do.
    pub async fn migrate(&self) -> Result<(), DbErr> {
        use sea_orm::ConnectionTrait;
        if self.backend() != DbBackend::Postgres {
            return migration::Migrator::up(&self.conn, None).await;
        }
        let txn = self.conn.begin().await?;
        txn.execute_unprepared(&format!("SELECT pg_advisory_xact_lock({MIGRATION_LOCK})"))
            .await?;
        migration::Migrator::up(&txn, None).await?;
        txn.commit().await
    }

    /// Begins a write transaction.
    ///
    /// On SQLite it begins `IMMEDIATE`, taking the database's write lock at once. A deferred
    /// transaction that reads first pins a snapshot, and if a statement written outside the
    /// gate (some workers write single statements straight to the pool) commits before its
    /// first write, that write fails with SQLITE_BUSY_SNAPSHOT, which no busy timeout waits
    /// out.
    pub async fn write(&self) -> Result<WriteTxn, DbErr> {
        let gate = match &self.write_gate {
            Some(g) => Some(g.clone().lock_owned().await),
            None => None,
        };
        let options = sea_orm::TransactionOptions {
            sqlite_transaction_mode: Some(sea_orm::SqliteTransactionMode::Immediate),
            ..Default::default()
        };
        Ok(WriteTxn {
            txn: self.conn.begin_with_options(options).await?,
            _gate: gate,
            committed: std::sync::Mutex::default(),
        })
    }

    /// Whether one write transaction runs at a time (SQLite), so that writes gain by being
    /// grouped.
    pub fn single_writer(&self) -> bool {
        self.write_gate.is_some()
    }

    /// The reader of point reads on the calling thread, on a SQLite file; `None` elsewhere,
    /// where the pool serves them.
    pub fn reader(&self) -> Option<&reader::Reader> {
        self.reader.as_deref()
    }

    /// The backend (SQLite or PostgreSQL).
    pub fn backend(&self) -> DbBackend {
        self.conn.get_database_backend()
    }
}
