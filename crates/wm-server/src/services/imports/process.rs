//! Writing one stored chunk: every row through `POST /contacts`'s validator and rules, the
//! duplicates by normalised phone skipped or applied as updates, the new contacts written by
//! the contact writer, and the job's progress — all in one transaction, so a chunk is
//! written once or not at all, whatever crashes.

use std::collections::HashMap;
use std::sync::Arc;

use uuid::Uuid;

use wm_core::imports::{MAX_KEPT_ERRORS, update_from_row};
use wm_core::validate::parse_value;
use wm_types::contacts::{CreateContact, TimelineKind};
use wm_types::imports::{DedupeMode, ImportRowError};

use super::upload::StoredRow;
use crate::db::entities::{contact, contact_import};
use crate::db::lookups::OrgLookups;
use crate::db::{self, contacts::fields_of};
use crate::error::ApiError;
use crate::services::contacts::{
    self as contacts, Author, OWNER_NOT_ORGS, Planned, STAGE_NOT_ORGS,
};
use crate::state::AppState;

/// A readable row: its number, its body as the route would parse it, and the rules' result.
struct Row {
    number: u64,
    body: CreateContact,
    planned: Planned,
}

/// What became of a chunk's rows.
#[derive(Default)]
struct Tally {
    created: i64,
    updated: i64,
    skipped: i64,
    failed: Vec<ImportRowError>,
}

impl Tally {
    fn fail(&mut self, row: u64, messages: Vec<String>) {
        self.failed.push(ImportRowError { row, messages });
    }
}

/// Turns stored rows into readable rows; the others are tallied as failed.
fn read_rows(stored: Vec<StoredRow>, tally: &mut Tally) -> Vec<Row> {
    let mut rows = Vec::with_capacity(stored.len());
    for r in stored {
        let Some(value) = r.body else {
            tally.fail(r.row, vec![r.error.unwrap_or_default()]);
            continue;
        };
        let parsed =
            parse_value::<CreateContact>(<CreateContact as wm_core::Validated>::schema(), value)
                .and_then(|body| Ok((Planned::from_body(body.clone())?, body)));
        match parsed {
            Ok((planned, body)) => rows.push(Row {
                number: r.row,
                body,
                planned,
            }),
            Err(messages) => tally.fail(r.row, messages),
        }
    }
    rows
}

/// A chunk read and put through the validator, the rules and the reference checks: what
/// can be done before its write transaction (so the worker prepares the next chunk while the
/// previous one is written).
pub struct Prepared {
    /// The chunk.
    pub seq: i32,
    read: usize,
    rows: Vec<Row>,
    tally: Tally,
    l: Arc<OrgLookups>,
}

/// Prepares the chunk `seq` of the import `job` of `org`, uploaded by `user`.
pub async fn prepare(
    state: AppState,
    job: Uuid,
    org: Uuid,
    user: Uuid,
    seq: i32,
) -> anyhow::Result<Prepared> {
    let conn = &state.db.conn;
    let chunk = db::imports::chunk(conn, job, seq)
        .await?
        .ok_or_else(|| anyhow::anyhow!("chunk {seq} of import {job} is missing"))?;
    let stored: Vec<StoredRow> = serde_json::from_str(&chunk.rows)?;
    let read = stored.len();
    let mut tally = Tally::default();
    let rows = read_rows(stored, &mut tally);
    let l = state
        .lookups
        .covering(
            conn,
            org,
            rows.iter()
                .filter_map(|r| r.planned.fields.lifecycle_stage_id),
            rows.iter()
                .filter_map(|r| r.planned.fields.owner_id)
                .chain([user]),
        )
        .await?;
    // After `covering`, an id the lookups do not know is not the organisation's.
    let rows: Vec<Row> = rows
        .into_iter()
        .filter(|r| {
            let f = &r.planned.fields;
            let mut messages = Vec::new();
            if f.lifecycle_stage_id.is_some_and(|s| l.stage(s).is_none()) {
                messages.push(STAGE_NOT_ORGS.to_owned());
            }
            if f.owner_id.is_some_and(|o| !l.users.contains_key(&o)) {
                messages.push(OWNER_NOT_ORGS.to_owned());
            }
            if messages.is_empty() {
                true
            } else {
                tally.fail(r.number, messages);
                false
            }
        })
        .collect();
    Ok(Prepared {
        seq,
        read,
        rows,
        tally,
        l,
    })
}

/// Writes a prepared chunk of `job` and records the job's progress with it, in one
/// transaction. `Ok(false)` when another worker had written it (the job moved on). `job`
/// holds the new progress after a write.
pub async fn write(
    state: &AppState,
    job: &mut contact_import::Model,
    prepared: Prepared,
    lease_until: i64,
) -> anyhow::Result<bool> {
    let Prepared {
        seq,
        read,
        rows,
        mut tally,
        l,
    } = prepared;
    let org = job.organization_id;
    let by = l
        .users
        .get(&job.user_id)
        .map_or_else(|| "Import".to_owned(), |u| u.full_name.clone());
    let author = Author {
        user_id: job.user_id,
        user_name: &by,
    };
    let update = job.dedupe == DedupeMode::Update;
    let now = state.now_ms();
    let txn = state.db.write().await?;
    let phones: Vec<_> = rows
        .iter()
        .filter_map(|r| r.planned.fields.primary_phone.as_ref())
        .collect();
    let mut holders = contacts::phone_holders(&*txn, org, &phones).await?;
    let mut new: Vec<Planned> = Vec::new();
    // Phone → index in `new`, for a phone twice in one chunk.
    let mut planned_phones: HashMap<String, usize> = HashMap::new();
    for row in rows {
        let phone = row
            .planned
            .fields
            .primary_phone
            .as_ref()
            .map(|p| p.as_str().to_owned());
        let holder = phone.as_ref().and_then(|p| holders.get(p)).cloned();
        let earlier = phone.as_ref().and_then(|p| planned_phones.get(p)).copied();
        match (holder, earlier) {
            (Some(_), _) | (None, Some(_)) if !update => tally.skipped += 1,
            (Some(before), _) => {
                let number = row.number;
                match update_existing(state, &*txn, &l, &by, author, &before, row, now).await? {
                    Updated::Saved(after) => {
                        tally.updated += 1;
                        if let Some(p) = phone {
                            holders.insert(p, *after);
                        }
                    }
                    Updated::Same => tally.skipped += 1,
                    Updated::Refused(messages) => tally.fail(number, messages),
                }
            }
            (None, Some(i)) => match update_from_row(&new[i].fields, row.body) {
                Ok((fields, changed)) if !changed.is_empty() => {
                    new[i].fields = fields;
                    tally.updated += 1;
                }
                Ok(_) => tally.skipped += 1,
                Err(messages) => tally.fail(row.number, messages),
            },
            (None, None) => {
                if let Some(p) = phone {
                    planned_phones.insert(p, new.len());
                }
                new.push(row.planned);
            }
        }
    }
    contacts::write_new(&*txn, org, author, &new, &l, now).await?;
    tally.created = i64::try_from(new.len()).unwrap_or(i64::MAX);
    let mut next = job.clone();
    record(&mut next, &tally, read, lease_until)?;
    if !db::imports::advance(&*txn, &next, seq).await? {
        return Ok(false);
    }
    txn.commit().await?;
    *job = next;
    Ok(true)
}

/// What became of an `UPDATE` row.
enum Updated {
    /// The contact as saved.
    Saved(Box<contact::Model>),
    /// The row changes nothing.
    Same,
    /// The row is refused, with the messages `PATCH /contacts/{id}` would give.
    Refused(Vec<String>),
}

/// An `UPDATE` row over the contact holding its phone. An error other than a refusal fails
/// the chunk (PostgreSQL has aborted the transaction), which is then written again.
#[allow(clippy::too_many_arguments)]
async fn update_existing(
    state: &AppState,
    conn: &impl sea_orm::ConnectionTrait,
    l: &OrgLookups,
    by: &str,
    author: Author<'_>,
    before: &contact::Model,
    row: Row,
    now: i64,
) -> Result<Updated, ApiError> {
    let note = row.planned.note.clone();
    let (fields, changed) = match update_from_row(&fields_of(before), row.body) {
        Ok(done) => done,
        Err(messages) => return Ok(Updated::Refused(messages)),
    };
    if changed.is_empty() && note.is_none() {
        return Ok(Updated::Same);
    }
    let after = if changed.is_empty() {
        before.clone()
    } else {
        match contacts::save_change(conn, state, l, by, before, &fields, &changed, now).await {
            Ok(after) => after,
            Err(ApiError::Validation(m)) => return Ok(Updated::Refused(m)),
            Err(ApiError::Business { message, .. }) => return Ok(Updated::Refused(vec![message])),
            Err(e) => return Err(e),
        }
    };
    if let Some(body) = note {
        let org = before.organization_id;
        db::notes::insert(conn, org, before.id, author.user_id, &body, now).await?;
        let entry = TimelineKind::Note {
            author: author.user_name.to_owned(),
            body,
        };
        db::timeline::add(conn, org, before.id, now, &entry).await?;
    }
    Ok(Updated::Saved(Box::new(after)))
}

/// Adds a chunk's tally to the job's progress.
fn record(
    job: &mut contact_import::Model,
    tally: &Tally,
    read: usize,
    lease_until: i64,
) -> anyhow::Result<()> {
    let failed = i64::try_from(tally.failed.len()).unwrap_or(i64::MAX);
    job.rows_processed += i64::try_from(read).unwrap_or(i64::MAX);
    job.created_count += tally.created;
    job.updated_count += tally.updated;
    job.skipped_count += tally.skipped;
    job.failed_count += failed;
    if !tally.failed.is_empty() {
        let mut kept: Vec<ImportRowError> =
            crate::db::stored::json("contact_imports.errors", job.id, &job.errors);
        if kept.len() < MAX_KEPT_ERRORS {
            let mut more = tally.failed.clone();
            more.sort_by_key(|e| e.row);
            kept.extend(more.into_iter().take(MAX_KEPT_ERRORS - kept.len()));
            job.errors = serde_json::to_string(&kept)?;
        }
    }
    job.lease_until = Some(lease_until);
    Ok(())
}
