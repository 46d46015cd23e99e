//! Hands charged messages to the platform, at most once each: a sending campaign is leased,
//! and every recipient's attempt is recorded before its call and its result right after
//! (see [`crate::services::outbound`]). Paced per sender number; several calls in flight.
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

use std::collections::HashSet;

use sea_orm::sea_query::{Expr, Query};
use sea_orm::{ColumnTrait, Condition, EntityTrait, QueryFilter, QueryOrder, QuerySelect};
use tracing::Instrument;
use uuid::Uuid;
use wm_types::campaigns::CampaignStatus;

use crate::db::Unique;
use crate::db::entities::{campaign, recipient};
use crate::observe::health::Worker;
use crate::services::outbound::recipients as attempts;
use crate::services::outbound::send::Settled;
use crate::state::AppState;

mod chunk;

pub use chunk::SEND_CONCURRENCY;

/// What the calls of one pass came to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sends {
    /// Messages the platform accepted.
    pub sent: usize,
    /// Messages it rejected (refunded).
    pub rejected: usize,
    /// Messages it asked to retry later (queued again, charged once).
    pub retried: usize,
    /// Campaigns its answers paused.
    pub paused: usize,
    /// Messages whose outcome is unknown (left for a status or the reconciliation).
    pub ambiguous: usize,
}

impl Sends {
    fn add(&mut self, o: &Sends) {
        self.sent += o.sent;
        self.rejected += o.rejected;
        self.retried += o.retried;
        self.paused += o.paused;
        self.ambiguous += o.ambiguous;
    }
}

/// How long a worker holds a campaign; a heartbeat renews it every `HEARTBEAT` while
/// the campaign sends, so a killed replica's campaign is taken over within this time.
pub const LEASE_MS: i64 = 10_000;
/// How often a sending campaign's lease is renewed.
const HEARTBEAT: std::time::Duration = std::time::Duration::from_secs(3);
/// Campaigns sent side by side in one pass.
const CAMPAIGNS_AT_ONCE: usize = 4;
/// How long one pass sends one campaign before letting it go, so a campaign started while
/// others send for minutes is leased within this time (the next pass takes it with them).
const SLICE: std::time::Duration = std::time::Duration::from_secs(15);

/// Calls the platform for every ready message of every sending campaign (each campaign
/// once per pass), up to `CAMPAIGNS_AT_ONCE` campaigns side by side (their numbers have
/// their own paces).
pub async fn send_queued(state: &AppState) -> anyhow::Result<Sends> {
    let mut out = Sends::default();
    let mut done: HashSet<Uuid> = HashSet::new();
    loop {
        if state.stopping() {
            return Ok(out);
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
            return Ok(out);
        }
        let runs = leased.iter().map(|c| async move {
            let mut mine = Sends::default();
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
        .cond_where(attempts::ready(now))
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

/// Sends the campaign's ready messages chunk by chunk until none is left, its [`SLICE`] is
/// used, or the platform stops it; `Some(time)` when the platform asked to retry later: the
/// campaign is held until then (the earliest backoff among the messages it refused).
async fn send_campaign(
    state: &AppState,
    c: &campaign::Model,
    out: &mut Sends,
) -> anyhow::Result<Option<i64>> {
    let Some(ctx) = chunk::Context::load(state, c).await? else {
        return Ok(None);
    };
    let started = std::time::Instant::now();
    loop {
        if state.stopping() || started.elapsed() > SLICE {
            return Ok(None);
        }
        // A pause stops the remaining messages; sent ones stay sent.
        let status = campaign::Entity::find_by_id(c.id)
            .unique(&state.db.conn)
            .await?
            .map(|c| c.status);
        if status != Some(CampaignStatus::Sending) {
            return Ok(None);
        }
        let batch = attempts::ready_batch(&state.db.conn, c.id, ctx.chunk, state.now_ms()).await?;
        if batch.is_empty() {
            return Ok(None);
        }
        let results = chunk::send(state, &ctx, batch).await?;
        state.health.beat(Worker::Campaigns, state.now_ms());

        let mut stop = false;
        let mut hold: Option<i64> = None;
        for r in results {
            match r {
                Settled::Sent => out.sent += 1,
                Settled::Rejected { .. } => out.rejected += 1,
                Settled::Retry(until) => {
                    out.retried += 1;
                    stop = true;
                    hold = Some(hold.map_or(until, |h| h.min(until)));
                }
                Settled::Paused {
                    stop_reason,
                    reason,
                } => {
                    pause(state, c, &stop_reason, &reason).await?;
                    out.paused += 1;
                    stop = true;
                }
                Settled::Ambiguous => out.ambiguous += 1,
                Settled::NotCalled => {}
            }
        }
        if stop {
            return Ok(hold);
        }
        tokio::task::yield_now().await;
    }
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
