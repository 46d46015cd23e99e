//! Group commit of `POST /contacts` where one writer serves the database (SQLite).
//!
//! Each create used to take the writer for its own transaction: seven statements, each a
//! round trip to the SQLite connection's thread, while every other create waited. Creates
//! that arrive together now share one transaction: the batch is written with the same
//! multi-row statements as an import ([`write_new`]). If the batch fails as a whole (a phone
//! taken, by another contact or by one of the batch), each of its creates is written again
//! alone, so one conflict answers 409 to its own request only. On PostgreSQL, which has no
//! single writer, each create keeps its own transaction.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use sea_orm::DbErr;
use tokio::sync::{mpsc, oneshot};
use uuid::Uuid;
use wm_core::time::Clock;
use wm_types::contacts::IdentityRef;

use super::rows::check_refs;
use super::write::{Author, Planned, write_new};
use crate::db::entities::contact;
use crate::db::lookups::OrgLookups;
use crate::db::{Db, WriteTxn};
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;

/// Most creates in one transaction.
const MAX_BATCH: usize = 256;
/// Creates waiting for the writer before senders wait too.
const QUEUE: usize = 4_096;

/// A contact written, with its identities.
pub type Written = (contact::Model, Vec<IdentityRef>);
/// What a create comes to: refused by the reference checks (outer error), or written or
/// failed by the database (inner result; the caller maps a unique violation to 409).
pub type Outcome = ApiResult<Result<Written, DbErr>>;

/// One create to write.
pub struct Job {
    /// The organisation.
    pub org: Uuid,
    /// The author's id.
    pub user_id: Uuid,
    /// The author's name.
    pub user_name: String,
    /// The contact.
    pub item: Planned,
    /// The organisation's lookups, covering the contact's stage and owner.
    pub lookups: Arc<OrgLookups>,
    /// The request's `Idempotency-Key`, when it has one: its answer is kept in the
    /// transaction that writes the contact, whichever task writes it.
    pub keyed: Option<Arc<crate::idempotency::Keyed>>,
}

/// Keeps the create's answer (the contact as `POST /contacts` shows it) with its key, in
/// the transaction that wrote it.
async fn seal(txn: &WriteTxn, job: &Job, written: &Written) -> Result<(), DbErr> {
    let Some(keyed) = &job.keyed else {
        return Ok(());
    };
    let (row, identities) = written;
    let answer = crate::views::contacts::view(
        row,
        identities.clone(),
        Vec::new(),
        &job.lookups,
        crate::views::contacts::Shape::Detail,
    );
    keyed
        .seal(txn, axum::http::StatusCode::CREATED, &answer)
        .await
}

/// `POST /contacts`: the contact, its phone identity, its first note, a `created` timeline
/// entry and `contact.created`, all in one transaction (shared with the creates that arrive
/// meanwhile on SQLite). The unique indexes on the phone and
/// on identities decide conflicts (no read-then-write race); the answer is built from what
/// was written.
pub async fn create(
    state: &AppState,
    auth: &crate::keys::AuthContext,
    body: wm_types::contacts::CreateContact,
) -> ApiResult<wm_types::contacts::Contact> {
    let org = auth.org_id;
    let item = Planned::from_body(body).map_err(ApiError::Validation)?;
    let fields = &item.fields;
    let l = state
        .lookups
        .covering(
            &state.db.conn,
            org,
            fields.lifecycle_stage_id,
            fields.owner_id,
        )
        .await?;
    let phone = fields.primary_phone.clone();
    let job = Job {
        org,
        user_id: auth.user_id,
        user_name: auth.user_name.clone(),
        item,
        lookups: l.clone(),
        keyed: crate::idempotency::current(),
    };
    let creates = state.singleton(|s| Creates::new(s.db.clone(), s.clock.clone()));
    let (row, identities) = match creates.write(job).await? {
        Ok(w) => w,
        Err(e) if crate::error::is_unique_violation(&e) => {
            return Err(super::rows::phone_conflict(state, org, phone.as_ref()).await);
        }
        Err(e) => return Err(e.into()),
    };
    Ok(crate::views::contacts::view(
        &row,
        identities,
        Vec::new(),
        &l,
        crate::views::contacts::Shape::Detail,
    ))
}

struct Queued {
    job: Job,
    reply: oneshot::Sender<Outcome>,
}

/// The server's create writer: batches on SQLite, one transaction each on PostgreSQL.
pub struct Creates {
    db: Db,
    clock: Arc<dyn Clock>,
    queue: OnceLock<mpsc::Sender<Queued>>,
}

impl Creates {
    /// The writer of `db`. Its batching task starts with the first create (inside the
    /// runtime) and ends when the state is dropped.
    pub fn new(db: Db, clock: Arc<dyn Clock>) -> Self {
        Creates {
            db,
            clock,
            queue: OnceLock::new(),
        }
    }

    /// Writes one create, alone or with others that arrive meanwhile.
    pub async fn write(&self, job: Job) -> Outcome {
        if !self.db.single_writer() {
            let now = self.clock.now().timestamp_millis();
            return write_alone(&self.db, now, &job).await;
        }
        let queue = self.queue.get_or_init(|| {
            let (tx, rx) = mpsc::channel(QUEUE);
            tokio::spawn(run(self.db.clone(), self.clock.clone(), rx));
            tx
        });
        let (reply, answer) = oneshot::channel();
        queue
            .send(Queued { job, reply })
            .await
            .map_err(|_| ApiError::Internal(anyhow::anyhow!("the contact writer has stopped")))?;
        answer.await.map_err(|_| {
            ApiError::Internal(anyhow::anyhow!("the contact writer dropped a create"))
        })?
    }
}

/// The batching task: takes whatever is queued (up to [`MAX_BATCH`]) each time the
/// writer is free.
async fn run(db: Db, clock: Arc<dyn Clock>, mut rx: mpsc::Receiver<Queued>) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    while rx.recv_many(&mut batch, MAX_BATCH).await > 0 {
        let now = clock.now().timestamp_millis();
        write_batch(&db, now, std::mem::take(&mut batch)).await;
    }
}

async fn write_batch(db: &Db, now: i64, batch: Vec<Queued>) {
    if batch.len() > 1 {
        match write_together(db, now, &batch).await {
            Ok(Together::Written(results)) => {
                for (q, outcome) in batch.into_iter().zip(results) {
                    let _ = q.reply.send(outcome);
                }
                return;
            }
            // Each alone, below: the one that failed answers for itself.
            Ok(Together::Failed) | Err(_) => {}
        }
    }
    for q in batch {
        let outcome = write_alone(db, now, &q.job).await;
        let _ = q.reply.send(outcome);
    }
}

enum Together {
    /// Committed; an outcome per create, in order (refused ones were left out).
    Written(Vec<Outcome>),
    /// Rolled back.
    Failed,
}

/// The batch in one transaction, one [`write_new`] per organisation, author and copy of
/// the lookups (nearly always the one cached copy).
async fn write_together(db: &Db, now: i64, batch: &[Queued]) -> Result<Together, ApiError> {
    let txn = db.write().await?;
    let mut outcomes: Vec<Option<Outcome>> = Vec::with_capacity(batch.len());
    let mut groups: HashMap<(Uuid, Uuid, usize), Vec<usize>> = HashMap::new();
    let mut order = Vec::new();
    for (i, q) in batch.iter().enumerate() {
        let j = &q.job;
        let f = &j.item.fields;
        match check_refs(&*txn, &j.lookups, j.org, f.lifecycle_stage_id, f.owner_id).await {
            Err(e) => outcomes.push(Some(Err(e))),
            Ok(()) => {
                outcomes.push(None);
                let key = (j.org, j.user_id, Arc::as_ptr(&j.lookups) as usize);
                groups
                    .entry(key)
                    .or_insert_with(|| {
                        order.push(key);
                        Vec::new()
                    })
                    .push(i);
            }
        }
    }
    for key in order {
        let members = &groups[&key];
        let first = &batch[members[0]].job;
        let items: Vec<Planned> = members.iter().map(|&i| batch[i].job.item.clone()).collect();
        let author = Author {
            user_id: first.user_id,
            user_name: &first.user_name,
        };
        match write_new(&*txn, first.org, author, &items, &first.lookups, now).await {
            Ok(written) => {
                for (&i, w) in members.iter().zip(written) {
                    if seal(&txn, &batch[i].job, &w).await.is_err() {
                        return Ok(Together::Failed);
                    }
                    outcomes[i] = Some(Ok(Ok(w)));
                }
            }
            Err(_) => return Ok(Together::Failed),
        }
    }
    if txn.commit().await.is_err() {
        return Ok(Together::Failed);
    }
    Ok(Together::Written(
        outcomes
            .into_iter()
            .map(|o| {
                o.unwrap_or_else(|| {
                    Err(ApiError::Internal(anyhow::anyhow!(
                        "a create of the batch was not written"
                    )))
                })
            })
            .collect(),
    ))
}

/// One create in its own transaction.
async fn write_alone(db: &Db, now: i64, job: &Job) -> Outcome {
    let txn = db.write().await?;
    let f = &job.item.fields;
    check_refs(
        &*txn,
        &job.lookups,
        job.org,
        f.lifecycle_stage_id,
        f.owner_id,
    )
    .await?;
    let author = Author {
        user_id: job.user_id,
        user_name: &job.user_name,
    };
    let written = write_new(
        &*txn,
        job.org,
        author,
        std::slice::from_ref(&job.item),
        &job.lookups,
        now,
    )
    .await;
    match written {
        Ok(mut w) => {
            let Some(w) = w.pop() else {
                return Ok(Err(DbErr::Custom(
                    "the contact writer wrote nothing".into(),
                )));
            };
            seal(&txn, job, &w).await?;
            txn.commit().await?;
            Ok(Ok(w))
        }
        Err(e) => Ok(Err(e)),
    }
}
