//! A campaign's lifecycle in the database: the UPDATE a core transition makes (conditional
//! on the status it was decided from, so of two concurrent changes one wins), the one
//! sequence of every action that may charge a batch ([`charge_and_transition`]), and
//! completion when nothing is pending (`campaign.finished`).

use sea_orm::sea_query::Expr;
use sea_orm::{
    ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QuerySelect, UpdateMany,
};
use uuid::Uuid;
use wm_core::campaigns::{Action, CampaignError, Facts, Transition, transition};
use wm_types::campaigns::CampaignStatus;
use wm_types::enums::RecipientStatus;
use wm_types::events::{CampaignFinishedData, EventKind};

use super::charging::{Charge, charge_batch};
use super::pricing::{Priced, price_batch};
use crate::db::entities::{campaign, recipient};
use crate::db::outbox;
use crate::services::wallet;

/// The batch an action may charge.
#[derive(Debug, Clone, Copy)]
pub struct Batch<'a> {
    /// Recipients it takes (a staggered batch's size), or all pending.
    pub limit: Option<u64>,
    /// The whole batch priced before the transaction, when it is large
    /// ([`super::prepare`]).
    pub prepared: Option<&'a Priced>,
    /// Recipients per queued step of a large batch.
    pub step: u64,
    /// A batch charged earlier still waits for the platform (a resume): none is charged.
    pub paid: bool,
}

/// What [`charge_and_transition`] did. `Refused` and `Short` left the caller's transaction
/// unchanged; after `Lost` the caller rolls it back (the batch may have been charged).
#[derive(Debug)]
pub enum Outcome {
    /// The campaign took the transition (its batch charged when the transition sends one).
    Moved(Transition),
    /// The core refused the action.
    Refused(CampaignError),
    /// The transition sends a batch the balance did not cover when charged.
    Short,
    /// The campaign left the status it was read in (another change won).
    Lost,
}

/// The one sequence of every action that may charge a batch (a send, a resume, the
/// scheduled start, a staggered batch): the balance is weighed against the batch's cost, the
/// core decides, the batch is charged when the transition sends one, and the campaign takes
/// the transition with the caller's own `columns`, conditional on the status it was read
/// in. `c` is read under the caller's lock, in `conn`'s transaction.
pub async fn charge_and_transition(
    conn: &impl ConnectionTrait,
    c: &campaign::Model,
    action: &Action,
    mut facts: Facts,
    batch: Batch<'_>,
    columns: impl FnOnce(UpdateMany<campaign::Entity>, &Transition) -> UpdateMany<campaign::Entity>,
    now: i64,
) -> Result<Outcome, DbErr> {
    // Priced once, for the balance check and the charge.
    let priced = if batch.paid {
        None
    } else {
        Some(price_batch(conn, c, batch.limit, batch.prepared, batch.step, now).await?)
    };
    facts.balance_covers_next_batch = match &priced {
        None => true,
        Some(p) => wallet::balance(conn, c.organization_id).await?.0 >= p.total().0,
    };
    let t = match transition(c.status, action, &facts) {
        Ok(t) => t,
        Err(e) => return Ok(Outcome::Refused(e)),
    };
    if let Some(p) = priced.as_ref().filter(|_| t.send_batch_now)
        && charge_batch(conn, c, p, now).await? == Charge::Insufficient
    {
        return Ok(Outcome::Short);
    }
    let update = columns(transition_update(c.id, &[c.status], &t, now), &t);
    if update.exec(conn).await?.rows_affected == 0 {
        return Ok(Outcome::Lost);
    }
    Ok(Outcome::Moved(t))
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
