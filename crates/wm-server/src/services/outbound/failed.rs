//! A message the platform refused for good, or whose outcome stayed unknown: FAILED, what it
//! was charged given back, announced; a campaign recipient's contact who stopped marketing
//! messages opted out. Both the send's settlement and a later status end here.

use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter};
use wm_types::Money;
use wm_types::campaigns::LedgerKind;
use wm_types::enums::RecipientStatus;
use wm_types::messages::MessageStatus;

use crate::db::Unique;
use crate::db::entities::{message, recipient};
use crate::services::contacts::platform;
use crate::services::wallet;

/// Fails a message that is not delivered yet (PENDING or SENT): FAILED with `reason`, its
/// charge refunded, announced. `false` when it had moved on already.
pub async fn fail(
    conn: &impl ConnectionTrait,
    m: &message::Model,
    reason: &str,
    now: i64,
) -> Result<bool, DbErr> {
    let moved = message::Entity::update_many()
        .col_expr(message::Column::Status, Expr::val(MessageStatus::Failed))
        .col_expr(message::Column::ErrorMessage, Expr::val(reason))
        .col_expr(message::Column::UpdatedAt, Expr::val(now))
        .filter(message::Column::Id.eq(m.id))
        .filter(message::Column::Status.is_in([MessageStatus::Pending, MessageStatus::Sent]))
        .exec(conn)
        .await?
        .rows_affected
        == 1;
    if moved {
        refund(conn, m, now).await?;
        if let Some(row) = message::Entity::find_by_id(m.id).unique(conn).await? {
            crate::services::announce::message(conn, m.organization_id, row, now).await?;
        }
    }
    Ok(moved)
}

/// Gives back what a failed message was charged (a campaign's is refunded with its
/// recipient).
pub async fn refund(
    conn: &impl ConnectionTrait,
    m: &message::Model,
    now: i64,
) -> Result<(), DbErr> {
    let cost = m.cost_micros.unwrap_or(0);
    if cost <= 0 || m.recipient_id.is_some() {
        return Ok(());
    }
    let what = format!("Refund of message {} (failed)", m.id);
    crate::services::wallet::credit(
        conn,
        m.organization_id,
        LedgerKind::Refund,
        Money(cost),
        None,
        &what,
        now,
    )
    .await
}

/// Fails a recipient that is PENDING or SENT and refunds what it was charged; `false` when
/// it was already further along (or failed).
pub async fn fail_recipient(
    conn: &impl ConnectionTrait,
    r: &recipient::Model,
    reason: &str,
    now: i64,
) -> Result<bool, DbErr> {
    use RecipientStatus as R;
    let done = recipient::Entity::update_many()
        .col_expr(recipient::Column::Status, Expr::val(R::Failed))
        .col_expr(recipient::Column::FailedAt, Expr::val(now))
        .col_expr(recipient::Column::ErrorMessage, Expr::val(reason))
        .col_expr(recipient::Column::CostMicros, Expr::val(0))
        .filter(recipient::Column::Id.eq(r.id))
        .filter(recipient::Column::Status.is_in([R::Pending, R::Sent]))
        .exec(conn)
        .await?
        .rows_affected
        > 0;
    if done {
        // `r` was read in this transaction before the update: it holds what was charged,
        // and only the one update that moved it refunds.
        wallet::credit(
            conn,
            r.organization_id,
            LedgerKind::Refund,
            Money(r.cost_micros),
            Some(r.campaign_id),
            "Campaign message not delivered: refund",
            now,
        )
        .await?;
    }
    Ok(done)
}

/// Opts a recipient's contact out: the platform refused the message because the person
/// stopped marketing messages (131050). Recorded as the person's own `stop` is.
pub async fn opt_out_contact(
    conn: &impl ConnectionTrait,
    r: &recipient::Model,
    reason: &str,
    now: i64,
) -> Result<(), DbErr> {
    platform::set_opted_out(conn, r.organization_id, r.contact_id, true, reason, now).await?;
    Ok(())
}
