//! Campaign, conversation and automation-log reads whose cost does not grow with the rows
//! they count:
//!
//! - **Maintained tallies.** `tallies` holds, per scope (a campaign, an organisation, an
//!   automation), dimension and key, how many rows there are and the sum of an amount:
//!   a campaign's recipients by status (with their cost), its failures by reason, its
//!   pending recipients not charged yet by market; an organisation's conversations by
//!   channel, status and assignee, and by the 15 minutes they were created or resolved in
//!   (the summary's "today" and "yesterday" in any time zone add up whole quarters); an
//!   automation's runs by result. A campaign's stats, cost,
//!   errors by reason and estimate, the campaign list's tabs and summary, the conversation
//!   tabs and the automation log's totals add up a handful of these rows instead of
//!   scanning a million recipients. Triggers keep them in the transaction of every change,
//!   whatever code writes it, as `m0009` does for contacts: SQLite's row triggers add to
//!   `tallies` at once; PostgreSQL's statement triggers append to `tally_deltas` (never
//!   waited on by another writer) and a worker folds them in.
//! - **Recipients whose contact may no longer be messaged** (opted out or consent withdrawn
//!   after they were added) carry `contact_blocked`, set by a trigger on the contact, so a
//!   campaign's estimate leaves them out by reading a partial index of just those.
//! - **Ordered indexes** for the recipients list (all, or one status) in the audience's
//!   order, the conversation list's tabs and summary periods, and an automation's log by
//!   result.

use sea_orm::DbBackend;
use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

use super::helpers::{index, pg_function, pg_statement_trigger};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// `(r, from, d, sql)`: the tallied facts of rows `r` read `from` (which holds no WHERE),
/// each weighing `d`, as `(scope, dim, key, n, amount)`, in the database's `sql`.
type Facts = fn(&str, &str, &str, &Dialect) -> String;

/// The SQL spelling of what the two databases write differently.
struct Dialect {
    /// A uuid column as 32 hex digits (`""` for null).
    hex: fn(&str) -> String,
    /// The 15-minute bucket of a time in ms, ten digits (`db::tallies::bucket_key`).
    bucket: fn(&str) -> String,
}

const SQLITE: Dialect = Dialect {
    hex: |x| format!("coalesce(lower(hex({x})), '')"),
    bucket: |x| format!("printf('%010d', {x} / 900000)"),
};

const POSTGRES: Dialect = Dialect {
    hex: |x| format!("coalesce(replace({x}::text, '-', ''), '')"),
    bucket: |x| format!("lpad(({x} / 900000)::text, 10, '0')"),
};

/// A table whose rows are tallied: its name, a short name for its triggers, the columns
/// whose change moves a row between tallies, and its facts.
struct Source {
    table: &'static str,
    short: &'static str,
    counted: &'static [&'static str],
    facts: Facts,
}

/// The dimension numbers are `db::tallies::Dim`.
const SOURCES: [Source; 3] = [
    Source {
        table: "campaign_recipients",
        short: "recipients",
        counted: &[
            "campaign_id",
            "status",
            "cost_micros",
            "error_message",
            "market",
            "queued_at",
        ],
        facts: |r, from, d, _| {
            format!(
                "SELECT {r}.campaign_id AS scope, 1 AS dim, {r}.status AS key, {d} AS n, \
                 {d} * {r}.cost_micros AS amount {from} \
                 UNION ALL SELECT {r}.campaign_id, 2, substr(coalesce({r}.error_message, ''), 1, {REASON_CHARS}), \
                 {d}, 0 {from} WHERE {r}.status = 'FAILED' \
                 UNION ALL SELECT {r}.campaign_id, 3, coalesce({r}.market, ''), {d}, 0 {from} \
                 WHERE {r}.status = 'PENDING' AND {r}.queued_at IS NULL"
            )
        },
    },
    Source {
        table: "conversations",
        short: "conversations",
        counted: &[
            "organization_id",
            "channel_type",
            "channel_id",
            "status",
            "assigned_to_user_id",
            "created_at",
            "resolved_at",
        ],
        facts: |r, from, d, sql| {
            format!(
                "SELECT {r}.organization_id AS scope, 4 AS dim, {r}.channel_type || ' ' || {} \
                 || ' ' || {r}.status || ' ' || {} AS key, {d} AS n, 0 AS amount {from} \
                 UNION ALL SELECT {r}.organization_id, 6, {} || ' ' || {r}.channel_type, {d}, 0 \
                 {from} \
                 UNION ALL SELECT {r}.organization_id, 7, {} || ' ' || {r}.channel_type, {d}, 0 \
                 {from} WHERE {r}.resolved_at IS NOT NULL",
                (sql.hex)(&format!("{r}.channel_id")),
                (sql.hex)(&format!("{r}.assigned_to_user_id")),
                (sql.bucket)(&format!("{r}.created_at")),
                (sql.bucket)(&format!("{r}.resolved_at")),
            )
        },
    },
    Source {
        table: "automation_runs",
        short: "runs",
        counted: &["automation_id", "result"],
        facts: |r, from, d, _| {
            format!(
                "SELECT {r}.automation_id AS scope, 5 AS dim, {r}.result AS key, {d} AS n, \
                 0 AS amount {from}"
            )
        },
    },
];

/// The characters of a failure reason a tally keeps (`db::tallies::REASON_CHARS`).
const REASON_CHARS: usize = 500;

/// A recipient's contact may not be messaged (`c` a contacts row).
fn blocked(c: &str) -> String {
    format!("({c}.opted_out OR NOT {c}.consent_given)")
}

/// The rows of a recipients partial index: pending, not charged yet.
const UNQUEUED: &str = "status = 'PENDING' AND queued_at IS NULL";

fn changed(old: &str, new: &str, cols: &[&str]) -> String {
    cols.iter()
        .map(|c| format!("{old}.{c} IS NOT {new}.{c}"))
        .collect::<Vec<_>>()
        .join(" OR ")
}

fn backfill(s: &Source, sql: &Dialect) -> String {
    format!(
        "INSERT INTO tallies (scope, dim, key, n, amount) \
         SELECT scope, dim, key, sum(n), sum(amount) FROM ({}) x GROUP BY scope, dim, key",
        (s.facts)("r", &format!("FROM {} r", s.table), "1", sql)
    )
}

/// The backfill of `contact_blocked` for the recipients already there.
pub(super) fn backfill_blocked() -> String {
    format!(
        "UPDATE campaign_recipients SET contact_blocked = true WHERE {UNQUEUED} \
         AND contact_id IN (SELECT c.id FROM contacts c WHERE {})",
        blocked("c")
    )
}

/// SQLite: a row trigger adds each fact to `tallies` at once.
fn sqlite_add(facts: &str) -> String {
    format!(
        "INSERT INTO tallies (scope, dim, key, n, amount) \
         SELECT scope, dim, key, n, amount FROM ({facts}) WHERE true \
         ON CONFLICT (scope, dim, key) DO UPDATE SET n = n + excluded.n, \
         amount = amount + excluded.amount;"
    )
}

fn sqlite_statements() -> Vec<String> {
    let mut out: Vec<String> = vec![
        "CREATE TABLE tallies (scope uuid_text NOT NULL, dim integer NOT NULL, \
         key text NOT NULL, n integer NOT NULL, amount integer NOT NULL, \
         PRIMARY KEY (scope, dim, key)) WITHOUT ROWID"
            .into(),
        // Never written on SQLite; present so readers are the same on both databases.
        "CREATE TABLE tally_deltas (scope uuid_text NOT NULL, dim integer NOT NULL, \
         key text NOT NULL, n integer NOT NULL, amount integer NOT NULL)"
            .into(),
        backfill_blocked(),
    ];
    let one = "FROM (SELECT 1)";
    for s in &SOURCES {
        let facts = |r: &str, d: &str| (s.facts)(r, one, d, &SQLITE);
        out.push(backfill(s, &SQLITE));
        out.push(format!(
            "CREATE TRIGGER tr_{}_tally_insert AFTER INSERT ON {} BEGIN {} END",
            s.short,
            s.table,
            sqlite_add(&facts("NEW", "1"))
        ));
        out.push(format!(
            "CREATE TRIGGER tr_{}_tally_update AFTER UPDATE OF {} ON {} WHEN {} BEGIN {} {} END",
            s.short,
            s.counted.join(", "),
            s.table,
            changed("OLD", "NEW", s.counted),
            sqlite_add(&facts("OLD", "-1")),
            sqlite_add(&facts("NEW", "1")),
        ));
        out.push(format!(
            "CREATE TRIGGER tr_{}_tally_delete AFTER DELETE ON {} BEGIN {} END",
            s.short,
            s.table,
            sqlite_add(&facts("OLD", "-1"))
        ));
    }
    out.push(format!(
        "CREATE TRIGGER tr_contacts_blocked AFTER UPDATE OF opted_out, consent_given \
         ON contacts WHEN {} IS NOT {} BEGIN \
         UPDATE campaign_recipients SET contact_blocked = {} \
         WHERE contact_id = NEW.id AND {UNQUEUED}; END",
        blocked("OLD"),
        blocked("NEW"),
        blocked("NEW"),
    ));
    out
}

/// PostgreSQL: statement triggers append one delta per key and statement.
fn pg_add(facts: &str) -> String {
    format!(
        "INSERT INTO tally_deltas (scope, dim, key, n, amount) \
         SELECT scope, dim, key, sum(n), sum(amount) FROM ({facts}) x \
         GROUP BY scope, dim, key HAVING sum(n) <> 0 OR sum(amount) <> 0;"
    )
}

fn pg_statements() -> Vec<String> {
    let mut out: Vec<String> = vec![
        "CREATE TABLE tallies (scope uuid NOT NULL, dim smallint NOT NULL, key text NOT NULL, \
         n bigint NOT NULL, amount bigint NOT NULL, PRIMARY KEY (scope, dim, key))"
            .into(),
        "CREATE TABLE tally_deltas (scope uuid NOT NULL, dim smallint NOT NULL, \
         key text NOT NULL, n bigint NOT NULL, amount bigint NOT NULL)"
            .into(),
        "CREATE INDEX ix_tally_deltas_scope ON tally_deltas (scope, dim, key)".into(),
        backfill_blocked(),
    ];
    for s in &SOURCES {
        let facts = |from: &str, d: &str| (s.facts)("r", from, d, &POSTGRES);
        let cols = |t: &str| {
            s.counted
                .iter()
                .map(|c| format!("{t}.{c}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        // PostgreSQL takes no column list on a trigger with transition tables: every
        // UPDATE runs it, and it counts only the rows whose counted columns changed.
        let update = format!(
            "WITH changed AS (SELECT o.id FROM old_rows o JOIN new_rows n ON n.id = o.id \
             WHERE ({}) IS DISTINCT FROM ({})) {}",
            cols("o"),
            cols("n"),
            pg_add(&format!(
                "{} UNION ALL {}",
                facts("FROM old_rows r JOIN changed USING (id)", "-1"),
                facts("FROM new_rows r JOIN changed USING (id)", "1"),
            ))
        );
        out.push(backfill(s, &POSTGRES));
        for (event, body, transition) in [
            (
                "INSERT",
                pg_add(&facts("FROM new_rows r", "1")),
                "NEW TABLE AS new_rows",
            ),
            (
                "UPDATE",
                update,
                "OLD TABLE AS old_rows NEW TABLE AS new_rows",
            ),
            (
                "DELETE",
                pg_add(&facts("FROM old_rows r", "-1")),
                "OLD TABLE AS old_rows",
            ),
        ] {
            let name = format!("tr_{}_tally_{}", s.short, event.to_lowercase());
            out.push(pg_function(&name, &body));
            out.push(pg_statement_trigger(&name, event, s.table, transition));
        }
    }
    out.push(pg_function(
        "tr_contacts_blocked",
        &format!(
            "UPDATE campaign_recipients r SET contact_blocked = {} \
             FROM old_rows o JOIN new_rows n ON n.id = o.id \
             WHERE {} IS DISTINCT FROM {} AND r.contact_id = n.id \
             AND r.status = 'PENDING' AND r.queued_at IS NULL;",
            blocked("n"),
            blocked("o"),
            blocked("n"),
        ),
    ));
    out.push(pg_statement_trigger(
        "tr_contacts_blocked",
        "UPDATE",
        "contacts",
        "OLD TABLE AS old_rows NEW TABLE AS new_rows",
    ));
    out
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(
            Table::alter()
                .table("campaign_recipients")
                .add_column(boolean("contact_blocked").default(false))
                .to_owned(),
        )
        .await?;
        for (name, table) in [
            ("ix_recipients_campaign_status", "campaign_recipients"),
            ("ix_conversations_org_updated", "conversations"),
        ] {
            m.drop_index(Index::drop().name(name).table(table).to_owned())
                .await?;
        }
        for (name, table, cols) in [
            // The recipients list in the audience's order: all of them (the status rides
            // along for a filter of several), or one status.
            (
                "ix_recipients_list",
                "campaign_recipients",
                &["campaign_id", "created_at", "id", "status"][..],
            ),
            (
                "ix_recipients_status_list",
                "campaign_recipients",
                &["campaign_id", "status", "created_at", "id"][..],
            ),
            // The conversation list's page (ids first), the summary's periods, and the
            // tabs' pages, latest activity first.
            (
                "ix_conversations_list",
                "conversations",
                &["organization_id", "updated_at", "id"][..],
            ),
            (
                "ix_conversations_org_created",
                "conversations",
                &["organization_id", "created_at"][..],
            ),
            (
                "ix_conversations_org_resolved",
                "conversations",
                &["organization_id", "resolved_at"][..],
            ),
            (
                "ix_conversations_org_status",
                "conversations",
                &["organization_id", "status", "updated_at"][..],
            ),
            (
                "ix_conversations_org_assignee",
                "conversations",
                &["organization_id", "assigned_to_user_id", "updated_at"][..],
            ),
            // An automation's log filtered by result, newest first.
            (
                "ix_runs_automation_result",
                "automation_runs",
                &["automation_id", "result", "started_at"][..],
            ),
        ] {
            m.create_index(index(name, table, cols, false)).await?;
        }
        // The recipients an estimate leaves out: few, so a partial index of just them.
        m.get_connection()
            .execute_unprepared(&format!(
                "CREATE INDEX ix_recipients_blocked ON campaign_recipients (campaign_id, market) \
                 WHERE contact_blocked = true AND {UNQUEUED}"
            ))
            .await?;
        // A campaign's recipients ready for the platform (charged, not attempted), in
        // charge order: a small partial index the sender reads its next chunk from.
        m.get_connection()
            .execute_unprepared(
                "CREATE INDEX ix_recipients_ready ON campaign_recipients \
                 (campaign_id, queued_at, id) WHERE status = 'PENDING' \
                 AND queued_at IS NOT NULL AND attempt_at IS NULL",
            )
            .await?;
        // A campaign's last replies: a partial index of the replied recipients only.
        m.get_connection()
            .execute_unprepared(
                "CREATE INDEX ix_recipients_replied ON campaign_recipients \
                 (campaign_id, replied_at) WHERE replied_at IS NOT NULL",
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
            "m0013 (tallies) cannot be undone; restore a backup instead".into(),
        ))
    }
}
