//! PostgreSQL test databases. Every test gets its own database, copied from one migrated
//! template (`CREATE DATABASE … TEMPLATE`), so the migrations run once per migration set
//! instead of once per test. The database is dropped when the test's handle goes, pass or
//! fail, on a detached thread so the test does not wait for it; the few a process could not
//! drop before it exited (named after its pid) are swept by the next run.
//!
//! The template is named after the migrations it holds and built under an advisory lock, so
//! test processes running side by side share it. Shipped migrations never change in place;
//! whoever edits one while developing drops the `wm_tpl_*` databases by hand.

use std::hash::{Hash, Hasher};

use sea_orm::{ConnectionTrait, Database};
use sea_orm_migration::MigratorTrait;
use tokio::sync::OnceCell;
use uuid::Uuid;
use wm_server::db::Db;
use wm_server::db::migration::Migrator;

/// A database of its own for one test, dropped with this handle.
pub struct PgDatabase {
    /// Its URL.
    pub url: String,
    admin_url: String,
    name: String,
}

/// The URL of database `name` on the server of `url`, keeping its query string.
fn url_of(url: &str, name: &str) -> String {
    let (head, query) = match url.split_once('?') {
        Some((h, q)) => (h, format!("?{q}")),
        None => (url, String::new()),
    };
    let (server, _) = head.rsplit_once('/').expect("database URL has a path");
    format!("{server}/{name}{query}")
}

/// The template's name: one per set of migrations.
fn template_name() -> String {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for m in Migrator::migrations() {
        m.name().hash(&mut h);
    }
    format!("wm_tpl_{:016x}", h.finish())
}

/// Builds the template once per process (and once per server, under an advisory lock).
async fn template(admin_url: &str) -> &'static str {
    static TEMPLATE: OnceCell<String> = OnceCell::const_new();
    TEMPLATE
        .get_or_init(|| async {
            let name = template_name();
            let admin = Database::connect(admin_url).await.expect("connect admin");
            // A session lock: held across the CREATE, which cannot run in a transaction.
            admin
                .execute_unprepared("SELECT pg_advisory_lock(74021)")
                .await
                .expect("template lock");
            sweep(&admin).await;
            let exists = admin
                .query_one_raw(sea_orm::Statement::from_string(
                    admin.get_database_backend(),
                    format!("SELECT 1 AS one FROM pg_database WHERE datname = '{name}'"),
                ))
                .await
                .expect("look up the template")
                .is_some();
            if !exists {
                let building = format!("wm_tplb_{}", Uuid::new_v4().simple());
                admin
                    .execute_unprepared(&format!("CREATE DATABASE {building}"))
                    .await
                    .expect("create the template");
                let db = Db::connect(&url_of(admin_url, &building))
                    .await
                    .expect("connect the template");
                db.migrate().await.expect("migrate the template");
                db.conn.close().await.expect("close the template");
                admin
                    .execute_unprepared(&format!("ALTER DATABASE {building} RENAME TO {name}"))
                    .await
                    .expect("publish the template");
            }
            admin
                .execute_unprepared("SELECT pg_advisory_unlock(74021)")
                .await
                .expect("template unlock");
            admin.close().await.ok();
            name
        })
        .await
}

/// Drops the test databases of test processes that are gone (Linux: by their pid in
/// `/proc`); elsewhere nothing is swept.
async fn sweep(admin: &sea_orm::DatabaseConnection) {
    if !std::path::Path::new("/proc/self").exists() {
        return;
    }
    let Ok(rows) = admin
        .query_all_raw(sea_orm::Statement::from_string(
            admin.get_database_backend(),
            "SELECT datname FROM pg_database WHERE datname LIKE 'wm_test_p%'",
        ))
        .await
    else {
        return;
    };
    for row in rows {
        let Ok(name) = row.try_get::<String>("", "datname") else {
            continue;
        };
        let pid = name
            .strip_prefix("wm_test_p")
            .and_then(|r| r.split('_').next())
            .unwrap_or_default();
        if !pid.is_empty() && !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            let _ = admin
                .execute_unprepared(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                .await;
        }
    }
}

impl PgDatabase {
    /// A migrated database, copied from the template.
    pub async fn migrated(admin_url: &str) -> PgDatabase {
        let tpl = template(admin_url).await;
        Self::create(admin_url, &format!("TEMPLATE {tpl}")).await
    }

    /// An empty database, for tests of the migrations themselves.
    pub async fn empty(admin_url: &str) -> PgDatabase {
        Self::create(admin_url, "").await
    }

    async fn create(admin_url: &str, options: &str) -> PgDatabase {
        let name = format!(
            "wm_test_p{}_{}",
            std::process::id(),
            Uuid::new_v4().simple()
        );
        let admin = Database::connect(admin_url).await.expect("connect admin");
        admin
            .execute_unprepared(&format!("CREATE DATABASE {name} {options}"))
            .await
            .expect("create test database");
        admin.close().await.ok();
        PgDatabase {
            url: url_of(admin_url, &name),
            admin_url: admin_url.to_owned(),
            name,
        }
    }
}

impl Drop for PgDatabase {
    /// Drops the database, closing whatever connections the test left open. It runs on a
    /// thread of its own (a test's runtime may be shutting down, and `drop` cannot await),
    /// not joined: the next test need not wait for it.
    fn drop(&mut self) {
        let admin_url = self.admin_url.clone();
        let sql = format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name);
        let name = self.name.clone();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            let dropped = rt.block_on(async {
                let admin = Database::connect(&admin_url).await?;
                admin.execute_unprepared(&sql).await?;
                admin.close().await
            });
            if let Err(e) = dropped {
                eprintln!("could not drop test database {name}: {e}");
            }
        });
    }
}
