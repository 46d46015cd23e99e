//! The prepaid wallet: a balance that never goes negative and a ledger that explains it.
//!
//! Every change is a conditional update of the balance plus a ledger entry, in the caller's
//! transaction; a charge that the balance cannot cover changes nothing. The same update
//! numbers the entry (`wallets.entries`, m0015): it holds the wallet row until the commit,
//! so the ledger's order is the order the changes committed in.

use crate::db::Unique;
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, ExprTrait, QueryFilter,
    QueryOrder, QuerySelect,
};
use uuid::Uuid;
use wm_types::Money;
use wm_types::campaigns::{LedgerEntry, LedgerKind};

use crate::db::entities::{ledger_entry, wallet};

/// Creates the organisation's wallet at 0 if it has none.
pub async fn ensure(conn: &impl ConnectionTrait, org: Uuid, now: i64) -> Result<(), DbErr> {
    wallet::Entity::insert(wallet::ActiveModel {
        organization_id: Set(org),
        balance_micros: Set(0),
        entries: Set(0),
        updated_at: Set(now),
    })
    .on_conflict_do_nothing_on([wallet::Column::OrganizationId])
    .exec(conn)
    .await?;
    Ok(())
}

/// The balance.
pub async fn balance(conn: &impl ConnectionTrait, org: Uuid) -> Result<Money, DbErr> {
    Ok(Money(
        wallet::Entity::find_by_id(org)
            .unique(conn)
            .await?
            .map_or(0, |w| w.balance_micros),
    ))
}

async fn entry(
    conn: &impl ConnectionTrait,
    org: Uuid,
    kind: LedgerKind,
    amount: i64,
    campaign: Option<Uuid>,
    description: &str,
    now: i64,
) -> Result<(), DbErr> {
    // Read under the update that moved the balance and numbered the entry.
    let (after, seq) = wallet::Entity::find_by_id(org)
        .unique(conn)
        .await?
        .map_or((0, 0), |w| (w.balance_micros, w.entries));
    ledger_entry::Entity::insert(ledger_entry::ActiveModel {
        id: Set(Uuid::now_v7()),
        organization_id: Set(org),
        kind: Set(kind),
        amount_micros: Set(amount),
        balance_after_micros: Set(after),
        campaign_id: Set(campaign),
        description: Set(description.to_owned()),
        created_at: Set(now),
        seq: Set(seq),
    })
    .exec_without_returning(conn)
    .await?;
    Ok(())
}

/// Adds money (a top-up or a refund).
pub async fn credit(
    conn: &impl ConnectionTrait,
    org: Uuid,
    kind: LedgerKind,
    amount: Money,
    campaign: Option<Uuid>,
    description: &str,
    now: i64,
) -> Result<(), DbErr> {
    if amount.0 <= 0 {
        return Ok(());
    }
    ensure(conn, org, now).await?;
    wallet::Entity::update_many()
        .col_expr(
            wallet::Column::BalanceMicros,
            Expr::col(wallet::Column::BalanceMicros).add(amount.0),
        )
        .col_expr(
            wallet::Column::Entries,
            Expr::col(wallet::Column::Entries).add(1),
        )
        .col_expr(wallet::Column::UpdatedAt, Expr::val(now))
        .filter(wallet::Column::OrganizationId.eq(org))
        .exec(conn)
        .await?;
    entry(conn, org, kind, amount.0, campaign, description, now).await?;
    if kind == LedgerKind::Refund {
        crate::observe::metrics::wallet_refunded(amount.0);
    }
    Ok(())
}

/// Takes money if the balance covers it; `false` (and nothing changed) when it does not.
/// The condition is part of the UPDATE, so concurrent charges can never overdraw.
pub async fn charge(
    conn: &impl ConnectionTrait,
    org: Uuid,
    amount: Money,
    campaign: Option<Uuid>,
    description: &str,
    now: i64,
) -> Result<bool, DbErr> {
    if amount.0 <= 0 {
        return Ok(true);
    }
    let done = wallet::Entity::update_many()
        .col_expr(
            wallet::Column::BalanceMicros,
            Expr::col(wallet::Column::BalanceMicros).sub(amount.0),
        )
        .col_expr(
            wallet::Column::Entries,
            Expr::col(wallet::Column::Entries).add(1),
        )
        .col_expr(wallet::Column::UpdatedAt, Expr::val(now))
        .filter(wallet::Column::OrganizationId.eq(org))
        .filter(wallet::Column::BalanceMicros.gte(amount.0))
        .exec(conn)
        .await?
        .rows_affected;
    if done == 0 {
        return Ok(false);
    }
    crate::observe::metrics::wallet_charged(amount.0);
    entry(
        conn,
        org,
        LedgerKind::Charge,
        -amount.0,
        campaign,
        description,
        now,
    )
    .await?;
    let after = balance(conn, org).await?.0;
    crate::services::automations::on_balance_change(conn, org, after + amount.0, after, now)
        .await?;
    Ok(true)
}

/// The latest ledger entries, newest first (in commit order).
pub async fn recent(
    conn: &impl ConnectionTrait,
    org: Uuid,
    limit: u64,
) -> Result<Vec<LedgerEntry>, DbErr> {
    Ok(ledger_entry::Entity::find()
        .filter(ledger_entry::Column::OrganizationId.eq(org))
        .order_by_desc(ledger_entry::Column::Seq)
        .limit(limit)
        .all(conn)
        .await?
        .into_iter()
        .map(LedgerEntry::from)
        .collect())
}
