//! Kept webhooks applied in batches: a claim takes up to [`BATCH`] of them in one
//! transaction (`FOR UPDATE SKIP LOCKED` on PostgreSQL, so replicas share the backlog
//! without taking a webhook twice), and each run of webhooks that hold only statuses is
//! applied in one transaction with the mark that they are done
//! ([`grouped::apply_many`](crate::services::outbound::grouped::apply_many)): a crash
//! leaves the whole run to be applied again once its claim lapses, never half of it. A
//! webhook with anything else (an inbound message, a template's status) is applied on its
//! own, at its place in the order, as [`super::apply::apply_claimed`] always did; and a run whose
//! transaction fails is applied again webhook by webhook, so one bad webhook holds back no
//! other.

use std::collections::HashMap;

use sea_orm::sea_query::Expr;
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
};
use uuid::Uuid;
use wm_core::platform::{PlatformEvent, Unapplied};
use wm_core::provider::StatusUpdate;

use super::apply::{CLAIM_MS, Parsed, apply_claimed, endpoint, mark_processed, parse};
use super::unapplied;
use crate::db::entities::platform_event;
use crate::services::outbound::grouped;
use crate::state::AppState;

/// How many kept webhooks one claim takes.
pub const BATCH: u64 = 500;

/// Applies kept webhooks not applied yet (the ones just received, or any a crash left),
/// one claimed batch; returns how many were taken (0: none is waiting).
pub async fn apply_pending(state: &AppState) -> anyhow::Result<usize> {
    let rows = claim(state).await?;
    let taken = rows.len();
    let mut run: Vec<(platform_event::Model, Vec<PlatformEvent>)> = Vec::new();
    for row in rows {
        match parse(state, &row) {
            Parsed::Events(_, events) if events.iter().all(is_status) => {
                run.push((row, events));
            }
            Parsed::Unreadable => run.push((row, Vec::new())),
            parsed => {
                flush(state, &mut run).await?;
                apply_claimed(state, &row, parsed).await?;
            }
        }
    }
    flush(state, &mut run).await?;
    Ok(taken)
}

/// What a run applies together: statuses, and parts that are only kept as not applied.
fn is_status(e: &PlatformEvent) -> bool {
    matches!(
        e,
        PlatformEvent::Status { .. } | PlatformEvent::Unapplied(_)
    )
}

/// Claims the oldest waiting webhooks for this worker.
async fn claim(state: &AppState) -> anyhow::Result<Vec<platform_event::Model>> {
    let now = state.now_ms();
    let txn = state.db.write().await?;
    let q = platform_event::Entity::find()
        .filter(platform_event::Column::ProcessedAt.is_null())
        .filter(
            Condition::any()
                .add(platform_event::Column::ClaimedUntil.is_null())
                .add(platform_event::Column::ClaimedUntil.lte(now)),
        )
        .order_by_asc(platform_event::Column::ReceivedAt)
        .limit(BATCH);
    let rows = crate::db::skip_locked(&state.db, q).all(&*txn).await?;
    if !rows.is_empty() {
        platform_event::Entity::update_many()
            .col_expr(
                platform_event::Column::ClaimedUntil,
                Expr::val(now + CLAIM_MS),
            )
            .filter(platform_event::Column::Id.is_in(rows.iter().map(|r| r.id)))
            .exec(&*txn)
            .await?;
    }
    txn.commit().await?;
    Ok(rows)
}

/// Applies a run of status webhooks in one transaction with their done mark; on failure,
/// one by one.
async fn flush(
    state: &AppState,
    run: &mut Vec<(platform_event::Model, Vec<PlatformEvent>)>,
) -> anyhow::Result<()> {
    let run = std::mem::take(run);
    if run.is_empty() {
        return Ok(());
    }
    let txn = state.db.write().await?;
    let applied = apply_run(state, &*txn, &run).await;
    match applied {
        Ok(()) => {
            mark_processed(&*txn, run.iter().map(|(row, _)| row.id), state.now_ms()).await?;
            txn.commit().await?;
        }
        Err(e) => {
            drop(txn);
            tracing::warn!(error = %format!("{e:#}"), webhooks = run.len(), "a batch of platform statuses failed; applied one by one");
            for (row, _) in run {
                apply_claimed(state, &row, parse(state, &row)).await?;
            }
        }
    }
    Ok(())
}

/// The statuses of a run, each with the organisation of the number it came to (a status
/// for a number that is not ours is acknowledged and changes nothing).
async fn apply_run(
    state: &AppState,
    conn: &impl ConnectionTrait,
    run: &[(platform_event::Model, Vec<PlatformEvent>)],
) -> anyhow::Result<()> {
    let now = state.now_ms();
    let mut orgs: HashMap<String, Option<Uuid>> = HashMap::new();
    let mut statuses: Vec<(Option<Uuid>, StatusUpdate)> = Vec::new();
    for (row, events) in run {
        for e in events {
            let (account, update) = match e {
                PlatformEvent::Status {
                    account, update, ..
                } => (account, update),
                PlatformEvent::Unapplied(u) => {
                    unapplied::record(conn, &row.provider, Some(row.id), u, now).await?;
                    continue;
                }
                _ => continue,
            };
            let org = match orgs.get(account) {
                Some(org) => *org,
                None => {
                    let org = endpoint(conn, &row.provider, account).await?.map(|e| e.org);
                    orgs.insert(account.clone(), org);
                    org
                }
            };
            match org {
                Some(org) => statuses.push((Some(org), update.clone())),
                None => {
                    let u = Unapplied::new(
                        Some(account),
                        unapplied::UNKNOWN_ACCOUNT,
                        &format!("{update:?}"),
                    );
                    unapplied::record(conn, &row.provider, Some(row.id), &u, now).await?;
                }
            }
        }
    }
    grouped::apply_many(conn, &statuses, now).await?;
    Ok(())
}
