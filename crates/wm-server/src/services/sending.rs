//! The sending pipeline's database steps, shared by the API (a `now` send charges its batch
//! before answering) and the worker (scheduled starts, staggered batches, provider calls).
//!
//! A batch is charged and its recipients marked queued in one transaction with a
//! conditional balance update, before the platform is called; unpriceable recipients fail
//! there, uncharged. Provider results are recorded afterwards; a rejected message is refunded.

use crate::db::Unique;
use std::collections::{BTreeMap, HashMap};

use chrono::{Datelike, TimeZone, Utc};
use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, ExprTrait, QueryFilter,
    QueryOrder, QuerySelect, UpdateMany,
};
use uuid::Uuid;
use wm_core::campaigns::Transition;
use wm_core::messaging::{Ineligible, messageable};
use wm_core::pricing::{RateCard, allowance_covered};
use wm_types::Money;
use wm_types::campaigns::{CampaignStatus, TemplateCategory};
use wm_types::enums::RecipientStatus;
use wm_types::events::{CampaignFinishedData, EventKind};

use crate::db::entities::{allowance_usage, campaign, contact, organization, recipient, template};
use crate::db::outbox;
use crate::services::wallet;

/// Why a recipient without a market fails.
pub const UNPRICEABLE: &str = "Unpriceable destination: the number has no known market";

/// `YYYY-MM` of an instant (UTC), the allowance's period.
pub fn month_of(ms: i64) -> String {
    let t = Utc.timestamp_millis_opt(ms).single().unwrap_or_default();
    format!("{:04}-{:02}", t.year(), t.month())
}

/// Included UTILITY messages already used this month.
pub async fn allowance_used(
    conn: &impl ConnectionTrait,
    org: Uuid,
    now: i64,
) -> Result<u64, DbErr> {
    Ok(allowance_usage::Entity::find_by_id((org, month_of(now)))
        .unique(conn)
        .await?
        .map_or(0, |u| u64::try_from(u.used).unwrap_or(0)))
}

/// Takes `n` included UTILITY messages from this month's allowance.
pub(crate) async fn use_allowance(
    conn: &impl ConnectionTrait,
    org: Uuid,
    now: i64,
    n: u64,
) -> Result<(), DbErr> {
    if n == 0 {
        return Ok(());
    }
    let n = i64::try_from(n).unwrap_or(i64::MAX);
    allowance_usage::Entity::insert(allowance_usage::ActiveModel {
        organization_id: Set(org),
        month: Set(month_of(now)),
        used: Set(n),
    })
    .on_conflict(
        OnConflict::columns([
            allowance_usage::Column::OrganizationId,
            allowance_usage::Column::Month,
        ])
        .value(
            allowance_usage::Column::Used,
            Expr::col((allowance_usage::Entity, allowance_usage::Column::Used)).add(n),
        )
        .to_owned(),
    )
    .exec_without_returning(conn)
    .await?;
    Ok(())
}

/// The template category of a campaign.
pub async fn category(
    conn: &impl ConnectionTrait,
    c: &campaign::Model,
) -> Result<TemplateCategory, DbErr> {
    Ok(template::Entity::find_by_id(c.template_id)
        .unique(conn)
        .await?
        .map(|t| t.category)
        .unwrap_or(TemplateCategory::Marketing))
}

/// How many recipients one batch of `c` takes: its `batchSize`, or all of them.
pub fn batch_limit(c: &campaign::Model) -> Option<u64> {
    c.batch_size.and_then(|n| u64::try_from(n).ok())
}

/// When the batch after one charged at `now` is due: `interval` minutes later, or never
/// for a campaign that is not staggered.
pub fn next_batch_at(interval_min: Option<i32>, now: i64) -> Option<i64> {
    interval_min.map(|m| now + i64::from(m) * 60_000)
}

/// The recipients the next batch would take: pending, not yet charged, oldest first.
pub async fn next_batch(
    conn: &impl ConnectionTrait,
    c: &campaign::Model,
    limit: Option<u64>,
) -> Result<Vec<recipient::Model>, DbErr> {
    let mut q = recipient::Entity::find()
        .filter(recipient::Column::CampaignId.eq(c.id))
        .filter(recipient::Column::Status.eq(RecipientStatus::Pending))
        .filter(recipient::Column::QueuedAt.is_null())
        .order_by_asc(recipient::Column::CreatedAt)
        .order_by_asc(recipient::Column::Id);
    if let Some(n) = limit {
        q = q.limit(n);
    }
    q.all(conn).await
}

/// What a batch costs.
#[derive(Debug, Default, Clone)]
pub struct BatchCost {
    /// Money to charge.
    pub total: Money,
    /// (recipient, price charged, covered by the allowance).
    pub priced: Vec<(Uuid, i64, bool)>,
    /// Recipients without a market.
    pub unpriceable: Vec<Uuid>,
    /// Recipients whose contact may no longer be messaged (opted out or without consent
    /// since joining the audience): failed, never charged.
    pub ineligible: Vec<(Uuid, Ineligible)>,
    /// How many the allowance covers.
    pub covered: u64,
}

/// Prices a batch (the allowance first covers UTILITY messages); recipients whose contact
/// is in `blocked` are set aside uncharged.
pub fn cost(
    card: &RateCard,
    category: TemplateCategory,
    batch: &[recipient::Model],
    blocked: &HashMap<Uuid, Ineligible>,
    allowance_left: u64,
) -> BatchCost {
    let mut out = BatchCost::default();
    let mut left = if category == TemplateCategory::Utility {
        allowance_left
    } else {
        0
    };
    for r in batch {
        if let Some(why) = blocked.get(&r.contact_id) {
            out.ineligible.push((r.id, *why));
            continue;
        }
        let Some(rate) = r.market.as_deref().and_then(|m| card.market(m)) else {
            out.unpriceable.push(r.id);
            continue;
        };
        if left > 0 {
            left -= 1;
            out.covered += 1;
            out.priced.push((r.id, 0, true));
        } else {
            let price = rate.price(category).0;
            out.total.0 += price;
            out.priced.push((r.id, price, false));
        }
    }
    out
}

/// The contacts of `contact_ids` that may not be messaged now, with why (the one rule of
/// `wm_core::messaging`; a recipient keeps the phone it joined with).
pub async fn ineligible_contacts(
    conn: &impl ConnectionTrait,
    contact_ids: impl IntoIterator<Item = Uuid>,
) -> Result<HashMap<Uuid, Ineligible>, DbErr> {
    let mut ids: Vec<Uuid> = contact_ids.into_iter().collect();
    ids.sort_unstable();
    ids.dedup();
    let mut out = HashMap::new();
    for chunk in ids.chunks(1000) {
        let rows: Vec<(Uuid, bool, bool)> = contact::Entity::find()
            .select_only()
            .column(contact::Column::Id)
            .column(contact::Column::OptedOut)
            .column(contact::Column::ConsentGiven)
            .filter(contact::Column::Id.is_in(chunk.to_vec()))
            .into_tuple()
            .all(conn)
            .await?;
        for (id, opted_out, consent_given) in rows {
            if let Err(why) = messageable(opted_out, consent_given, Some(())) {
                out.insert(id, why);
            }
        }
    }
    Ok(out)
}

/// The organisation's rate card: the shipped one with its overrides.
pub fn rate_card(org: &organization::Model) -> RateCard {
    let overrides: Vec<wm_types::campaigns::MarketRateInput> = org
        .rate_overrides
        .as_deref()
        .and_then(|s| serde_json::from_str(s).ok())
        .unwrap_or_default();
    if overrides.is_empty() {
        return RateCard::shipped().clone();
    }
    let rows: Vec<wm_core::pricing::MarketRate> = overrides
        .into_iter()
        .filter_map(|o| {
            Some(wm_core::pricing::MarketRate {
                market: o.market,
                label: o.label,
                marketing: o.marketing,
                utility: o.utility,
                authentication: o.authentication,
                effective_from: chrono::NaiveDate::parse_from_str(&o.effective_from, "%Y-%m-%d")
                    .ok()?,
            })
        })
        .collect();
    RateCard::shipped().with_overrides(&rows)
}

/// The batch and its cost, read in `conn` (for a balance check before charging).
pub async fn price_next_batch(
    conn: &impl ConnectionTrait,
    c: &campaign::Model,
    limit: Option<u64>,
    now: i64,
) -> Result<(Vec<recipient::Model>, BatchCost), DbErr> {
    let batch = next_batch(conn, c, limit).await?;
    let cat = category(conn, c).await?;
    let org = organization::Entity::find_by_id(c.organization_id)
        .unique(conn)
        .await?;
    let left = match &org {
        Some(o) => {
            let included = u64::try_from(o.included_utility_messages).unwrap_or(0);
            let used = allowance_used(conn, c.organization_id, now).await?;
            allowance_covered(included, used, batch.len() as u64)
        }
        None => 0,
    };
    let card = org
        .as_ref()
        .map_or_else(|| RateCard::shipped().clone(), rate_card);
    let blocked = ineligible_contacts(conn, batch.iter().map(|r| r.contact_id)).await?;
    let priced = cost(&card, cat, &batch, &blocked, left);
    Ok((batch, priced))
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

/// Charges the next batch and marks it queued, in the caller's transaction.
pub async fn charge_next_batch(
    conn: &impl ConnectionTrait,
    c: &campaign::Model,
    limit: Option<u64>,
    now: i64,
) -> Result<Charge, DbErr> {
    let (_, cost) = price_next_batch(conn, c, limit, now).await?;
    let what = format!("Campaign \"{}\": {} messages", c.name, cost.priced.len());
    if !wallet::charge(conn, c.organization_id, cost.total, Some(c.id), &what, now).await? {
        crate::observe::metrics::campaign_batch(false);
        tracing::info!(campaign_id = %c.id, cost_micros = cost.total.0, "campaign batch refused: balance too low");
        return Ok(Charge::Insufficient);
    }
    use_allowance(conn, c.organization_id, now, cost.covered).await?;
    mark_charged(conn, &cost, now).await?;
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

/// Whether the campaign has recipients still pending (queued or not): the maintained
/// tallies say so at no cost while it sends, and when they say none, the status index
/// confirms it, so a campaign completes only when no recipient row waits, whatever the
/// tallies hold.
pub async fn has_pending(conn: &impl ConnectionTrait, campaign: Uuid) -> Result<bool, DbErr> {
    if crate::db::campaigns::count(conn, campaign)
        .await?
        .stats
        .pending
        > 0
    {
        return Ok(true);
    }
    Ok(recipient::Entity::find()
        .select_only()
        .column(recipient::Column::Id)
        .filter(recipient::Column::CampaignId.eq(campaign))
        .filter(recipient::Column::Status.eq(RecipientStatus::Pending))
        .into_tuple::<Uuid>()
        .one(conn)
        .await?
        .is_some())
}

/// The UPDATE a core [`Transition`] makes: its status, its stop reason (set, cleared or left,
/// as the core decided) and `pausedAt` (now when it pauses, cleared otherwise). It is
/// conditional on the campaign still being in one of `from`, so of two concurrent changes one
/// wins; callers add their own columns (schedule, batch size) before executing it.
pub fn transition_update(
    campaign_id: Uuid,
    from: &[CampaignStatus],
    t: &Transition,
    now: i64,
) -> UpdateMany<campaign::Entity> {
    let mut upd = campaign::Entity::update_many()
        .col_expr(campaign::Column::Status, Expr::val(t.to))
        .col_expr(
            campaign::Column::PausedAt,
            Expr::val((t.to == CampaignStatus::Paused).then_some(now)),
        )
        .col_expr(campaign::Column::UpdatedAt, Expr::val(now));
    if let Some(reason) = &t.stop_reason {
        upd = upd.col_expr(campaign::Column::StopReason, Expr::val(reason.clone()));
    }
    upd.filter(campaign::Column::Id.eq(campaign_id))
        .filter(campaign::Column::Status.is_in(from.iter().copied()))
}

/// Applies a transition the service or worker did not start from the API (balance, platform);
/// `false` when the campaign had already left `from`.
pub async fn apply(
    conn: &impl ConnectionTrait,
    campaign_id: Uuid,
    from: &[CampaignStatus],
    t: &Transition,
    now: i64,
) -> Result<bool, DbErr> {
    Ok(transition_update(campaign_id, from, t, now)
        .exec(conn)
        .await?
        .rows_affected
        > 0)
}

/// Completes a sending campaign with nothing pending, as the core's `AllProcessed`
/// transition `t` says (COMPLETED), and pushes `campaign.finished`.
pub async fn complete_if_done(
    conn: &impl ConnectionTrait,
    c: &campaign::Model,
    t: &Transition,
    now: i64,
) -> Result<bool, DbErr> {
    if has_pending(conn, c.id).await? {
        return Ok(false);
    }
    let done = transition_update(c.id, &[CampaignStatus::Sending], t, now)
        // A large batch charged at once but not all queued yet still has recipients.
        .filter(campaign::Column::OpenChargeMicros.is_null())
        .col_expr(campaign::Column::CompletedAt, Expr::val(now))
        .col_expr(
            campaign::Column::NextBatchAt,
            Expr::val(Option::<i64>::None),
        )
        .exec(conn)
        .await?
        .rows_affected;
    if done == 0 {
        return Ok(false);
    }
    let stats = crate::db::campaigns::stats(conn, vec![c.id])
        .await?
        .remove(&c.id)
        .unwrap_or_default();
    let data = CampaignFinishedData {
        organization_id: c.organization_id,
        campaign_id: c.id,
        name: c.name.clone(),
        status: t.to.as_str().to_owned(),
        sent: stats.sent,
        failed: stats.failed,
    };
    outbox::push(
        conn,
        c.organization_id,
        EventKind::CampaignFinished,
        &data,
        now,
    )
    .await?;
    Ok(true)
}

/// Marks the contact's campaign message that was replied to as REPLIED: the message the
/// reply quotes (the platform's id in `replied_to`) when it is one of ours, else their
/// latest SENT, DELIVERED or READ one. A reply that quotes a known message credits that
/// message only, once: were it already REPLIED (a second answer to the same message), the
/// fallback would credit some other campaign with a reply it never got. `false` when
/// nothing was marked.
pub async fn mark_replied(
    conn: &impl ConnectionTrait,
    org: Uuid,
    contact: Uuid,
    replied_to: Option<&str>,
    now: i64,
) -> Result<bool, DbErr> {
    use RecipientStatus as R;
    let open = [R::Sent.as_str(), R::Delivered.as_str(), R::Read.as_str()];
    let mine = || {
        recipient::Entity::find()
            .filter(recipient::Column::OrganizationId.eq(org))
            .filter(recipient::Column::ContactId.eq(contact))
    };
    // The message quoted is credited whoever the sender resolved to (the person may write
    // from another form of the number, or a colleague may forward it).
    let quoted = match replied_to {
        Some(id) => {
            recipient::Entity::find()
                .filter(recipient::Column::OrganizationId.eq(org))
                .filter(recipient::Column::ProviderMessageId.eq(id))
                .one(conn)
                .await?
        }
        None => None,
    };
    let r = match quoted {
        Some(r) if open.contains(&r.status.as_str()) => r,
        // Known, but already replied to (or never reached the person): nothing to credit.
        Some(_) => return Ok(false),
        None => {
            let latest = mine()
                .filter(recipient::Column::Status.is_in(open))
                .order_by_desc(recipient::Column::SentAt)
                .one(conn)
                .await?;
            let Some(r) = latest else { return Ok(false) };
            r
        }
    };
    // Still open under the write: two deliveries of one reply credit it once.
    let marked = recipient::Entity::update_many()
        .col_expr(recipient::Column::Status, Expr::val(R::Replied))
        .col_expr(recipient::Column::RepliedAt, Expr::val(now))
        .col_expr(
            recipient::Column::DeliveredAt,
            Expr::col(recipient::Column::DeliveredAt).if_null(now),
        )
        .filter(recipient::Column::Id.eq(r.id))
        .filter(recipient::Column::Status.is_in(open))
        .exec(conn)
        .await?
        .rows_affected;
    if marked == 0 {
        return Ok(false);
    }
    crate::services::automations::on_campaign_replied(
        conn,
        org,
        r.contact_id,
        r.campaign_id,
        r.id,
        now,
    )
    .await?;
    Ok(true)
}
