//! Batches too large for one transaction: a `now` send (or the scheduled start, or a resume)
//! of a campaign with more than [`Settings::charge_step`](crate::state::Settings) pending
//! recipients.
//!
//! 1. **Priced outside the writer** ([`price_all`]): the recipients are read a step at a
//!    time and priced exactly as [`sending::cost`] prices a batch (market, allowance, the one
//!    messaging rule for who may still be messaged).
//! 2. **Charged at once** ([`reserve`]): in one short transaction the wallet pays the whole
//!    batch (a conditional debit: never negative; a balance that does not cover it changes
//!    nothing), and the campaign keeps what the charge reserved, at which prices. The
//!    caller checks the audience did not change since it was priced (`audience_rev`).
//! 3. **Queued a step at a time** ([`queue_step`], the campaign worker): each step marks the
//!    next recipients queued at the prices charged, in its own transaction, and takes their
//!    cost off what is reserved. Recipients that may no longer be messaged by then fail
//!    uncharged; when the last step is queued, what was reserved for them is refunded.
//!
//! The platform is never called for a recipient before its step is queued, so "charged
//! before the platform" holds; a crash between steps resumes at the next one.

use crate::db::Unique;
use std::collections::{BTreeMap, HashMap};

use sea_orm::sea_query::Expr;
use sea_orm::{
    ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
};
use uuid::Uuid;
use wm_core::pricing::{RateCard, allowance_covered};
use wm_types::Money;
use wm_types::campaigns::{LedgerKind, TemplateCategory};
use wm_types::enums::RecipientStatus;

use crate::db::Db;
use crate::db::entities::{campaign, organization, recipient};
use crate::db::tallies::{self, Dim};
use crate::services::{sending, wallet};

/// Recipients read per step when a batch is only priced (a preview, a campaign's estimate).
pub const READ_STEP: u64 = 5_000;

/// A whole batch, priced.
#[derive(Debug, Default, Clone)]
pub struct Priced {
    /// What it costs.
    pub total: Money,
    /// Recipients in it.
    pub count: u64,
    /// Recipients charged or covered by the allowance.
    pub priced: u64,
    /// Of those, covered by the allowance.
    pub covered: u64,
    /// Recipients without a market (they fail uncharged).
    pub unpriceable: u64,
    /// Recipients whose contact may no longer be messaged (they fail uncharged).
    pub ineligible: u64,
    /// Per market: recipients priced and their subtotal (micro-units).
    pub by_market: BTreeMap<String, (u64, i64)>,
    /// The price per market the total is made of.
    pub prices: BTreeMap<String, i64>,
    /// The campaign's audience revision it was priced at.
    pub rev: i64,
}

/// A campaign's pending recipients not charged yet, in the audience's order, after `after`
/// (on PostgreSQL through `ix_recipients_unqueued`, which holds only these).
async fn unqueued(
    conn: &impl ConnectionTrait,
    campaign: Uuid,
    after: Option<(i64, Uuid)>,
    limit: u64,
) -> Result<Vec<recipient::Model>, DbErr> {
    let mut q = recipient::Entity::find()
        .filter(recipient::Column::CampaignId.eq(campaign))
        .filter(recipient::Column::Status.eq(RecipientStatus::Pending))
        .filter(recipient::Column::QueuedAt.is_null());
    if let Some(cursor) = after {
        q = q.filter(crate::db::after_key(
            Expr::col(recipient::Column::CreatedAt),
            Expr::col(recipient::Column::Id),
            cursor,
        ));
    }
    q.order_by_asc(recipient::Column::CreatedAt)
        .order_by_asc(recipient::Column::Id)
        .limit(limit)
        .all(conn)
        .await
}

/// A campaign's pending recipients not charged yet whose contact may no longer be
/// messaged, by market (`""`: none): read through the partial index that holds only them
/// (the flag is set by a trigger on the contact).
async fn blocked_by_market(
    conn: &impl ConnectionTrait,
    campaign: Uuid,
) -> Result<HashMap<String, u64>, DbErr> {
    let condition = sea_orm::Condition::all()
        .add(recipient::Column::CampaignId.eq(campaign))
        // The index's own condition, as it is written (SQLite matches it as written).
        .add(Expr::cust(
            "contact_blocked = true AND status = 'PENDING' AND queued_at IS NULL",
        ));
    Ok(crate::db::campaigns::recipients_by_market(conn, condition)
        .await?
        .into_iter()
        .map(|(m, n)| (m, u64::try_from(n).unwrap_or(0)))
        .collect())
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

/// The organisation's rate card.
pub async fn card_of(conn: &impl ConnectionTrait, org: Uuid) -> Result<RateCard, DbErr> {
    Ok(organization::Entity::find_by_id(org)
        .unique(conn)
        .await?
        .map_or_else(|| RateCard::shipped().clone(), |o| sending::rate_card(&o)))
}

/// Prices every pending recipient of `c` not charged yet from the maintained tallies (by
/// market, less those whose contact may no longer be messaged), so a million costs what ten
/// do. When the allowance covers some but not all, the ones it covers (the first in the
/// audience's order) are read, `step` at a time.
pub async fn price_all(
    conn: &impl ConnectionTrait,
    c: &campaign::Model,
    step: u64,
    now: i64,
) -> Result<Priced, DbErr> {
    let cat = sending::category(conn, c).await?;
    let card = card_of(conn, c.organization_id).await?;
    let included = organization::Entity::find_by_id(c.organization_id)
        .unique(conn)
        .await?
        .map_or(0, |o| {
            u64::try_from(o.included_utility_messages).unwrap_or(0)
        });
    let used = sending::allowance_used(conn, c.organization_id, now).await?;
    let mut left = match cat {
        TemplateCategory::Utility => allowance_covered(included, used, u64::MAX),
        _ => 0,
    };
    let mut p = Priced {
        rev: c.audience_rev,
        ..Priced::default()
    };
    let blocked = blocked_by_market(conn, c.id).await?;
    for t in tallies::read(conn, Dim::RecipientUnqueued, &[c.id]).await? {
        let all = u64::try_from(t.n).unwrap_or(0);
        let out = blocked.get(&t.key).copied().unwrap_or(0).min(all);
        let n = all - out;
        p.count += all;
        p.ineligible += out;
        let rate = Some(t.key.as_str())
            .filter(|m| !m.is_empty())
            .and_then(|m| Some((m, card.market(m)?)));
        match rate {
            None => p.unpriceable += n,
            Some(_) if n == 0 => {}
            Some((m, rate)) => {
                p.priced += n;
                let price = rate.price(cat).0;
                let e = p.by_market.entry(m.to_owned()).or_default();
                e.0 += n;
                e.1 += price.saturating_mul(i64::try_from(n).unwrap_or(i64::MAX));
                p.prices.insert(m.to_owned(), price);
            }
        }
    }
    if left >= p.priced {
        // The allowance covers every one (or there is none to cover any).
        p.covered = p.priced;
        p.by_market.values_mut().for_each(|(_, t)| *t = 0);
    } else if left > 0 {
        // It covers the first `left` in the audience's order: read just those.
        let mut after = None;
        while left > 0 {
            let chunk =
                unqueued(conn, c.id, after, step.min(left.saturating_mul(2).max(100))).await?;
            let Some(last) = chunk.last() else { break };
            after = Some((last.created_at, last.id));
            let blocked =
                sending::ineligible_contacts(conn, chunk.iter().map(|r| r.contact_id)).await?;
            let cost = sending::cost(&card, cat, &chunk, &blocked, left);
            left -= cost.covered;
            p.covered += cost.covered;
            let market: HashMap<Uuid, &str> = chunk
                .iter()
                .filter_map(|r| Some((r.id, r.market.as_deref()?)))
                .collect();
            for (id, _, covered) in &cost.priced {
                let (true, Some(m)) = (*covered, market.get(id)) else {
                    continue;
                };
                if let (Some(e), Some(price)) = (p.by_market.get_mut(*m), p.prices.get(*m)) {
                    e.1 -= price;
                }
            }
        }
    }
    p.total = Money(p.by_market.values().map(|(_, t)| t).sum());
    Ok(p)
}

/// Charges a priced batch in the caller's transaction: the wallet pays its total (or
/// nothing changes), the allowance it uses is taken, and the campaign keeps the open charge
/// for [`queue_step`].
pub async fn reserve(
    conn: &impl ConnectionTrait,
    c: &campaign::Model,
    p: &Priced,
    now: i64,
) -> Result<sending::Charge, DbErr> {
    let what = format!("Campaign \"{}\": {} messages", c.name, p.priced);
    if !wallet::charge(conn, c.organization_id, p.total, Some(c.id), &what, now).await? {
        crate::observe::metrics::campaign_batch(false);
        tracing::info!(campaign_id = %c.id, cost_micros = p.total.0, "campaign batch refused: balance too low");
        return Ok(sending::Charge::Insufficient);
    }
    sending::use_allowance(conn, c.organization_id, now, p.covered).await?;
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
    Ok(sending::Charge::Queued {
        queued: usize::try_from(p.priced).unwrap_or(usize::MAX),
        failed: usize::try_from(p.unpriceable + p.ineligible).unwrap_or(usize::MAX),
    })
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

/// What the next batch costs, for the balance check before a charge: the prepared price if
/// the audience has not changed since (`c` read in the caller's transaction).
pub async fn next_cost(
    conn: &impl ConnectionTrait,
    c: &campaign::Model,
    limit: Option<u64>,
    prepared: Option<&Priced>,
    step: u64,
    now: i64,
) -> Result<Money, DbErr> {
    Ok(match prepared {
        Some(p) if p.rev == c.audience_rev => p.total,
        Some(_) => price_all(conn, c, step, now).await?.total,
        None => {
            sending::price_next_batch(conn, c, limit, now)
                .await?
                .1
                .total
        }
    })
}

/// Charges the next batch in the caller's transaction: a prepared large batch as
/// [`reserve`] does (priced again, in the transaction, if its audience changed since), a
/// small one as [`sending::charge_next_batch`] does.
pub async fn charge(
    conn: &impl ConnectionTrait,
    c: &campaign::Model,
    limit: Option<u64>,
    prepared: Option<&Priced>,
    step: u64,
    now: i64,
) -> Result<sending::Charge, DbErr> {
    match prepared {
        Some(p) if p.rev == c.audience_rev => reserve(conn, c, p, now).await,
        Some(_) => reserve(conn, c, &price_all(conn, c, step, now).await?, now).await,
        None => sending::charge_next_batch(conn, c, limit, now).await,
    }
}

/// Recorded on a recipient the balance no longer covered when its step was queued.
pub const UNPAID: &str = "The wallet balance did not cover this message";

/// Whether the campaign has a charged batch not queued yet.
pub fn is_open(c: &campaign::Model) -> bool {
    c.open_charge_micros.is_some()
}

/// Queues the next `step` recipients of one campaign with an open charge, in one
/// transaction; closes the charge (refunding what is left) when none remain. Returns how
/// many it queued or failed, `None` when no charge is open.
pub async fn queue_step(db: &Db, step: u64, now: i64) -> Result<Option<u64>, DbErr> {
    // A read first: the worker looks often, and the writer is taken only for real work.
    let any = campaign::Entity::find()
        .select_only()
        .column(campaign::Column::Id)
        .filter(campaign::Column::OpenChargeMicros.is_not_null())
        .into_tuple::<Uuid>()
        .one(&db.conn)
        .await?;
    if any.is_none() {
        return Ok(None);
    }
    let txn = db.write().await?;
    let Some(c) = crate::db::skip_locked(
        db,
        campaign::Entity::find()
            .filter(campaign::Column::OpenChargeMicros.is_not_null())
            .order_by_asc(campaign::Column::UpdatedAt)
            .limit(1),
    )
    .one(&*txn)
    .await?
    else {
        return Ok(None);
    };
    let chunk = unqueued(&*txn, c.id, None, step).await?;
    let blocked = sending::ineligible_contacts(&*txn, chunk.iter().map(|r| r.contact_id)).await?;
    let prices: BTreeMap<String, i64> = c
        .open_prices
        .as_deref()
        .and_then(|s| serde_json::from_str(s).ok())
        .unwrap_or_default();
    let card = card_of(&*txn, c.organization_id).await?;
    let cat = sending::category(&*txn, &c).await?;
    let mut covered = u64::try_from(c.open_covered).unwrap_or(0);
    let mut open = c.open_charge_micros.unwrap_or(0);
    let mut batch = sending::BatchCost::default();
    // Recipients the reserve no longer pays for: a contact that could not be messaged when
    // the batch was charged (so was not charged for) and may be again now.
    let mut over = sending::BatchCost::default();
    for r in &chunk {
        if let Some(why) = blocked.get(&r.contact_id) {
            batch.ineligible.push((r.id, *why));
            continue;
        }
        // A market the charge did not price (its only recipients could not be messaged
        // then) is priced from the card now.
        let Some(price) = r.market.as_deref().and_then(|m| {
            prices
                .get(m)
                .copied()
                .or_else(|| Some(card.market(m)?.price(cat).0))
        }) else {
            batch.unpriceable.push(r.id);
            continue;
        };
        let price = &price;
        if covered > 0 {
            covered -= 1;
            batch.priced.push((r.id, 0, true));
        } else if *price <= open {
            open -= price;
            batch.total.0 += price;
            batch.priced.push((r.id, *price, false));
        } else {
            over.total.0 += price;
            over.priced.push((r.id, *price, false));
        }
    }
    if !over.priced.is_empty() {
        let what = format!("Campaign \"{}\": {} messages", c.name, over.priced.len());
        if wallet::charge(&*txn, c.organization_id, over.total, Some(c.id), &what, now).await? {
            batch.priced.append(&mut over.priced);
        } else {
            let ids: Vec<Uuid> = over.priced.iter().map(|(id, _, _)| *id).collect();
            sending::fail_uncharged(&*txn, &ids, UNPAID, now).await?;
        }
    }
    sending::mark_charged(&*txn, &batch, now).await?;
    let done = (chunk.len() as u64) < step;
    let mut upd = campaign::Entity::update_many().filter(campaign::Column::Id.eq(c.id));
    if done {
        let left = Money(open);
        let what = format!(
            "Campaign \"{}\": reserved for recipients that could no longer be messaged",
            c.name
        );
        wallet::credit(
            &*txn,
            c.organization_id,
            LedgerKind::Refund,
            left,
            Some(c.id),
            &what,
            now,
        )
        .await?;
        upd = upd
            .col_expr(
                campaign::Column::OpenChargeMicros,
                Expr::val(Option::<i64>::None),
            )
            .col_expr(campaign::Column::OpenCovered, Expr::val(0))
            .col_expr(
                campaign::Column::OpenPrices,
                Expr::val(Option::<String>::None),
            );
    } else {
        upd = upd
            .col_expr(campaign::Column::OpenChargeMicros, Expr::val(open))
            .col_expr(
                campaign::Column::OpenCovered,
                Expr::val(i32::try_from(covered).unwrap_or(i32::MAX)),
            );
    }
    upd.exec(&*txn).await?;
    txn.commit().await?;
    Ok(Some(chunk.len() as u64))
}
