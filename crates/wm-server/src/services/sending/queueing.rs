//! Queueing a reserved batch step by step ([`queue_step`]): each step marks the next
//! recipients queued at the prices charged, in its own transaction, and takes their cost off
//! what is reserved; the last step refunds what was reserved for recipients that could no
//! longer be messaged. Consumed by the queue worker (`worker::queue`).

use std::collections::BTreeMap;

use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, DbErr, EntityTrait, QueryFilter, QueryOrder, QuerySelect};
use uuid::Uuid;
use wm_types::Money;
use wm_types::campaigns::LedgerKind;

use super::charging::{fail_uncharged, mark_charged};
use super::pricing::{BatchCost, card_of, category, ineligible_contacts, unqueued};
use crate::db::Db;
use crate::db::entities::campaign;
use crate::services::wallet;

/// Recorded on a recipient the balance no longer covered when its step was queued.
pub const UNPAID: &str = "The wallet balance did not cover this message";

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
    let blocked = ineligible_contacts(&*txn, chunk.iter().map(|r| r.contact_id)).await?;
    let prices: BTreeMap<String, i64> =
        crate::db::stored::json_opt("campaigns.open_prices", c.id, c.open_prices.as_deref());
    let card = card_of(&*txn, c.organization_id).await?;
    let cat = category(&*txn, &c).await?;
    let mut covered = u64::try_from(c.open_covered).unwrap_or(0);
    let mut open = c.open_charge_micros.unwrap_or(0);
    let mut batch = BatchCost::default();
    // Recipients the reserve no longer pays for: a contact that could not be messaged when
    // the batch was charged (so was not charged for) and may be again now.
    let mut over = BatchCost::default();
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
            fail_uncharged(&*txn, &ids, UNPAID, now).await?;
        }
    }
    mark_charged(&*txn, &batch, now).await?;
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
