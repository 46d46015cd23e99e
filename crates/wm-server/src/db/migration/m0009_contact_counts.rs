//! Contact lists whose cost does not grow with the organisation:
//!
//! - **Maintained counts.** `contact_counts` holds, per organisation, how many contacts
//!   there are for each (dimension, key, stage, consent): everyone, by source, by owner, by
//!   tag, by channel, by day created and by day their stage changed. Tabs and the summary
//!   add up a few of these rows instead of scanning every contact. Triggers keep them, in
//!   the same transaction as the change, whatever code path writes (an API call, an import,
//!   an automation, a cascade), so they are never stale.
//!   - SQLite has one writer: its row triggers add to `contact_counts` directly.
//!   - PostgreSQL runs writers side by side: a shared counter row would serialise (and,
//!     locked in different orders, deadlock) every contact write of an organisation. Its
//!     statement triggers append to `contact_count_deltas` instead (one row per statement
//!     and key, never updated, so never waited on), and a worker folds them into
//!     `contact_counts`; readers add both in one statement, which sees one snapshot.
//! - **Search.** SQLite: an FTS5 trigram index (contentless, keyed by `contacts.seq`, a
//!   stable copy of the row id that `VACUUM` cannot renumber). PostgreSQL: a `pg_trgm` GIN
//!   index on `search_text`. Both answer "contains" for three characters or more.
//! - **Ordered indexes** for the page of every filter (newest first), and the contact's
//!   creation time copied on its tag rows, so a tag's page is read in order.
//!
//! The dimension numbers are `db::contacts::counts::Dim`; day keys are the UTC day number,
//! zero-padded to ten digits so keys compare as numbers.

use sea_orm::DbBackend;
use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

use super::helpers::{index, pg_function, pg_statement_trigger};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The SQL spelling of the few expressions the two databases write differently.
struct Dialect {
    nil_uuid: &'static str,
    hex: fn(&str) -> String,
    day: fn(&str) -> String,
}

const SQLITE: Dialect = Dialect {
    nil_uuid: "zeroblob(16)",
    hex: |x| format!("coalesce(lower(hex({x})), '')"),
    day: |x| format!("printf('%010d', {x} / 86400000)"),
};

const POSTGRES: Dialect = Dialect {
    nil_uuid: "'00000000-0000-0000-0000-000000000000'::uuid",
    hex: |x| format!("coalesce(replace({x}::text, '-', ''), '')"),
    day: |x| format!("lpad(({x} / 86400000)::text, 10, '0')"),
};

impl Dialect {
    fn stage(&self, x: &str) -> String {
        format!("coalesce({x}, {})", self.nil_uuid)
    }

    /// The counted facts of contact rows `r` (read `from`, which holds no WHERE), each
    /// weighing `d`: `(org, dim, key, stage, consent, d)`.
    fn facts(&self, r: &str, from: &str, d: &str) -> String {
        let head = |dim: u8, key: String| {
            format!(
                "SELECT {r}.organization_id AS org, {dim} AS dim, {key} AS key, {} AS stage, \
                 {r}.consent_given AS consent, {d} AS d {from}",
                self.stage(&format!("{r}.lifecycle_stage_id"))
            )
        };
        [
            head(0, "''".into()),
            head(1, format!("{r}.source")),
            head(2, (self.hex)(&format!("{r}.owner_id"))),
            head(5, (self.day)(&format!("{r}.created_at"))),
            format!(
                "{} WHERE {r}.stage_changed_at IS NOT NULL",
                head(6, (self.day)(&format!("{r}.stage_changed_at")))
            ),
        ]
        .join(" UNION ALL ")
    }

    /// The tag facts of contact rows `r` read `from` (with their tag rows `t` joined).
    fn tags_of(&self, r: &str, from: &str, d: &str) -> String {
        format!(
            "SELECT {r}.organization_id AS org, 3 AS dim, t.tag_key AS key, {} AS stage, \
             {r}.consent_given AS consent, {d} AS d {from} \
             JOIN contact_tags t ON t.contact_id = {r}.id",
            self.stage(&format!("{r}.lifecycle_stage_id"))
        )
    }

    /// The channel facts of contact rows `r` read `from`: one per channel type they have
    /// (the identity of that type with the lowest id stands for the others).
    fn channels_of(&self, r: &str, from: &str, d: &str) -> String {
        format!(
            "SELECT {r}.organization_id AS org, 4 AS dim, x.channel_type AS key, {} AS stage, \
             {r}.consent_given AS consent, {d} AS d {from} \
             JOIN contact_identities x ON x.contact_id = {r}.id \
             WHERE NOT EXISTS (SELECT 1 FROM contact_identities y WHERE y.contact_id = x.contact_id \
             AND y.channel_type = x.channel_type AND y.id < x.id)",
            self.stage(&format!("{r}.lifecycle_stage_id"))
        )
    }
}

/// Columns of the counted contact facts whose change moves a contact between counts.
const COUNTED: &[&str] = &[
    "lifecycle_stage_id",
    "consent_given",
    "source",
    "owner_id",
    "stage_changed_at",
];

fn changed(old: &str, new: &str, cols: &[&str]) -> String {
    cols.iter()
        .map(|c| format!("{old}.{c} IS NOT {new}.{c}"))
        .collect::<Vec<_>>()
        .join(" OR ")
}

/// The contact's stage and consent copied onto its tag and identity rows (SQLite, `NEW`).
const MIRROR_TAGS: &str = "UPDATE contact_tags SET contact_stage_id = NEW.lifecycle_stage_id, \
     contact_consent = NEW.consent_given WHERE contact_id = NEW.id;";
const MIRROR_IDENTITIES: &str = "UPDATE contact_identities SET \
     contact_stage_id = NEW.lifecycle_stage_id, contact_consent = NEW.consent_given \
     WHERE contact_id = NEW.id;";

/// SQLite: a row trigger adds each fact to `contact_counts` at once.
fn sqlite_add(facts: &str) -> String {
    format!(
        "INSERT INTO contact_counts (organization_id, dim, key, stage, consent, n) \
         SELECT org, dim, key, stage, consent, d FROM ({facts}) WHERE true \
         ON CONFLICT (organization_id, dim, key, stage, consent) DO UPDATE SET n = n + excluded.n;"
    )
}

fn sqlite_statements() -> Vec<String> {
    let d = &SQLITE;
    // A row seen alone in a trigger: `FROM (SELECT 1)` gives the row's facts one row each.
    let one = "FROM (SELECT 1)";
    let tag_row = |t: &str, sign: &str| {
        format!(
            "SELECT c.organization_id AS org, 3 AS dim, {t}.tag_key AS key, {} AS stage, \
             c.consent_given AS consent, {sign} AS d FROM contacts c WHERE c.id = {t}.contact_id",
            d.stage("c.lifecycle_stage_id")
        )
    };
    let channel_row = |i: &str, sign: &str| {
        format!(
            "SELECT c.organization_id AS org, 4 AS dim, {i}.channel_type AS key, {} AS stage, \
             c.consent_given AS consent, {sign} AS d FROM contacts c WHERE c.id = {i}.contact_id",
            d.stage("c.lifecycle_stage_id")
        )
    };
    // `contacts` seen from a trigger as `(SELECT NEW.… AS …)`: joins need a table alias.
    let row = |r: &str| {
        format!(
            "FROM (SELECT {r}.id AS id, {r}.organization_id AS organization_id, \
             {r}.lifecycle_stage_id AS lifecycle_stage_id, {r}.consent_given AS consent_given) k"
        )
    };
    let moved = changed("OLD", "NEW", &["lifecycle_stage_id", "consent_given"]);
    vec![
        "ALTER TABLE contacts ADD COLUMN seq integer".into(),
        "UPDATE contacts SET seq = rowid".into(),
        "CREATE UNIQUE INDEX ux_contacts_seq ON contacts (seq)".into(),
        "CREATE VIRTUAL TABLE contacts_fts USING fts5(search_text, content='', \
         contentless_delete=1, detail=none, tokenize='trigram')"
            .into(),
        "INSERT INTO contacts_fts (rowid, search_text) SELECT seq, search_text FROM contacts"
            .into(),
        "CREATE TABLE contact_counts (organization_id uuid_text NOT NULL, dim integer NOT NULL, \
         key text NOT NULL, stage uuid_text NOT NULL, consent boolean NOT NULL, \
         n integer NOT NULL, PRIMARY KEY (organization_id, dim, key, stage, consent)) \
         WITHOUT ROWID"
            .into(),
        // Never written on SQLite; present so readers are the same on both databases.
        "CREATE TABLE contact_count_deltas (organization_id uuid_text NOT NULL, \
         dim integer NOT NULL, key text NOT NULL, stage uuid_text NOT NULL, \
         consent boolean NOT NULL, n integer NOT NULL)"
            .into(),
        backfill(d),
        format!(
            "CREATE TRIGGER tr_contacts_insert AFTER INSERT ON contacts BEGIN \
             UPDATE contacts SET seq = NEW.rowid WHERE rowid = NEW.rowid; \
             INSERT INTO contacts_fts (rowid, search_text) VALUES (NEW.rowid, NEW.search_text); \
             {} END",
            sqlite_add(&d.facts("NEW", one, "1"))
        ),
        format!(
            "CREATE TRIGGER tr_contacts_counted AFTER UPDATE OF {} ON contacts WHEN {} BEGIN {} {} END",
            COUNTED.join(", "),
            changed("OLD", "NEW", COUNTED),
            sqlite_add(&d.facts("OLD", one, "-1")),
            sqlite_add(&d.facts("NEW", one, "1")),
        ),
        format!(
            "CREATE TRIGGER tr_contacts_moved AFTER UPDATE OF lifecycle_stage_id, consent_given \
             ON contacts WHEN {moved} BEGIN {MIRROR_TAGS} {MIRROR_IDENTITIES} {} {} {} {} END",
            sqlite_add(&d.tags_of("k", &row("OLD"), "-1")),
            sqlite_add(&d.tags_of("k", &row("NEW"), "1")),
            sqlite_add(&d.channels_of("k", &row("OLD"), "-1")),
            sqlite_add(&d.channels_of("k", &row("NEW"), "1")),
        ),
        "CREATE TRIGGER tr_contacts_search AFTER UPDATE OF search_text ON contacts \
         WHEN OLD.search_text IS NOT NEW.search_text BEGIN \
         DELETE FROM contacts_fts WHERE rowid = OLD.seq; \
         INSERT INTO contacts_fts (rowid, search_text) VALUES (NEW.seq, NEW.search_text); END"
            .into(),
        // Before the row goes (and a cascade takes its tags and identities, whose own
        // triggers then no longer find the contact): its tag and channel counts.
        format!(
            "CREATE TRIGGER tr_contacts_delete_related BEFORE DELETE ON contacts BEGIN {} {} END",
            sqlite_add(&d.tags_of("k", &row("OLD"), "-1")),
            sqlite_add(&d.channels_of("k", &row("OLD"), "-1")),
        ),
        format!(
            "CREATE TRIGGER tr_contacts_delete AFTER DELETE ON contacts BEGIN {} \
             DELETE FROM contacts_fts WHERE rowid = OLD.seq; END",
            sqlite_add(&d.facts("OLD", one, "-1"))
        ),
        format!(
            "CREATE TRIGGER tr_contact_tags_insert AFTER INSERT ON contact_tags BEGIN {} END",
            sqlite_add(&tag_row("NEW", "1"))
        ),
        format!(
            "CREATE TRIGGER tr_contact_tags_delete AFTER DELETE ON contact_tags BEGIN {} END",
            sqlite_add(&tag_row("OLD", "-1"))
        ),
        format!(
            "CREATE TRIGGER tr_contact_tags_update AFTER UPDATE OF contact_id, tag_key \
             ON contact_tags BEGIN {} {} END",
            sqlite_add(&tag_row("OLD", "-1")),
            sqlite_add(&tag_row("NEW", "1"))
        ),
        // A channel counts a contact once, however many identities of that type it has.
        format!(
            "CREATE TRIGGER tr_identities_insert AFTER INSERT ON contact_identities \
             WHEN NOT EXISTS (SELECT 1 FROM contact_identities i WHERE i.contact_id = NEW.contact_id \
             AND i.channel_type = NEW.channel_type AND i.id <> NEW.id) BEGIN {} END",
            sqlite_add(&channel_row("NEW", "1"))
        ),
        format!(
            "CREATE TRIGGER tr_identities_delete AFTER DELETE ON contact_identities \
             WHEN NOT EXISTS (SELECT 1 FROM contact_identities i WHERE i.contact_id = OLD.contact_id \
             AND i.channel_type = OLD.channel_type) BEGIN {} END",
            sqlite_add(&channel_row("OLD", "-1"))
        ),
    ]
}

/// The counts of the rows already there, when the migration runs.
fn backfill(d: &Dialect) -> String {
    format!(
        "INSERT INTO contact_counts (organization_id, dim, key, stage, consent, n) \
         SELECT org, dim, key, stage, consent, sum(d) FROM ({} UNION ALL {} UNION ALL {}) x \
         GROUP BY org, dim, key, stage, consent",
        d.facts("c", "FROM contacts c", "1"),
        d.tags_of("c", "FROM contacts c", "1"),
        d.channels_of("c", "FROM contacts c", "1"),
    )
}

/// PostgreSQL: statement triggers append one delta per key and statement.
fn pg_add(facts: &str) -> String {
    format!(
        "INSERT INTO contact_count_deltas (organization_id, dim, key, stage, consent, n) \
         SELECT org, dim, key, stage, consent, sum(d) FROM ({facts}) x \
         GROUP BY org, dim, key, stage, consent HAVING sum(d) <> 0;"
    )
}

fn pg_statements() -> Vec<String> {
    let d = &POSTGRES;
    let cols = COUNTED
        .iter()
        .map(|c| format!("o.{c}"))
        .collect::<Vec<_>>()
        .join(", ");
    let new_cols = cols.replace("o.", "n.");
    let moved_cols = "o.lifecycle_stage_id, o.consent_given";
    let moved_new = moved_cols.replace("o.", "n.");
    let update = format!(
        "WITH changed AS (SELECT o.id FROM old_rows o JOIN new_rows n ON n.id = o.id \
         WHERE ({cols}) IS DISTINCT FROM ({new_cols})), \
         moved AS (SELECT o.id FROM old_rows o JOIN new_rows n ON n.id = o.id \
         WHERE ({moved_cols}) IS DISTINCT FROM ({moved_new})) {}",
        pg_add(
            &[
                d.facts("r", "FROM old_rows r JOIN changed USING (id)", "-1"),
                d.facts("r", "FROM new_rows r JOIN changed USING (id)", "1"),
                d.tags_of("r", "FROM old_rows r JOIN moved USING (id)", "-1"),
                d.tags_of("r", "FROM new_rows r JOIN moved USING (id)", "1"),
                d.channels_of("r", "FROM old_rows r JOIN moved USING (id)", "-1"),
                d.channels_of("r", "FROM new_rows r JOIN moved USING (id)", "1"),
            ]
            .join(" UNION ALL ")
        )
    ) + &["contact_tags", "contact_identities"]
        .map(|t| {
            format!(
                " UPDATE {t} x SET contact_stage_id = n.lifecycle_stage_id, \
                 contact_consent = n.consent_given FROM new_rows n \
                 WHERE x.contact_id = n.id AND (x.contact_stage_id, x.contact_consent) \
                 IS DISTINCT FROM (n.lifecycle_stage_id, n.consent_given);"
            )
        })
        .concat();
    let tag_rows = |rows: &str, sign: &str| {
        format!(
            "SELECT c.organization_id AS org, 3 AS dim, t.tag_key AS key, {} AS stage, \
             c.consent_given AS consent, {sign} AS d FROM {rows} t JOIN contacts c ON c.id = t.contact_id",
            d.stage("c.lifecycle_stage_id")
        )
    };
    // A channel counts a contact once: only the first identity of a type adds it, only the
    // last one removed takes it away.
    let channel_rows = |rows: &str, sign: &str, alone: &str| {
        format!(
            "SELECT c.organization_id AS org, 4 AS dim, x.channel_type AS key, {} AS stage, \
             c.consent_given AS consent, {sign} AS d \
             FROM (SELECT DISTINCT contact_id, channel_type FROM {rows}) x \
             JOIN contacts c ON c.id = x.contact_id \
             WHERE NOT EXISTS (SELECT 1 FROM contact_identities i WHERE i.contact_id = x.contact_id \
             AND i.channel_type = x.channel_type {alone})",
            d.stage("c.lifecycle_stage_id")
        )
    };
    vec![
        "CREATE EXTENSION IF NOT EXISTS pg_trgm".into(),
        "CREATE INDEX ix_contacts_search ON contacts USING gin (search_text gin_trgm_ops)".into(),
        "CREATE TABLE contact_counts (organization_id uuid NOT NULL, dim smallint NOT NULL, \
         key text NOT NULL, stage uuid NOT NULL, consent boolean NOT NULL, n bigint NOT NULL, \
         PRIMARY KEY (organization_id, dim, key, stage, consent))"
            .into(),
        "CREATE TABLE contact_count_deltas (organization_id uuid NOT NULL, dim smallint NOT NULL, \
         key text NOT NULL, stage uuid NOT NULL, consent boolean NOT NULL, n bigint NOT NULL)"
            .into(),
        "CREATE INDEX ix_contact_count_deltas_org ON contact_count_deltas (organization_id, dim)"
            .into(),
        backfill(d),
        pg_function(
            "tr_contacts_insert",
            &pg_add(&d.facts("r", "FROM new_rows r", "1")),
        ),
        pg_statement_trigger(
            "tr_contacts_insert",
            "INSERT",
            "contacts",
            "NEW TABLE AS new_rows",
        ),
        pg_function("tr_contacts_update", &update),
        pg_statement_trigger(
            "tr_contacts_update",
            "UPDATE",
            "contacts",
            "OLD TABLE AS old_rows NEW TABLE AS new_rows",
        ),
        pg_function(
            "tr_contacts_delete",
            &pg_add(&d.facts("r", "FROM old_rows r", "-1")),
        ),
        pg_statement_trigger(
            "tr_contacts_delete",
            "DELETE",
            "contacts",
            "OLD TABLE AS old_rows",
        ),
        // Before each row goes (a cascade then takes its tags and identities, whose own
        // triggers no longer find the contact): its tag and channel counts.
        format!(
            "CREATE FUNCTION tr_contacts_delete_related() RETURNS trigger LANGUAGE plpgsql AS $$ \
             BEGIN {} RETURN OLD; END $$",
            pg_add(&format!(
                "{} UNION ALL {}",
                d.tags_of("r", "FROM (SELECT OLD.*) r", "-1"),
                d.channels_of("r", "FROM (SELECT OLD.*) r", "-1")
            ))
        ),
        "CREATE TRIGGER tr_contacts_delete_related BEFORE DELETE ON contacts FOR EACH ROW \
         EXECUTE FUNCTION tr_contacts_delete_related()"
            .into(),
        pg_function(
            "tr_contact_tags_insert",
            &pg_add(&tag_rows("new_rows", "1")),
        ),
        pg_statement_trigger(
            "tr_contact_tags_insert",
            "INSERT",
            "contact_tags",
            "NEW TABLE AS new_rows",
        ),
        pg_function(
            "tr_contact_tags_delete",
            &pg_add(&tag_rows("old_rows", "-1")),
        ),
        pg_statement_trigger(
            "tr_contact_tags_delete",
            "DELETE",
            "contact_tags",
            "OLD TABLE AS old_rows",
        ),
        // Tag and identity rows are deleted and inserted, never re-keyed in place; their
        // updates only copy the contact's stage and consent, which count nothing.
        pg_function(
            "tr_identities_insert",
            &pg_add(&channel_rows(
                "new_rows",
                "1",
                "AND i.id NOT IN (SELECT id FROM new_rows)",
            )),
        ),
        pg_statement_trigger(
            "tr_identities_insert",
            "INSERT",
            "contact_identities",
            "NEW TABLE AS new_rows",
        ),
        pg_function(
            "tr_identities_delete",
            &pg_add(&channel_rows("old_rows", "-1", "")),
        ),
        pg_statement_trigger(
            "tr_identities_delete",
            "DELETE",
            "contact_identities",
            "OLD TABLE AS old_rows",
        ),
    ]
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        // The contact's creation time on its tag rows: a tag's contacts, newest first, are
        // one index range.
        // Tag and identity rows copy their contact's creation time, stage and consent: a
        // tag's (or a channel's) contacts, newest first and under a tab, are one index range.
        for table in ["contact_tags", "contact_identities"] {
            for col in [
                big_integer("contact_created_at").default(0).to_owned(),
                uuid_null("contact_stage_id"),
                boolean("contact_consent").default(false).to_owned(),
            ] {
                m.alter_table(Table::alter().table(table).add_column(col).to_owned())
                    .await?;
            }
            let of =
                |c: &str| format!("(SELECT {c} FROM contacts c WHERE c.id = {table}.contact_id)");
            m.get_connection()
                .execute_unprepared(&format!(
                    "UPDATE {table} SET contact_created_at = {}, contact_stage_id = {}, \
                     contact_consent = {}",
                    of("created_at"),
                    of("lifecycle_stage_id"),
                    of("consent_given")
                ))
                .await?;
        }
        for (name, table) in [
            ("ix_contacts_org_created", "contacts"),
            ("ix_contacts_org_stage", "contacts"),
            ("ix_contact_tags_org_key", "contact_tags"),
        ] {
            m.drop_index(Index::drop().name(name).table(table).to_owned())
                .await?;
        }
        // Each list page (newest first) is an index range; the stage and consent ride
        // along so a tab's rows are told apart without reading the table.
        for (name, table, cols) in [
            (
                "ix_contacts_list",
                "contacts",
                &[
                    "organization_id",
                    "created_at",
                    "id",
                    "lifecycle_stage_id",
                    "consent_given",
                ][..],
            ),
            (
                "ix_contacts_stage_list",
                "contacts",
                &[
                    "organization_id",
                    "lifecycle_stage_id",
                    "created_at",
                    "id",
                    "consent_given",
                ][..],
            ),
            (
                "ix_contacts_owner_list",
                "contacts",
                &[
                    "organization_id",
                    "owner_id",
                    "created_at",
                    "id",
                    "lifecycle_stage_id",
                    "consent_given",
                ][..],
            ),
            (
                "ix_contacts_source_list",
                "contacts",
                &[
                    "organization_id",
                    "source",
                    "created_at",
                    "id",
                    "lifecycle_stage_id",
                    "consent_given",
                ][..],
            ),
            (
                "ix_contacts_stage_changed",
                "contacts",
                &["organization_id", "stage_changed_at", "lifecycle_stage_id"][..],
            ),
            (
                "ix_contact_tags_list",
                "contact_tags",
                &[
                    "organization_id",
                    "tag_key",
                    "contact_created_at",
                    "contact_id",
                    "contact_stage_id",
                    "contact_consent",
                ][..],
            ),
            (
                "ix_identities_list",
                "contact_identities",
                &[
                    "organization_id",
                    "channel_type",
                    "contact_created_at",
                    "contact_id",
                    "contact_stage_id",
                    "contact_consent",
                ][..],
            ),
        ] {
            m.create_index(index(name, table, cols, false)).await?;
        }
        m.create_index(index(
            "ix_identities_contact_type",
            "contact_identities",
            &["contact_id", "channel_type"],
            false,
        ))
        .await?;
        m.drop_index(
            Index::drop()
                .name("ix_identities_contact")
                .table("contact_identities")
                .to_owned(),
        )
        .await?;
        let statements = match m.get_database_backend() {
            DbBackend::Postgres => pg_statements(),
            _ => sqlite_statements(),
        };
        let conn = m.get_connection();
        for s in statements {
            conn.execute_unprepared(&s).await?;
        }
        Ok(())
    }

    async fn down(&self, _m: &SchemaManager) -> Result<(), DbErr> {
        Err(DbErr::Migration(
            "m0009 (contact counts) cannot be undone; restore a backup instead".into(),
        ))
    }
}
