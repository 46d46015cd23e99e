//! Pricing: the organisation's rate card (the shipped one with its overrides), the monthly
//! UTILITY allowance, a batch's cost ([`cost`] for a batch read whole, [`price_all`] from
//! the maintained tallies for one too large to read), and who may still be messaged.

use std::collections::{BTreeMap, HashMap};

use chrono::{Datelike, TimeZone, Utc};
use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect,
};
use uuid::Uuid;
use wm_core::messaging::{Ineligible, messageable};
use wm_core::pricing::{RateCard, allowance_covered};
use wm_types::Money;
use wm_types::campaigns::TemplateCategory;
use wm_types::enums::RecipientStatus;

use crate::db::Unique;
use crate::db::entities::{allowance_usage, campaign, contact, organization, recipient, template};
use crate::db::tallies::{self, Dim};

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
            sea_orm::ExprTrait::add(
                Expr::col((allowance_usage::Entity, allowance_usage::Column::Used)),
                n,
            ),
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

/// The organisation's rate card: the shipped one with its overrides.
pub fn rate_card(org: &organization::Model) -> RateCard {
    let overrides: Vec<wm_types::campaigns::MarketRateInput> = crate::db::stored::json_opt(
        "organizations.rate_overrides",
        org.id,
        org.rate_overrides.as_deref(),
    );
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
pub(super) async fn unqueued(
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

/// The organisation's rate card.
pub async fn card_of(conn: &impl ConnectionTrait, org: Uuid) -> Result<RateCard, DbErr> {
    Ok(organization::Entity::find_by_id(org)
        .unique(conn)
        .await?
        .map_or_else(|| RateCard::shipped().clone(), |o| rate_card(&o)))
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
    let cat = category(conn, c).await?;
    let card = card_of(conn, c.organization_id).await?;
    let included = organization::Entity::find_by_id(c.organization_id)
        .unique(conn)
        .await?
        .map_or(0, |o| {
            u64::try_from(o.included_utility_messages).unwrap_or(0)
        });
    let used = allowance_used(conn, c.organization_id, now).await?;
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
            let blocked = ineligible_contacts(conn, chunk.iter().map(|r| r.contact_id)).await?;
            let cost = cost(&card, cat, &chunk, &blocked, left);
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

/// The next batch, priced in the caller's transaction once, for both the balance check
/// and the charge.
#[derive(Debug)]
pub enum NextBatch<'a> {
    /// A large batch, reserved whole and queued step by step.
    Large(std::borrow::Cow<'a, Priced>),
    /// A batch read whole, charged and queued in the transaction.
    Small(BatchCost),
}

impl NextBatch<'_> {
    /// What it costs.
    pub fn total(&self) -> Money {
        match self {
            NextBatch::Large(p) => p.total,
            NextBatch::Small(cost) => cost.total,
        }
    }
}

/// Prices the campaign's next batch (`c` read in the caller's transaction): the prepared
/// price of a large one while its audience is as it was, else priced now.
pub async fn price_batch<'a>(
    conn: &impl ConnectionTrait,
    c: &campaign::Model,
    limit: Option<u64>,
    prepared: Option<&'a Priced>,
    step: u64,
    now: i64,
) -> Result<NextBatch<'a>, DbErr> {
    Ok(match large_batch(conn, c, prepared, step, now).await? {
        Some(p) => NextBatch::Large(p),
        None => NextBatch::Small(price_next_batch(conn, c, limit, now).await?.1),
    })
}

/// The large batch a charge takes: the price prepared before the transaction while the
/// audience is as it was then, else priced again now (`c` read in the caller's
/// transaction); `None` for a batch small enough to price inside the transaction.
async fn large_batch<'a>(
    conn: &impl ConnectionTrait,
    c: &campaign::Model,
    prepared: Option<&'a Priced>,
    step: u64,
    now: i64,
) -> Result<Option<std::borrow::Cow<'a, Priced>>, DbErr> {
    use std::borrow::Cow;
    Ok(match prepared {
        Some(p) if p.rev == c.audience_rev => Some(Cow::Borrowed(p)),
        Some(_) => Some(Cow::Owned(price_all(conn, c, step, now).await?)),
        None => None,
    })
}
