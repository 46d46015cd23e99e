//! Cost preview and the sending actions (send, pause, resume); the state machine of
//! `wm_core::campaigns` decides every change.

use crate::db::Unique;
use sea_orm::sea_query::Expr;
use sea_orm::{ConnectionTrait, EntityTrait, UpdateMany};
use uuid::Uuid;
use wm_core::campaigns::{self as rules, Action, CampaignError, Facts, SendPlan, Transition};
use wm_core::pricing::allowance_covered;
use wm_core::templates;
use wm_types::campaigns::{
    Campaign, CampaignStatus, CostPreview, MarketCost, SendCampaign, TemplateCategory,
    WalletPreview,
};
use wm_types::{Money, Timestamp};

use crate::db::entities::{campaign, organization, template};
use crate::error::{ApiError, ApiResult};
use crate::services::{sending, wallet};
use crate::state::AppState;

use super::read::{campaign_error, get, load, load_locked};
use crate::db::campaigns::variables_of;

/// `GET /campaigns/{id}/preview-cost`: the cost of the pending recipients per market, the
/// wallet after it, and the included UTILITY messages left.
pub async fn preview_cost(state: &AppState, org: Uuid, id: Uuid) -> ApiResult<CostPreview> {
    let conn = &state.db.conn;
    let c = load(conn, org, id).await?;
    let o = organization::Entity::find_by_id(org)
        .unique(conn)
        .await?
        .ok_or_else(|| ApiError::not_found("Organization"))?;
    let now = state.now_ms();
    let p = sending::price_all(conn, &c, state.settings.charge_step, now).await?;
    let cat = sending::category(conn, &c).await?;
    let card = sending::rate_card(&o);
    let markets: Vec<MarketCost> = p
        .by_market
        .iter()
        .filter_map(|(code, (n, subtotal))| {
            let rate = card.market(code)?;
            Some(MarketCost {
                market: code.clone(),
                label: rate.label.clone(),
                recipient_count: *n,
                total_cost: rate.price(cat),
                subtotal: Money(*subtotal),
                rate_effective_from: rate.effective_from.to_string(),
            })
        })
        .collect();
    let balance = wallet::balance(conn, org).await?;
    let included = u64::try_from(o.included_utility_messages).unwrap_or(0);
    let used = sending::allowance_used(conn, org, now).await?;
    Ok(CostPreview {
        currency: o.currency,
        recipient_count: p.count,
        priceable_count: p.priced,
        unpriceable_count: p.unpriceable,
        estimated_total: p.total,
        by_market: markets,
        wallet: WalletPreview {
            balance,
            after_send: Money(balance.0 - p.total.0),
            sufficient: balance.0 >= p.total.0,
        },
        included_utility_remaining: (cat == TemplateCategory::Utility)
            .then(|| allowance_covered(included, used, included)),
    })
}

/// What the core needs to decide a send or a resume, but the balance (which
/// [`sending::charge_and_transition`] weighs against the batch it would charge).
pub(super) async fn facts(conn: &impl ConnectionTrait, c: &campaign::Model) -> ApiResult<Facts> {
    let recipients = crate::db::campaigns::count(conn, c.id).await?.stats.total;
    let t = template::Entity::find_by_id(c.template_id)
        .unique(conn)
        .await?;
    let positions = t
        .map(|t| templates::positions(&t.body_text))
        .unwrap_or_default();
    let vars = templates::parse_variables(&variables_of(c), &positions).unwrap_or_default();
    Ok(Facts {
        recipients,
        missing_variables: templates::missing(&positions, &vars),
        balance_covers_next_batch: false,
        stop_reason: c.stop_reason.clone(),
    })
}

/// A lifecycle outcome as the API answers it: `Ok` when the campaign moved, else the 400 of
/// why not (`lost`: the error when another change won).
fn answer(moved: sending::Outcome, lost: CampaignError) -> ApiResult<()> {
    match moved {
        sending::Outcome::Moved(_) => Ok(()),
        sending::Outcome::Refused(e) => Err(campaign_error(e)),
        sending::Outcome::Short => Err(campaign_error(CampaignError::InsufficientBalance)),
        sending::Outcome::Lost => Err(campaign_error(lost)),
    }
}

/// `POST /campaigns/{id}/send`: `now` charges everything and queues it before answering;
/// `scheduled` stores the start; `staggered` charges and queues the first batch (or
/// schedules it). A failed send changes neither the campaign nor the wallet.
pub async fn send(
    state: &AppState,
    org: Uuid,
    id: Uuid,
    body: SendCampaign,
) -> ApiResult<Campaign> {
    let now = state.now_ms();
    let plan = rules::send_plan(&body, Timestamp::from_millis(now).0).map_err(campaign_error)?;
    let limit = match &plan {
        SendPlan::Staggered { batch_size, .. } => Some(u64::from(*batch_size)),
        _ => None,
    };
    let step = state.settings.charge_step;
    // A large audience is priced before taking the writer.
    let prepared = match plan {
        SendPlan::Now => {
            let c = load(&state.db.conn, org, id).await?;
            sending::prepare(&state.db.conn, &c, limit, step, now).await?
        }
        _ => None,
    };
    let txn = state.db.write().await?;
    let c = load_locked(&*txn, org, id).await?;
    let f = facts(&*txn, &c).await?;
    let batch = sending::Batch {
        limit,
        prepared: prepared.as_ref(),
        step,
        paid: false,
    };
    let columns = |upd: UpdateMany<campaign::Entity>, t: &Transition| {
        let (start, size, interval) = match &plan {
            SendPlan::Now => (None, None, None),
            SendPlan::Scheduled { at } => (Some(at.timestamp_millis()), None, None),
            SendPlan::Staggered {
                start,
                batch_size,
                interval_min,
            } => (
                start.map(|s| s.timestamp_millis()),
                Some(*batch_size as i32),
                Some(*interval_min as i32),
            ),
        };
        let upd = upd
            .col_expr(campaign::Column::BatchSize, Expr::val(size))
            .col_expr(campaign::Column::BatchIntervalMin, Expr::val(interval));
        if t.to == CampaignStatus::Scheduled {
            upd.col_expr(campaign::Column::ScheduledAt, Expr::val(start))
                .col_expr(campaign::Column::NextBatchAt, Expr::val(start))
        } else {
            let next = sending::next_batch_at(interval, now);
            upd.col_expr(campaign::Column::StartedAt, Expr::val(now))
                .col_expr(campaign::Column::NextBatchAt, Expr::val(next))
        }
    };
    // Conditional on the status read under the lock: of two concurrent sends, one wins.
    let action = Action::Send(plan.clone());
    let moved = sending::charge_and_transition(&*txn, &c, &action, f, batch, columns, now).await?;
    answer(moved, CampaignError::InvalidState)?;
    txn.commit().await?;
    state.wake_campaigns();
    get(state, org, id).await
}

/// `POST /campaigns/{id}/pause`: only a sending campaign; queued messages wait, sent ones
/// are not recalled; `stopReason` stays null.
pub async fn pause(state: &AppState, org: Uuid, id: Uuid) -> ApiResult<Campaign> {
    let now = state.now_ms();
    let txn = state.db.write().await?;
    let c = load(&*txn, org, id).await?;
    let f = Facts {
        recipients: 0,
        missing_variables: Vec::new(),
        balance_covers_next_batch: true,
        stop_reason: c.stop_reason.clone(),
    };
    let t = rules::transition(c.status, &Action::Pause, &f).map_err(campaign_error)?;
    let done = sending::transition_update(c.id, &[c.status], &t, now)
        .exec(&*txn)
        .await?;
    if done.rows_affected == 0 {
        return Err(campaign_error(CampaignError::NotSending));
    }
    txn.commit().await?;
    get(state, org, id).await
}

/// `POST /campaigns/{id}/resume`: continues where it left off; a campaign paused for its
/// balance resumes only once the wallet covers the next batch (400 otherwise, still paused).
pub async fn resume(state: &AppState, org: Uuid, id: Uuid) -> ApiResult<Campaign> {
    let now = state.now_ms();
    let step = state.settings.charge_step;
    let prepared = {
        let c = load(&state.db.conn, org, id).await?;
        match c.status {
            CampaignStatus::Paused if !sending::is_open(&c) => {
                sending::prepare(&state.db.conn, &c, sending::batch_limit(&c), step, now).await?
            }
            _ => None,
        }
    };
    let txn = state.db.write().await?;
    let c = load(&*txn, org, id).await?;
    let f = facts(&*txn, &c).await?;
    // A batch charged before the pause goes out first; the next one is charged at its
    // time (and pauses the campaign again then if the wallet cannot pay it).
    let paid = sending::is_open(&c) || sending::paid_batch_waiting(&*txn, c.id).await?;
    let batch = sending::Batch {
        limit: sending::batch_limit(&c),
        prepared: prepared.as_ref(),
        step,
        paid,
    };
    let next = sending::next_batch_at(c.batch_interval_min, now);
    let columns = |upd: UpdateMany<campaign::Entity>, _: &Transition| {
        upd.col_expr(campaign::Column::NextBatchAt, Expr::val(next))
    };
    let moved =
        sending::charge_and_transition(&*txn, &c, &Action::Resume, f, batch, columns, now).await?;
    answer(moved, CampaignError::NotPaused)?;
    txn.commit().await?;
    state.wake_campaigns();
    get(state, org, id).await
}
