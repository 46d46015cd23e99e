//! The campaign store of attempts: a recipient's platform call is recorded (SENDING:
//! PENDING with `attempt_at`) before the call, and its result as soon as the call returns
//! ([`Attempt`], the [`Store`] the send driver claims and settles through). A recipient in
//! SENDING is never claimed again: after a crash or an ambiguous answer it waits for a
//! status carrying its correlation id, and after the reconciliation window it fails as
//! "outcome unknown" and is refunded. A failed recipient gets back what it was charged.

use sea_orm::sea_query::Expr;
use sea_orm::sea_query::Query;
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DbErr, EntityTrait, ExprTrait, QueryFilter,
    QueryOrder, QuerySelect,
};
use uuid::Uuid;
use wm_core::provider::{Accepted, OutboundMessage, SendError};
use wm_types::campaigns::CampaignStatus;
use wm_types::enums::RecipientStatus;
use wm_types::messages::SenderKind;

use super::failed::{fail_recipient, opt_out_contact};
use super::send::{Settled, Store, backoff_ms};
use super::sender::Sender;
use crate::db::entities::{campaign, recipient};
use crate::observe::metrics::Source;
use crate::services::contacts::platform;

/// What a campaign sent, kept as the message of the recipient's thread.
#[derive(Debug, Clone, Copy)]
pub struct Sent<'a> {
    /// The call made.
    pub message: &'a OutboundMessage,
    /// The campaign's template.
    pub template_id: Uuid,
    /// The campaign's business number.
    pub phone_number_id: Uuid,
}

/// Why a recipient whose attempt was never settled fails.
pub const OUTCOME_UNKNOWN: &str =
    "Outcome unknown: the platform did not confirm this message within the reconciliation window";

fn pending() -> Condition {
    Condition::all().add(recipient::Column::Status.eq(RecipientStatus::Pending))
}

/// Charged recipients ready for the platform: queued, not attempted, not waiting for a
/// retry time. The first three conditions are the partial index `ix_recipients_ready`'s,
/// written as it is (neither database proves a partial index's condition from a bound
/// parameter), so a campaign's next ready recipients are a range of that small index in
/// charge order instead of a read of all its pending ones.
pub fn ready(now: i64) -> Condition {
    Condition::all()
        .add(Expr::cust(
            "\"campaign_recipients\".\"status\" = 'PENDING' \
             AND \"campaign_recipients\".\"queued_at\" IS NOT NULL \
             AND \"campaign_recipients\".\"attempt_at\" IS NULL",
        ))
        .add(
            Condition::any()
                .add(recipient::Column::RetryAt.is_null())
                .add(recipient::Column::RetryAt.lte(now)),
        )
}

/// Up to `limit` recipients ready for the platform, oldest charge first.
pub async fn ready_batch(
    conn: &impl ConnectionTrait,
    campaign: Uuid,
    limit: u64,
    now: i64,
) -> Result<Vec<recipient::Model>, DbErr> {
    recipient::Entity::find()
        .filter(recipient::Column::CampaignId.eq(campaign))
        .filter(ready(now))
        .order_by_asc(recipient::Column::QueuedAt)
        .order_by_asc(recipient::Column::Id)
        .limit(limit)
        .all(conn)
        .await
}

/// Records the attempt before the call; `false` when another worker has it (or it moved),
/// or when its campaign is no longer SENDING. The campaign's status is read in the claim
/// itself, so a pause committed by any replica (a user's, a template paused or disabled
/// by a platform webhook) stops every call not yet claimed: only the calls already under
/// way complete.
pub async fn claim(conn: &impl ConnectionTrait, id: Uuid, now: i64) -> Result<bool, DbErr> {
    let sending = Query::select()
        .expr(Expr::val(1))
        .from(campaign::Entity)
        .and_where(
            Expr::col((campaign::Entity, campaign::Column::Id))
                .equals((recipient::Entity, recipient::Column::CampaignId)),
        )
        .and_where(
            Expr::col((campaign::Entity, campaign::Column::Status)).eq(CampaignStatus::Sending),
        )
        .to_owned();
    Ok(recipient::Entity::update_many()
        .col_expr(recipient::Column::AttemptAt, Expr::val(now))
        .filter(recipient::Column::Id.eq(id))
        .filter(pending())
        .filter(recipient::Column::AttemptAt.is_null())
        .filter(Expr::exists(sending))
        .exec(conn)
        .await?
        .rows_affected
        == 1)
}

/// The platform accepted the message: SENT with its id (unless a status got there first),
/// then the statuses kept for that id are applied.
/// The platform's id for the person, when it is another spelling of the number, is
/// remembered as the contact's identity.
pub async fn sent(
    conn: &impl ConnectionTrait,
    r: &recipient::Model,
    accepted: &Accepted,
    message: &Sent<'_>,
    now: i64,
) -> Result<(), DbErr> {
    let provider_message_id = accepted.message_id.as_str();
    recipient::Entity::update_many()
        .col_expr(recipient::Column::Status, Expr::val(RecipientStatus::Sent))
        .col_expr(recipient::Column::SentAt, Expr::val(now))
        .filter(recipient::Column::Id.eq(r.id))
        .filter(pending())
        .exec(conn)
        .await?;
    super::status::remember_message_id(conn, r.id, provider_message_id).await?;
    let outbound = crate::services::messages::Outbound {
        org: r.organization_id,
        contact: r.contact_id,
        platform_message_id: provider_message_id,
        message: message.message,
        template_id: Some(message.template_id),
        cost_micros: r.cost_micros,
        sent_by: (SenderKind::Campaign, r.campaign_id),
        recipient_id: Some(r.id),
        phone_number_id: message.phone_number_id,
    };
    crate::services::messages::record_outbound(conn, outbound, now).await?;
    super::status::apply_kept(conn, provider_message_id, now).await?;
    platform::remember_reported(
        conn,
        crate::services::sending::CAMPAIGNS,
        r.organization_id,
        r.contact_id,
        &r.phone,
        platform::Reported {
            wa_id: accepted.recipient.as_deref(),
            user_id: accepted.recipient_user_id.as_deref(),
        },
        now,
    )
    .await
}

/// The platform refused it for good: FAILED and refunded; `opt_out` also opts the contact
/// out.
pub async fn rejected(
    conn: &impl ConnectionTrait,
    r: &recipient::Model,
    reason: &str,
    opt_out: bool,
    now: i64,
) -> Result<bool, DbErr> {
    let done = fail_recipient(conn, r, reason, now).await?;
    if done && opt_out {
        opt_out_contact(conn, r, reason, now).await?;
    }
    Ok(done)
}

/// Not sent (the platform asked to retry later): back in the queue after a backoff, still
/// charged once.
pub async fn retry_later(
    conn: &impl ConnectionTrait,
    r: &recipient::Model,
    now: i64,
) -> Result<(), DbErr> {
    recipient::Entity::update_many()
        .col_expr(recipient::Column::AttemptAt, Expr::val(Option::<i64>::None))
        .col_expr(
            recipient::Column::RetryAt,
            Expr::val(now + backoff_ms(r.retries)),
        )
        .col_expr(
            recipient::Column::Retries,
            ExprTrait::add(Expr::col(recipient::Column::Retries), 1),
        )
        .filter(recipient::Column::Id.eq(r.id))
        .filter(pending())
        .exec(conn)
        .await?;
    Ok(())
}

/// Not sent (the campaign pauses before it): back in the queue as it was.
pub async fn release(conn: &impl ConnectionTrait, id: Uuid) -> Result<(), DbErr> {
    recipient::Entity::update_many()
        .col_expr(recipient::Column::AttemptAt, Expr::val(Option::<i64>::None))
        .filter(recipient::Column::Id.eq(id))
        .filter(pending())
        .exec(conn)
        .await?;
    Ok(())
}

/// Attempts older than `window_ms` that no status settled: FAILED "outcome unknown" and
/// refunded. Returns how many.
pub async fn reconcile(
    conn: &impl ConnectionTrait,
    now: i64,
    window_ms: i64,
) -> Result<usize, DbErr> {
    let stale = recipient::Entity::find()
        .filter(pending())
        .filter(recipient::Column::AttemptAt.lte(now - window_ms))
        .limit(500)
        .all(conn)
        .await?;
    let mut n = 0;
    for r in &stale {
        if fail_recipient(conn, r, OUTCOME_UNKNOWN, now).await? {
            n += 1;
        }
    }
    Ok(n)
}

/// A campaign recipient's attempt: its row, and the campaign's template (recorded with the
/// message when it is sent).
pub struct Attempt<'a> {
    /// The recipient.
    pub r: &'a recipient::Model,
    /// The campaign's template.
    pub template_id: Uuid,
}

impl Store for Attempt<'_> {
    fn source(&self) -> Source {
        Source::Campaign
    }

    async fn claim(&self, txn: &sea_orm::DatabaseTransaction, now: i64) -> Result<bool, DbErr> {
        claim(txn, self.r.id, now).await
    }

    async fn settle(
        &self,
        txn: &sea_orm::DatabaseTransaction,
        answer: Result<Accepted, SendError>,
        sent: &OutboundMessage,
        sender: &Sender,
        now: i64,
    ) -> Result<Settled, DbErr> {
        let r = self.r;
        Ok(match answer {
            Ok(accepted) => {
                let message = Sent {
                    message: sent,
                    template_id: self.template_id,
                    phone_number_id: sender.id,
                };
                self::sent(txn, r, &accepted, &message, now).await?;
                Settled::Sent
            }
            Err(SendError::Rejected { reason, opt_out }) => {
                let done = rejected(txn, r, &reason, opt_out, now).await?;
                Settled::Rejected {
                    refunded: done && r.cost_micros > 0,
                }
            }
            Err(SendError::RetryLater(reason)) => {
                tracing::warn!(recipient = %r.id, %reason, "the platform asked to retry later");
                retry_later(txn, r, now).await?;
                Settled::Retry(now + backoff_ms(r.retries))
            }
            Err(SendError::Paused {
                stop_reason,
                reason,
            }) => {
                release(txn, r.id).await?;
                Settled::Paused {
                    stop_reason,
                    reason,
                }
            }
            Err(SendError::Ambiguous(reason)) => {
                // Maybe sent: never re-sent; a status webhook or the reconciliation settles it.
                tracing::warn!(recipient = %r.id, %reason, "platform outcome unknown");
                Settled::Ambiguous
            }
        })
    }
}
