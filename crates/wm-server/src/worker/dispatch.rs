//! Hands charged messages to the platform, at most once each: a sending campaign is leased,
//! and every recipient's attempt is recorded before its call and its result right after
//! (see [`crate::services::attempts`]). Paced per sender number; several calls in flight.
//!
//! What the platform answers decides what happens (the table lives in wm-core): SENT;
//! FAILED and refunded (and the contact opted out when the person asked); back in the queue
//! after a backoff (rate limits, outages: charged once, and the campaign is held for that
//! backoff so the platform is not hammered); the campaign paused with a `stopReason`
//! (token, account, template); or, when the outcome is unknown, left in SENDING for a
//! status webhook or the reconciliation window.
//!
//! A pause or a retry-later stops the chunk at once, not when it is done: the calls already
//! made finish and are recorded, the ones not started are not made (their recipients stay
//! queued, unclaimed and charged once), so an expired token costs at most
//! [`SEND_CONCURRENCY`] refused calls, not a chunk's worth.

use crate::db::Unique;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures::StreamExt;
use sea_orm::sea_query::{Expr, Query};
use sea_orm::{ColumnTrait, Condition, EntityTrait, QueryFilter, QueryOrder, QuerySelect};
use uuid::Uuid;
use wm_core::messaging::messageable;
use wm_core::provider::{OutboundMessage, PlatformAccount, SendError};
use wm_core::templates;
use wm_types::campaigns::CampaignStatus;

use tracing::Instrument;

use super::campaigns::Outcome;
use crate::db::entities::{campaign, contact, phone_number, recipient, template};
use crate::observe::health::Worker;
use crate::observe::metrics::{self, Source};
use crate::services::attempts;
use crate::state::AppState;

/// How long a worker holds a campaign; a heartbeat renews it every `HEARTBEAT` while
/// the campaign sends, so a killed replica's campaign is taken over within this time.
pub const LEASE_MS: i64 = 10_000;
/// How often a sending campaign's lease is renewed.
const HEARTBEAT: std::time::Duration = std::time::Duration::from_secs(3);
/// Most messages taken per chunk before the campaign's status is looked at again.
const CHUNK: u64 = 200;
/// A chunk takes at most this many seconds at the number's pace, well inside the lease.
const CHUNK_SECS: u64 = 5;
/// Campaigns sent side by side in one pass.
const CAMPAIGNS_AT_ONCE: usize = 4;
/// How long one pass sends one campaign before letting it go, so a campaign started while
/// others send for minutes is leased within this time (the next pass takes it with them).
const SLICE: std::time::Duration = std::time::Duration::from_secs(15);
/// Platform calls in flight at once for one campaign: also the most calls a campaign makes
/// after the platform's first answer that stops it (they were already under way).
pub const SEND_CONCURRENCY: usize = 16;

/// What became of one message.
enum Result1 {
    Sent,
    Rejected,
    /// Back in the queue until this time (ms).
    Retry(i64),
    Paused(String, String),
    Ambiguous,
    Skipped,
}

/// Calls the platform for every ready message of every sending campaign (each campaign
/// once per pass), up to `CAMPAIGNS_AT_ONCE` campaigns side by side (their numbers have
/// their own paces).
pub async fn send_queued(state: &AppState, out: &mut Outcome) -> anyhow::Result<()> {
    let mut done: HashSet<Uuid> = HashSet::new();
    loop {
        if state.stopping() {
            return Ok(());
        }
        let mut leased = Vec::new();
        while leased.len() < CAMPAIGNS_AT_ONCE {
            match lease(state, &done).await? {
                Some(c) => {
                    done.insert(c.id);
                    leased.push(c);
                }
                None => break,
            }
        }
        if leased.is_empty() {
            return Ok(());
        }
        let runs = leased.iter().map(|c| async move {
            let mut mine = Outcome::default();
            let span = tracing::info_span!("campaign_send", campaign_id = %c.id);
            let work = send_campaign(state, c, &mut mine).instrument(span);
            let result = with_heartbeat(state, c.id, work).await;
            (c.id, result, mine)
        });
        let mut first_error = None;
        for (id, result, mine) in futures::future::join_all(runs).await {
            let hold = match &result {
                Ok(hold) => *hold,
                Err(_) => None,
            };
            release(state, id, hold).await?;
            out.add(&mine);
            if let Err(e) = result {
                first_error.get_or_insert(e);
            }
        }
        if let Some(e) = first_error {
            return Err(e);
        }
    }
}

/// Leases a sending campaign with messages ready for the platform.
async fn lease(state: &AppState, skip: &HashSet<Uuid>) -> anyhow::Result<Option<campaign::Model>> {
    use sea_orm::ExprTrait;
    let now = state.now_ms();
    let txn = state.db.write().await?;
    // Correlated, so each sending campaign's check seeks its own ready recipients in
    // `ix_recipients_ready` instead of reading every pending recipient.
    let ready = Query::select()
        .expr(Expr::val(1))
        .from(recipient::Entity)
        .and_where(
            Expr::col((recipient::Entity, recipient::Column::CampaignId))
                .equals((campaign::Entity, campaign::Column::Id)),
        )
        .cond_where(crate::services::attempts::ready(now))
        .to_owned();
    let c = crate::db::skip_locked(
        &state.db,
        campaign::Entity::find()
            .filter(campaign::Column::Status.eq(CampaignStatus::Sending))
            .filter(
                Condition::any()
                    .add(campaign::Column::LockedUntil.is_null())
                    .add(campaign::Column::LockedUntil.lte(now)),
            )
            .filter(campaign::Column::Id.is_not_in(skip.iter().copied()))
            .filter(Expr::exists(ready))
            .order_by_asc(campaign::Column::UpdatedAt)
            .limit(1),
    )
    .one(&*txn)
    .await?;
    if let Some(c) = &c {
        campaign::Entity::update_many()
            .col_expr(campaign::Column::LockedUntil, Expr::val(now + LEASE_MS))
            .filter(campaign::Column::Id.eq(c.id))
            .exec(&*txn)
            .await?;
    }
    txn.commit().await?;
    Ok(c)
}

/// Runs `work` while renewing the campaign's lease every [`HEARTBEAT`]: however long a
/// chunk takes (a slow platform), the lease never lapses under a live worker, and it lapses
/// [`LEASE_MS`] after a dead one's last beat. The beat runs on a task of its own: were it
/// awaited in between polls of `work`, a renewal waiting for a pool connection would stop
/// the very sends that hold the connections (a deadlock until the pool's timeout).
async fn with_heartbeat<T>(
    state: &AppState,
    id: Uuid,
    work: impl std::future::Future<Output = T>,
) -> T {
    let done = tokio_util::sync::CancellationToken::new();
    let beat = tokio::spawn({
        let (state, done) = (state.clone(), done.clone());
        async move {
            loop {
                tokio::select! {
                    _ = done.cancelled() => return,
                    _ = tokio::time::sleep(HEARTBEAT) => {}
                }
                let renewed = campaign::Entity::update_many()
                    .col_expr(
                        campaign::Column::LockedUntil,
                        Expr::val(state.now_ms() + LEASE_MS),
                    )
                    .filter(campaign::Column::Id.eq(id))
                    .exec(&state.db.conn)
                    .await;
                if let Err(e) = renewed {
                    tracing::warn!(campaign = %id, error = %e, "the campaign's lease could not be renewed");
                }
            }
        }
    });
    // Dropped with this future too (a cancelled pass): the beat must not outlive the work.
    let stop = done.clone().drop_guard();
    let out = work.await;
    drop(stop);
    let _ = beat.await;
    out
}

/// Lets the campaign go; `hold`: not leased again (by any replica) before that time, the
/// platform having asked to retry later.
async fn release(state: &AppState, id: Uuid, hold: Option<i64>) -> anyhow::Result<()> {
    campaign::Entity::update_many()
        .col_expr(campaign::Column::LockedUntil, Expr::val(hold))
        .filter(campaign::Column::Id.eq(id))
        .exec(&state.db.conn)
        .await?;
    Ok(())
}

/// The sender number's platform account, with its token decrypted for the call.
pub fn account(state: &AppState, sender: &phone_number::Model) -> Option<PlatformAccount> {
    let phone_number_id = sender.platform_phone_number_id.clone()?;
    let access_token = match (&state.secret_key, &sender.access_token_enc) {
        (Some(key), Some(enc)) => match key.decrypt(enc) {
            Ok(t) => t,
            Err(e) => {
                tracing::warn!(number = %sender.id, error = %e, "the sender's access token cannot be decrypted");
                return None;
            }
        },
        _ => return None,
    };
    Some(PlatformAccount {
        phone_number_id,
        access_token,
    })
}

/// Sends the campaign's ready messages chunk by chunk until none is left, its [`SLICE`] is
/// used, or the platform stops it; `Some(time)` when the platform asked to retry later: the campaign is held
/// until then (the earliest backoff among the messages it refused).
async fn send_campaign(
    state: &AppState,
    c: &campaign::Model,
    out: &mut Outcome,
) -> anyhow::Result<Option<i64>> {
    let conn = &state.db.conn;
    let Some(sender) = phone_number::Entity::find_by_id(c.phone_number_id)
        .unique(conn)
        .await?
    else {
        return Ok(None);
    };
    let Some(tpl) = template::Entity::find_by_id(c.template_id)
        .unique(conn)
        .await?
    else {
        return Ok(None);
    };
    let account = account(state, &sender);
    let own_mps = sender.mps.and_then(|n| u32::try_from(n).ok());
    let chunk = match own_mps.unwrap_or(state.settings.provider_mps) {
        0 => CHUNK,
        mps => (u64::from(mps) * CHUNK_SECS).clamp(SEND_CONCURRENCY as u64, CHUNK),
    };
    let positions = templates::positions(&tpl.body_text);
    let vars_json: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&c.variables).unwrap_or_default();
    let vars = templates::parse_variables(&vars_json, &positions).unwrap_or_default();
    let started = std::time::Instant::now();
    loop {
        if state.stopping() || started.elapsed() > SLICE {
            return Ok(None);
        }
        // A pause stops the remaining messages; sent ones stay sent.
        let status = campaign::Entity::find_by_id(c.id)
            .unique(conn)
            .await?
            .map(|c| c.status);
        if status != Some(CampaignStatus::Sending) {
            return Ok(None);
        }
        let batch = attempts::ready_batch(conn, c.id, chunk, state.now_ms()).await?;
        if batch.is_empty() {
            return Ok(None);
        }
        let ids: Vec<Uuid> = batch.iter().map(|r| r.contact_id).collect();
        let contacts: HashMap<Uuid, contact::Model> = contact::Entity::find()
            .filter(contact::Column::Id.is_in(ids))
            .all(conn)
            .await?
            .into_iter()
            .map(|k| (k.id, k))
            .collect();
        let jobs: Vec<(recipient::Model, OutboundMessage, Option<String>)> = batch
            .into_iter()
            .map(|r| {
                let k = contacts.get(&r.contact_id);
                let values = templates::ContactValues {
                    full_name: k.and_then(|k| k.full_name.as_deref()),
                    primary_phone: Some(r.phone.as_str()),
                    primary_email: k.and_then(|k| k.primary_email.as_deref()),
                    company: k.and_then(|k| k.company.as_deref()),
                    country: k.and_then(|k| k.country.as_deref()),
                };
                // A variable this contact has no value for: refunded, not sent.
                let (parameters, empty) =
                    match templates::parameters(&tpl.body_text, &vars, &values) {
                        Ok(p) => (p, None),
                        Err(e) => (Vec::new(), Some(e.to_string())),
                    };
                let message = OutboundMessage {
                    correlation_id: r.id.to_string(),
                    from: sender.number_e164.clone(),
                    account: account.clone(),
                    to: r.phone.clone(),
                    template: tpl.name.clone(),
                    language: tpl.language.clone(),
                    parameters,
                    body: templates::render(&tpl.body_text, &vars, &values),
                };
                // The contact may have opted out since the batch was charged: refunded, not sent.
                let blocked = k
                    .and_then(|k| messageable(k.opted_out, k.consent_given, Some(())).err())
                    .map(|why| why.reason().to_owned())
                    .or(empty);
                (r, message, blocked)
            })
            .collect();
        // Raised by the first answer that stops the chunk.
        let halt = Arc::new(AtomicBool::new(false));
        let mut calls: Vec<futures::future::BoxFuture<'static, anyhow::Result<Result1>>> =
            Vec::with_capacity(jobs.len());
        for (r, m, blocked) in jobs {
            calls.push(Box::pin(one(
                state.clone(),
                Sender {
                    id: sender.id,
                    own_mps,
                },
                r,
                m,
                blocked,
                halt.clone(),
            )));
        }
        let span = tracing::info_span!("campaign_chunk", messages = calls.len());
        let results: Vec<Result1> = futures::stream::iter(calls)
            .buffer_unordered(SEND_CONCURRENCY)
            .collect::<Vec<_>>()
            .instrument(span)
            .await
            .into_iter()
            .collect::<Result<_, _>>()?;
        state.health.beat(Worker::Campaigns, state.now_ms());
        let provider = state.provider.name();
        let count = |f: fn(&Result1) -> bool| results.iter().filter(|r| f(r)).count();
        let sent = count(|r| matches!(r, Result1::Sent));
        let rejected = count(|r| matches!(r, Result1::Rejected));
        metrics::messages_sent(provider, Source::Campaign, sent);
        metrics::messages_failed(provider, Source::Campaign, "rejected", rejected);
        metrics::messages_refunded(provider, Source::Campaign, rejected);
        metrics::messages_failed(
            provider,
            Source::Campaign,
            "unavailable",
            count(|r| matches!(r, Result1::Retry(_))),
        );
        metrics::messages_failed(
            provider,
            Source::Campaign,
            "ambiguous",
            count(|r| matches!(r, Result1::Ambiguous)),
        );
        tracing::info!(sent, rejected, "chunk sent");
        let mut stop = false;
        let mut hold: Option<i64> = None;
        for r in results {
            match r {
                Result1::Sent => out.sent += 1,
                Result1::Rejected => out.rejected += 1,
                Result1::Retry(until) => {
                    out.retried += 1;
                    stop = true;
                    hold = Some(hold.map_or(until, |h| h.min(until)));
                }
                Result1::Paused(stop_reason, reason) => {
                    pause(state, c, &stop_reason, &reason).await?;
                    out.paused += 1;
                    stop = true;
                }
                Result1::Ambiguous => out.ambiguous += 1,
                Result1::Skipped => {}
            }
        }
        if stop {
            return Ok(hold);
        }
        tokio::task::yield_now().await;
    }
}

/// The number a chunk is sent from, and its own pace.
#[derive(Clone, Copy)]
struct Sender {
    id: Uuid,
    own_mps: Option<u32>,
}

/// One message: claim, call, record. Not made once `halt` is raised (by this chunk's first
/// answer that pauses the campaign or asks to retry later); raises it on such an answer.
async fn one(
    state: AppState,
    sender: Sender,
    r: recipient::Model,
    m: OutboundMessage,
    blocked: Option<String>,
    halt: Arc<AtomicBool>,
) -> anyhow::Result<Result1> {
    let r = &r;
    if let Some(reason) = blocked {
        let txn = state.db.write().await?;
        let done = attempts::rejected(&*txn, r, &reason, false, state.now_ms()).await?;
        txn.commit().await?;
        return Ok(if done {
            Result1::Rejected
        } else {
            Result1::Skipped
        });
    }
    if halt.load(Ordering::SeqCst) {
        return Ok(Result1::Skipped);
    }
    state.pacer.wait(sender.id, sender.own_mps).await?;
    if state.stopping() || halt.load(Ordering::SeqCst) {
        // Not claimed: whoever takes the campaign over (or the next pass) sends it.
        return Ok(Result1::Skipped);
    }
    {
        let txn = state.db.write().await?;
        let claimed = attempts::claim(&*txn, r.id, state.now_ms()).await?;
        txn.commit().await?;
        if !claimed {
            // Another worker has it, or the campaign stopped sending (paused by a user, a
            // template webhook or another call): then no other call of the chunk is made.
            if !sending(&state, r.campaign_id).await? {
                halt.store(true, Ordering::SeqCst);
            }
            return Ok(Result1::Skipped);
        }
    }
    let answer = state.provider.send(&m).await;
    if matches!(
        answer,
        Err(SendError::RetryLater(_) | SendError::Paused { .. })
    ) {
        halt.store(true, Ordering::SeqCst);
    }
    let now = state.now_ms();
    let txn = state.db.write().await?;
    let result = match answer {
        Ok(accepted) => {
            attempts::sent(&*txn, r, &accepted, now).await?;
            Result1::Sent
        }
        Err(SendError::Rejected { reason, opt_out }) => {
            attempts::rejected(&*txn, r, &reason, opt_out, now).await?;
            Result1::Rejected
        }
        Err(SendError::RetryLater(reason)) => {
            tracing::warn!(recipient = %r.id, %reason, "the platform asked to retry later");
            attempts::retry_later(&*txn, r, now).await?;
            Result1::Retry(now + attempts::backoff_ms(r.retries))
        }
        Err(SendError::Paused {
            stop_reason,
            reason,
        }) => {
            attempts::release(&*txn, r.id).await?;
            Result1::Paused(stop_reason, reason)
        }
        Err(SendError::Ambiguous(reason)) => {
            // Maybe sent: never re-sent; a status webhook or the reconciliation settles it.
            tracing::warn!(recipient = %r.id, %reason, "platform outcome unknown");
            Result1::Ambiguous
        }
    };
    txn.commit().await?;
    Ok(result)
}

/// Whether the campaign is still SENDING.
async fn sending(state: &AppState, id: Uuid) -> anyhow::Result<bool> {
    let status: Option<CampaignStatus> = campaign::Entity::find_by_id(id)
        .select_only()
        .column(campaign::Column::Status)
        .into_tuple()
        .one(&state.db.conn)
        .await?;
    Ok(status == Some(CampaignStatus::Sending))
}

/// Pauses a sending campaign for a platform reason (the core's transition decides).
async fn pause(
    state: &AppState,
    c: &campaign::Model,
    stop_reason: &str,
    reason: &str,
) -> anyhow::Result<()> {
    tracing::warn!(campaign = %c.id, %stop_reason, %reason, "campaign paused by the platform");
    let t = wm_core::campaigns::transition(
        CampaignStatus::Sending,
        &wm_core::campaigns::Action::PlatformBlocked(stop_reason.to_owned()),
        &wm_core::campaigns::Facts::default(),
    )
    .map_err(|e| anyhow::anyhow!(e.message()))?;
    crate::services::sending::apply(
        &state.db.conn,
        c.id,
        &[CampaignStatus::Sending],
        &t,
        state.now_ms(),
    )
    .await?;
    Ok(())
}
