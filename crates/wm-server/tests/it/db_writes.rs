//! The SQLite write gate on a file database, with the pool of connections production has:
//! a write transaction that reads before it writes is not failed by a statement written
//! outside the gate meanwhile (with a deferred `BEGIN`, its read pinned a snapshot that the
//! other write made stale, and its first write failed with SQLITE_BUSY_SNAPSHOT: a 500 for a
//! 1M audience in the scale benchmark). And the log's checkpoint thread.

use std::time::Duration;

use sea_orm::{ConnectionTrait, DbBackend, Statement};

use crate::support::{query_n, sqlite_file};

#[tokio::test]
async fn a_write_transaction_that_reads_first_outlives_a_write_outside_it() {
    let (db, dir) = sqlite_file("wm-writes").await;
    db.conn
        .execute_unprepared(
            "CREATE TABLE t (k TEXT PRIMARY KEY, n INTEGER NOT NULL); \
             INSERT INTO t VALUES ('a', 0), ('b', 0)",
        )
        .await
        .unwrap();

    let txn = db.write().await.unwrap();
    txn.query_one_raw(Statement::from_string(
        DbBackend::Sqlite,
        "SELECT n FROM t WHERE k = 'a'",
    ))
    .await
    .unwrap();
    // A write on another pooled connection, outside the gate, while the transaction runs.
    let conn = db.conn.clone();
    let outside = tokio::spawn(async move {
        conn.execute_unprepared("UPDATE t SET n = n + 1 WHERE k = 'b'")
            .await
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    txn.execute_unprepared("UPDATE t SET n = n + 1 WHERE k = 'a'")
        .await
        .expect("the transaction's write");
    txn.commit().await.unwrap();
    outside.await.unwrap().expect("the write outside the gate");

    let sum = query_n(&db.conn, "SELECT SUM(n) AS n FROM t").await;
    assert_eq!(sum, 2, "both writes kept");
    drop(db);
    drop(dir);
}

/// The log of a SQLite file is copied into the database by the checkpoint thread, well
/// before the writers' own backstop (10,000 pages) would copy it on some commit's time.
#[tokio::test]
async fn the_checkpoint_thread_moves_the_log_into_the_database() {
    let (db, dir) = sqlite_file("wm-ckpt").await;
    db.conn
        .execute_unprepared("CREATE TABLE t (n INTEGER PRIMARY KEY, b BLOB NOT NULL)")
        .await
        .unwrap();
    // About 2,000 pages of log: a fifth of the backstop.
    for batch in 0..20 {
        let txn = db.write().await.unwrap();
        txn.execute_unprepared(&format!(
            "WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i < 99) \
             INSERT INTO t SELECT {batch} * 100 + i, randomblob(4000) FROM k"
        ))
        .await
        .unwrap();
        txn.commit().await.unwrap();
    }
    let file = dir.sqlite_path().expect("a SQLite file");
    let mut size = 0;
    for _ in 0..100 {
        size = std::fs::metadata(&file).unwrap().len();
        if size > 7_000_000 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(size > 7_000_000, "database file still {size} bytes");
    drop(db);
    drop(dir);
}
