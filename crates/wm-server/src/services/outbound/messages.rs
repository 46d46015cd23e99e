//! The message store of attempts: an outbound message that is no campaign recipient's (a
//! reply, an automation's template, a bot's answer) waits PENDING, is claimed
//! (`attempt_at` set, committed) before its call with its own id as the correlation id,
//! and records its answer: SENT with the platform's id, FAILED and refunded, or back in the
//! queue after a backoff when the platform asks to retry later ([`Attempt`]).

use sea_orm::sea_query::Expr;
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DatabaseTransaction, DbErr, EntityTrait, QueryFilter,
};
use wm_core::provider::{Accepted, OutboundMessage, SendError};
use wm_types::messages::{MessageDirection, MessageStatus};

use super::failed;
use super::send::{Settled, Store, backoff_ms};
use super::sender::Sender;
use crate::db::Unique;
use crate::db::entities::message;
use crate::observe::metrics::Source;

/// Messages waiting for their call: outbound, PENDING, not attempted, past any retry time
/// (`ix_messages_queue`).
pub fn due(now: i64) -> Condition {
    Condition::all()
        .add(message::Column::Status.eq(MessageStatus::Pending))
        .add(message::Column::AttemptAt.is_null())
        .add(message::Column::Direction.eq(MessageDirection::Outbound))
        .add(message::Column::RecipientId.is_null())
        .add(
            Condition::any()
                .add(message::Column::RetryAt.is_null())
                .add(message::Column::RetryAt.lte(now)),
        )
}

/// A message's attempt.
pub struct Attempt<'a> {
    /// The message.
    pub m: &'a message::Model,
    /// Where it came from.
    pub source: Source,
    /// Claimed already, in the transaction that queued it (a step that sends at once).
    pub claimed: bool,
}

impl Store for Attempt<'_> {
    fn source(&self) -> Source {
        self.source
    }

    async fn claim(&self, txn: &DatabaseTransaction, now: i64) -> Result<bool, DbErr> {
        if self.claimed {
            return Ok(true);
        }
        let n = message::Entity::update_many()
            .col_expr(message::Column::AttemptAt, Expr::val(now))
            .filter(message::Column::Id.eq(self.m.id))
            .filter(due(now))
            .exec(txn)
            .await?
            .rows_affected;
        Ok(n == 1)
    }

    async fn settle(
        &self,
        txn: &DatabaseTransaction,
        answer: Result<Accepted, SendError>,
        sent: &OutboundMessage,
        sender: &Sender,
        now: i64,
    ) -> Result<Settled, DbErr> {
        let m = self.m;
        Ok(match answer {
            Ok(accepted) => {
                message::Entity::update_many()
                    .col_expr(
                        message::Column::PlatformMessageId,
                        Expr::val(accepted.message_id.clone()),
                    )
                    .col_expr(message::Column::Status, Expr::val(MessageStatus::Sent))
                    .col_expr(message::Column::UpdatedAt, Expr::val(now))
                    .filter(message::Column::Id.eq(m.id))
                    .filter(message::Column::Status.eq(MessageStatus::Pending))
                    .exec(txn)
                    .await?;
                if let Some(row) = message::Entity::find_by_id(m.id).unique(txn).await? {
                    crate::services::announce::message(txn, m.organization_id, row, now).await?;
                }
                super::status::apply_kept(txn, &accepted.message_id, now).await?;
                crate::services::contacts::platform::remember_reported(
                    txn,
                    crate::services::contacts::platform::On::of(sender.provider.descriptor),
                    m.organization_id,
                    m.contact_id,
                    sent.to.stored(),
                    crate::services::contacts::platform::Reported {
                        wa_id: accepted.recipient.as_deref(),
                        user_id: accepted.recipient_user_id.as_deref(),
                    },
                    now,
                )
                .await?;
                Settled::Sent
            }
            Err(SendError::RetryLater(reason)) => {
                tracing::warn!(message = %m.id, %reason, "the platform asked to retry a message later");
                let until = now + backoff_ms(m.retries);
                message::Entity::update_many()
                    .col_expr(message::Column::AttemptAt, Expr::val(Option::<i64>::None))
                    .col_expr(message::Column::RetryAt, Expr::val(until))
                    .col_expr(message::Column::Retries, Expr::val(m.retries + 1))
                    .filter(message::Column::Id.eq(m.id))
                    .exec(txn)
                    .await?;
                Settled::Retry(until)
            }
            Err(SendError::Ambiguous(reason)) => {
                // Maybe sent: never re-sent; a status webhook or the reconciliation settles it.
                tracing::warn!(message = %m.id, %reason, "message outcome unknown");
                Settled::Ambiguous
            }
            Err(SendError::Paused {
                reason,
                stop_reason,
            }) => {
                // A token the platform refused: the connected channel shows it until a new
                // one is saved (a number's is shown by its campaigns' stop reason).
                if stop_reason == wm_core::whatsapp::PLATFORM_TOKEN_EXPIRED {
                    crate::db::channels::set_status(
                        txn,
                        sender.id,
                        crate::db::channels::TOKEN_INVALID,
                        Some(&reason),
                        now,
                    )
                    .await?;
                }
                let moved = failed::fail(txn, m, &reason, now).await?;
                Settled::Rejected {
                    refunded: moved && m.cost_micros.unwrap_or(0) > 0,
                }
            }
            Err(SendError::Rejected { reason, .. }) => {
                let moved = failed::fail(txn, m, &reason, now).await?;
                Settled::Rejected {
                    refunded: moved && m.cost_micros.unwrap_or(0) > 0,
                }
            }
        })
    }
}

/// The messages of this store whose outcome stayed unknown past the reconciliation window
/// (`older_than`), at most `limit`.
pub async fn stale(
    conn: &impl ConnectionTrait,
    older_than: i64,
    limit: u64,
) -> Result<Vec<message::Model>, DbErr> {
    use sea_orm::QuerySelect;
    message::Entity::find()
        .filter(message::Column::Status.eq(MessageStatus::Pending))
        .filter(message::Column::AttemptAt.lt(older_than))
        .filter(message::Column::RecipientId.is_null())
        .limit(limit)
        .all(conn)
        .await
}
