//! Point reads on a SQLite file, run on the calling thread.
//!
//! sqlx gives each SQLite connection a thread of its own and passes every statement and row
//! across a channel to it. For a lookup of one row by its key, the two thread switches cost
//! more than the query: on `GET /contacts/{id}` they were about half of the server's CPU.
//! This pool of rusqlite connections runs such a lookup where it is asked for instead.
//!
//! Only single-row reads by primary key belong here. They take microseconds on pages the
//! operating system has cached, so running one inline holds an async worker no longer than
//! a cache lookup would; a scan would not be so short and stays on the pool. In WAL mode a
//! reader neither waits for the writer nor blocks it, and each statement outside a
//! transaction sees everything committed before it began, as on the pool.
//!
//! An in-memory database has none: it lives inside its one sqlx connection.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension, Row};
use sea_orm::DbErr;
use uuid::Uuid;
use wm_types::enums::ContactSource;

use super::entities::contact;

/// Connections kept open between reads; more are opened under a burst and then closed.
const IDLE: usize = 8;

/// How long a read waits on a lock (only a WAL recovery takes one a reader must wait for).
const BUSY: Duration = Duration::from_secs(5);

/// A pool of read-only rusqlite connections to the database file.
pub struct Reader {
    path: PathBuf,
    idle: Mutex<Vec<Connection>>,
}

impl Reader {
    /// The reader of the database file at `path`.
    pub fn new(path: PathBuf) -> Reader {
        Reader {
            path,
            idle: Mutex::new(Vec::new()),
        }
    }

    /// Runs `read` on an idle connection, or a new one when all are in use. Connections
    /// open lazily, so the first read comes after the migrations created the file.
    fn with<T>(&self, read: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T, DbErr> {
        let idle = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let conn = match idle {
            Some(c) => c,
            None => self.connect().map_err(storage)?,
        };
        let out = read(&conn).map_err(storage);
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if idle.len() < IDLE {
            idle.push(conn);
        }
        out
    }

    fn connect(&self) -> rusqlite::Result<Connection> {
        let conn = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(BUSY)?;
        Ok(conn)
    }

    /// The organisation's contact `id`: the same row `db::contacts::find` reads.
    pub fn contact(&self, org: Uuid, id: Uuid) -> Result<Option<contact::Model>, DbErr> {
        self.with(|conn| {
            conn.prepare_cached(
                "SELECT id, organization_id, full_name, primary_phone, primary_email, company, \
                 country, source, lifecycle_stage_id, owner_id, opted_out, consent_given, \
                 consent_at, consent_how, tags, identities, open_deals, search_text, \
                 stage_changed_at, created_at, updated_at \
                 FROM contacts WHERE id = ?1 AND organization_id = ?2",
            )?
            .query_row((id, org), contact_row)
            .optional()
        })
    }
}

/// A `contacts` row, column by column in the order selected above. Naming every field
/// makes a column added to the entity a compile error here rather than a value left out.
fn contact_row(r: &Row<'_>) -> rusqlite::Result<contact::Model> {
    let source: String = r.get(7)?;
    Ok(contact::Model {
        id: r.get(0)?,
        organization_id: r.get(1)?,
        full_name: r.get(2)?,
        primary_phone: r.get(3)?,
        primary_email: r.get(4)?,
        company: r.get(5)?,
        country: r.get(6)?,
        source: ContactSource::parse(&source).unwrap_or(ContactSource::Unknown),
        lifecycle_stage_id: r.get(8)?,
        owner_id: r.get(9)?,
        opted_out: r.get(10)?,
        consent_given: r.get(11)?,
        consent_at: r.get(12)?,
        consent_how: r.get(13)?,
        tags: r.get(14)?,
        identities: r.get(15)?,
        open_deals: r.get(16)?,
        search_text: r.get(17)?,
        stage_changed_at: r.get(18)?,
        created_at: r.get(19)?,
        updated_at: r.get(20)?,
    })
}

fn storage(e: rusqlite::Error) -> DbErr {
    DbErr::Custom(format!("sqlite reader: {e}"))
}
