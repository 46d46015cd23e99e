//! Charging a batch: [`charge_batch`] is the one entry, given the batch
//! [`super::price_batch`] priced. A batch small enough for one transaction is charged and
//! queued in the caller's transaction (`charge_cost`); one too large for it (see below) is
//! reserved and queued step by step.
//!
//! Batches too large for one transaction: a `now` send (or the scheduled start, or a resume)
//! of a campaign with more than [`Settings::charge_step`](crate::state::Settings) pending
//! recipients.
//!
//! 1. **Priced outside the writer** ([`price_all`]): the recipients are read a step at a
//!    time and priced exactly as [`super::cost`] prices a batch (market, allowance, the one
//!    messaging rule for who may still be messaged).
//! 2. **Charged at once** ([`reserve`]): in one short transaction the wallet pays the whole
//!    batch (a conditional debit: never negative; a balance that does not cover it changes
//!    nothing), and the campaign keeps what the charge reserved, at which prices. The
//!    caller checks the audience did not change since it was priced (`audience_rev`).
//! 3. **Queued a step at a time** ([`super::queue_step`], the queue worker): each step marks the
//!    next recipients queued at the prices charged, in its own transaction, and takes their
//!    cost off what is reserved. Recipients that may no longer be messaged by then fail
//!    uncharged; when the last step is queued, what was reserved for them is refunded.
//!
//! The platform is never called for a recipient before its step is queued, so "charged
//! before the platform" holds; a crash between steps resumes at the next one.

use std::collections::BTreeMap;

use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QuerySelect};
use uuid::Uuid;
use wm_types::enums::RecipientStatus;

use super::pricing::{BatchCost, NextBatch, Priced, UNPRICEABLE, price_all, use_allowance};
use crate::db::entities::{campaign, recipient};
use crate::services::wallet;

/// How many recipients one batch of `c` takes: its `batchSize`, or all of them.
pub fn batch_limit(c: &campaign::Model) -> Option<u64> {
    c.batch_size.and_then(|n| u64::try_from(n).ok())
}

/// When the batch after one charged at `now` is due: `interval` minutes later, or never
/// for a campaign that is not staggered.
pub fn next_batch_at(interval_min: Option<i32>, now: i64) -> Option<i64> {
    interval_min.map(|m| now + i64::from(m) * 60_000)
}

/// The result of charging a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Charge {
    /// Charged; this many recipients are queued for the platform and this many failed
    /// uncharged.
    Queued {
        /// Queued.
        queued: usize,
        /// Failed uncharged (unpriceable, or the contact may no longer be messaged).
        failed: usize,
    },
    /// The balance does not cover it; nothing changed.
    Insufficient,
}

/// Charges a priced batch in the caller's transaction: a large one as [`reserve`] does, a
/// small one as `charge_cost` does.
pub async fn charge_batch(
    conn: &impl ConnectionTrait,
    c: &campaign::Model,
    batch: &NextBatch<'_>,
    now: i64,
) -> Result<Charge, DbErr> {
    match batch {
        NextBatch::Large(p) => reserve(conn, c, p, now).await,
        NextBatch::Small(cost) => charge_cost(conn, c, cost, now).await,
    }
}

/// Whether the campaign's next whole batch holds more than `step` recipients.
pub async fn is_large(
    conn: &impl ConnectionTrait,
    campaign: Uuid,
    step: u64,
) -> Result<bool, DbErr> {
    let some: Vec<Uuid> = recipient::Entity::find()
        .select_only()
        .column(recipient::Column::Id)
        .filter(recipient::Column::CampaignId.eq(campaign))
        .filter(recipient::Column::Status.eq(RecipientStatus::Pending))
        .filter(recipient::Column::QueuedAt.is_null())
        .limit(step + 1)
        .into_tuple()
        .all(conn)
        .await?;
    Ok(some.len() as u64 > step)
}

/// Prices the campaign's next batch before any transaction when it is large (the whole
/// audience, more than `step` recipients); `None` for a batch small enough to price and
/// charge inside the caller's transaction.
pub async fn prepare(
    conn: &impl ConnectionTrait,
    c: &campaign::Model,
    limit: Option<u64>,
    step: u64,
    now: i64,
) -> Result<Option<Priced>, DbErr> {
    if limit.is_some() || !is_large(conn, c.id, step).await? {
        return Ok(None);
    }
    Ok(Some(price_all(conn, c, step, now).await?))
}

/// Charges a priced batch in the caller's transaction: the wallet pays its total (or
/// nothing changes), the allowance it uses is taken, and the campaign keeps the open charge
/// for [`super::queue_step`].
pub async fn reserve(
    conn: &impl ConnectionTrait,
    c: &campaign::Model,
    p: &Priced,
    now: i64,
) -> Result<Charge, DbErr> {
    let what = format!("Campaign \"{}\": {} messages", c.name, p.priced);
    if !wallet::charge(conn, c.organization_id, p.total, Some(c.id), &what, now).await? {
        crate::observe::metrics::campaign_batch(false);
        tracing::info!(campaign_id = %c.id, cost_micros = p.total.0, "campaign batch refused: balance too low");
        return Ok(Charge::Insufficient);
    }
    use_allowance(conn, c.organization_id, now, p.covered).await?;
    campaign::Entity::update_many()
        .col_expr(campaign::Column::OpenChargeMicros, Expr::val(p.total.0))
        .col_expr(
            campaign::Column::OpenCovered,
            Expr::val(i32::try_from(p.covered).unwrap_or(i32::MAX)),
        )
        .col_expr(
            campaign::Column::OpenPrices,
            Expr::val(serde_json::to_string(&p.prices).unwrap_or_default()),
        )
        .filter(campaign::Column::Id.eq(c.id))
        .exec(conn)
        .await?;
    crate::observe::metrics::campaign_batch(true);
    tracing::info!(
        campaign_id = %c.id,
        charged = p.priced,
        cost_micros = p.total.0,
        "large campaign batch charged; queued step by step"
    );
    Ok(Charge::Queued {
        queued: usize::try_from(p.priced).unwrap_or(usize::MAX),
        failed: usize::try_from(p.unpriceable + p.ineligible).unwrap_or(usize::MAX),
    })
}

/// Charges a batch priced whole ([`super::price_batch`]) and marks it queued, in the
/// caller's transaction.
async fn charge_cost(
    conn: &impl ConnectionTrait,
    c: &campaign::Model,
    cost: &BatchCost,
    now: i64,
) -> Result<Charge, DbErr> {
    let what = format!("Campaign \"{}\": {} messages", c.name, cost.priced.len());
    if !wallet::charge(conn, c.organization_id, cost.total, Some(c.id), &what, now).await? {
        crate::observe::metrics::campaign_batch(false);
        tracing::info!(campaign_id = %c.id, cost_micros = cost.total.0, "campaign batch refused: balance too low");
        return Ok(Charge::Insufficient);
    }
    use_allowance(conn, c.organization_id, now, cost.covered).await?;
    mark_charged(conn, cost, now).await?;
    crate::observe::metrics::campaign_batch(true);
    tracing::info!(
        campaign_id = %c.id,
        queued = cost.priced.len(),
        unpriceable = cost.unpriceable.len(),
        ineligible = cost.ineligible.len(),
        cost_micros = cost.total.0,
        "campaign batch charged"
    );
    Ok(Charge::Queued {
        queued: cost.priced.len(),
        failed: cost.unpriceable.len() + cost.ineligible.len(),
    })
}

/// Marks a charged batch's recipients: the priced ones queued at their price, the others
/// FAILED uncharged with their reason (no market, or a contact that may no longer be
/// messaged). A handful of UPDATEs per batch, grouped by price.
pub(crate) async fn mark_charged(
    conn: &impl ConnectionTrait,
    cost: &BatchCost,
    now: i64,
) -> Result<(), DbErr> {
    let mut groups: BTreeMap<(i64, bool), Vec<Uuid>> = Default::default();
    for (id, price, covered) in &cost.priced {
        groups.entry((*price, *covered)).or_default().push(*id);
    }
    for ((price, covered), ids) in groups {
        for chunk in ids.chunks(500) {
            recipient::Entity::update_many()
                .col_expr(recipient::Column::QueuedAt, Expr::val(now))
                .col_expr(recipient::Column::CostMicros, Expr::val(price))
                .col_expr(recipient::Column::CoveredByAllowance, Expr::val(covered))
                .filter(recipient::Column::Id.is_in(chunk.to_vec()))
                .exec(conn)
                .await?;
        }
    }
    let mut uncharged: BTreeMap<&str, Vec<Uuid>> = BTreeMap::new();
    uncharged.insert(UNPRICEABLE, cost.unpriceable.clone());
    for (id, why) in &cost.ineligible {
        uncharged.entry(why.reason()).or_default().push(*id);
    }
    for (reason, ids) in uncharged {
        fail_uncharged(conn, &ids, reason, now).await?;
    }
    crate::observe::metrics::messages_failed(
        "none",
        crate::observe::metrics::Source::Campaign,
        "unpriceable",
        cost.unpriceable.len(),
    );
    crate::observe::metrics::messages_failed(
        "none",
        crate::observe::metrics::Source::Campaign,
        "ineligible",
        cost.ineligible.len(),
    );
    Ok(())
}

/// Fails recipients before any charge or call, with `reason` as their `errorMessage`.
pub(crate) async fn fail_uncharged(
    conn: &impl ConnectionTrait,
    ids: &[Uuid],
    reason: &str,
    now: i64,
) -> Result<(), DbErr> {
    for chunk in ids.chunks(500) {
        recipient::Entity::update_many()
            .col_expr(
                recipient::Column::Status,
                Expr::val(RecipientStatus::Failed),
            )
            .col_expr(recipient::Column::FailedAt, Expr::val(now))
            .col_expr(recipient::Column::ErrorMessage, Expr::val(reason))
            .col_expr(recipient::Column::QueuedAt, Expr::val(now))
            .filter(recipient::Column::Id.is_in(chunk.to_vec()))
            .exec(conn)
            .await?;
    }
    Ok(())
}

/// Whether a batch charged earlier still waits for the platform (queued, not attempted).
pub async fn paid_batch_waiting(
    conn: &impl ConnectionTrait,
    campaign: Uuid,
) -> Result<bool, DbErr> {
    Ok(recipient::Entity::find()
        .select_only()
        .column(recipient::Column::Id)
        .filter(recipient::Column::CampaignId.eq(campaign))
        .filter(recipient::Column::Status.eq(RecipientStatus::Pending))
        .filter(recipient::Column::QueuedAt.is_not_null())
        .filter(recipient::Column::AttemptAt.is_null())
        .into_tuple::<Uuid>()
        .one(conn)
        .await?
        .is_some())
}

/// Whether the campaign has a charged batch not queued yet.
pub fn is_open(c: &campaign::Model) -> bool {
    c.open_charge_micros.is_some()
}
