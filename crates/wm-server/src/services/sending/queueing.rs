//! Queueing a reserved batch step by step ([`queue_step`]): each step marks the next
//! recipients queued at the prices charged, in its own transaction, and takes their cost off
//! what is reserved; the last step refunds what was reserved for recipients that could no
//! longer be messaged. Consumed by the queue worker (`worker::queue`).

use std::collections::{BTreeMap, HashMap};

use sea_orm::sea_query::Expr;
use sea_orm::{
    ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
};
use uuid::Uuid;
use wm_core::messaging::Ineligible;
use wm_types::Money;
use wm_types::campaigns::LedgerKind;

use super::charging::{fail_uncharged, mark_charged};
use super::pricing::{BatchCost, card_of, category, ineligible_contacts, unqueued};
use crate::db::Db;
use crate::db::entities::{campaign, recipient};
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
    // A market the charge did not price (its only recipients could not be messaged then)
    // is priced from the card now.
    let price_of = |market: &str| {
        prices
            .get(market)
            .copied()
            .or_else(|| Some(card.market(market)?.price(cat).0))
    };
    let mut reserve = Reserve {
        covered: u64::try_from(c.open_covered).unwrap_or(0),
        open: c.open_charge_micros.unwrap_or(0),
    };
    let (mut batch, over) = reserve.take(&chunk, &blocked, price_of);
    charge_over(&*txn, &c, over, &mut batch, now).await?;
    mark_charged(&*txn, &batch, now).await?;
    let done = (chunk.len() as u64) < step;
    reserve.keep_or_close(&*txn, &c, done, now).await?;
    txn.commit().await?;
    Ok(Some(chunk.len() as u64))
}

/// What is left of a campaign's reserve: messages the allowance covers, and money.
struct Reserve {
    covered: u64,
    open: i64,
}

impl Reserve {
    /// Splits a step's recipients: those the reserve pays for (covered first, then money),
    /// those who fail uncharged (no market, or a contact that may not be messaged), and
    /// those it no longer pays for (`over`: a contact that could not be messaged when the
    /// batch was charged, so was not charged for, and may be again now).
    fn take(
        &mut self,
        chunk: &[recipient::Model],
        blocked: &HashMap<Uuid, Ineligible>,
        price_of: impl Fn(&str) -> Option<i64>,
    ) -> (BatchCost, BatchCost) {
        let (mut batch, mut over) = (BatchCost::default(), BatchCost::default());
        for r in chunk {
            if let Some(why) = blocked.get(&r.contact_id) {
                batch.ineligible.push((r.id, *why));
                continue;
            }
            let Some(price) = r.market.as_deref().and_then(&price_of) else {
                batch.unpriceable.push(r.id);
                continue;
            };
            if self.covered > 0 {
                self.covered -= 1;
                batch.priced.push((r.id, 0, true));
            } else if price <= self.open {
                self.open -= price;
                batch.total.0 += price;
                batch.priced.push((r.id, price, false));
            } else {
                over.total.0 += price;
                over.priced.push((r.id, price, false));
            }
        }
        (batch, over)
    }

    /// Carries the reserve to the next step, or, after the last one, closes it and refunds
    /// what is left (what was reserved for recipients that could no longer be messaged).
    async fn keep_or_close(
        &self,
        conn: &impl ConnectionTrait,
        c: &campaign::Model,
        done: bool,
        now: i64,
    ) -> Result<(), DbErr> {
        let upd = campaign::Entity::update_many().filter(campaign::Column::Id.eq(c.id));
        let upd = if done {
            let what = format!(
                "Campaign \"{}\": reserved for recipients that could no longer be messaged",
                c.name
            );
            let left = Money(self.open);
            let refund = LedgerKind::Refund;
            wallet::credit(
                conn,
                c.organization_id,
                refund,
                left,
                Some(c.id),
                &what,
                now,
            )
            .await?;
            upd.col_expr(
                campaign::Column::OpenChargeMicros,
                Expr::val(Option::<i64>::None),
            )
            .col_expr(campaign::Column::OpenCovered, Expr::val(0))
            .col_expr(
                campaign::Column::OpenPrices,
                Expr::val(Option::<String>::None),
            )
        } else {
            upd.col_expr(campaign::Column::OpenChargeMicros, Expr::val(self.open))
                .col_expr(
                    campaign::Column::OpenCovered,
                    Expr::val(i32::try_from(self.covered).unwrap_or(i32::MAX)),
                )
        };
        upd.exec(conn).await?;
        Ok(())
    }
}

/// Charges the recipients the reserve no longer pays for, if the balance covers them (they
/// join `batch`), else fails them uncharged.
async fn charge_over(
    conn: &impl ConnectionTrait,
    c: &campaign::Model,
    mut over: BatchCost,
    batch: &mut BatchCost,
    now: i64,
) -> Result<(), DbErr> {
    if over.priced.is_empty() {
        return Ok(());
    }
    let what = format!("Campaign \"{}\": {} messages", c.name, over.priced.len());
    if wallet::charge(conn, c.organization_id, over.total, Some(c.id), &what, now).await? {
        batch.priced.append(&mut over.priced);
    } else {
        let ids: Vec<Uuid> = over.priced.iter().map(|(id, _, _)| *id).collect();
        fail_uncharged(conn, &ids, UNPAID, now).await?;
    }
    Ok(())
}
