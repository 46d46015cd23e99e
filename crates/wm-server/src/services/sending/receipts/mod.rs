//! Platform statuses applied to campaign recipients, the same way for every source (the
//! simulated platform's receipts, a platform's status webhooks, the operator's
//! `provider-events`).
//!
//! A status finds its recipient by the correlation id the message was sent with (the
//! recipient's id, echoed as `biz_opaque_callback_data`) and otherwise by the platform's
//! message id. The funnel only moves forward (SENT → DELIVERED → READ → REPLIED), so
//! duplicates and out-of-order statuses are harmless; a `failed` after `sent` is recorded and
//! refunded (the platform does not bill undelivered messages). A status for a message not
//! known yet is kept in `pending_statuses` and applied once its send is recorded: a receipt
//! is never dropped.
//!
//! A reply marks the campaign message it answers REPLIED ([`mark_replied`]). A burst of
//! statuses is applied together by [`apply_many`], with the outcome of one at a time.

use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, ExprTrait, QueryFilter,
    QueryOrder,
};
use uuid::Uuid;
use wm_core::provider::StatusUpdate;
use wm_types::Money;
use wm_types::Timestamp;
use wm_types::campaigns::LedgerKind;
use wm_types::enums::RecipientStatus;
use wm_types::events::{CampaignRepliedData, EventKind};

mod grouped;

pub use grouped::apply_many;

use crate::db::Unique;
use crate::db::entities::{pending_status, recipient};
use crate::services::contacts::platform;
use crate::services::wallet;

/// What became of a status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applied {
    /// A recipient moved on.
    Moved,
    /// Its recipient is already there or further (a duplicate or a late status).
    Unchanged,
    /// No recipient has the message yet: kept for when its send is recorded.
    Kept,
}

/// Finds the recipient of a status: by correlation id first, then by message id.
async fn find(
    conn: &impl ConnectionTrait,
    org: Option<Uuid>,
    u: &StatusUpdate,
) -> Result<Option<recipient::Model>, DbErr> {
    let scoped = |q: sea_orm::Select<recipient::Entity>| match org {
        Some(org) => q.filter(recipient::Column::OrganizationId.eq(org)),
        None => q,
    };
    if let Some(id) = u
        .correlation_id
        .as_deref()
        .and_then(|c| Uuid::parse_str(c).ok())
        && let Some(r) = scoped(recipient::Entity::find_by_id(id))
            .unique(conn)
            .await?
    {
        return Ok(Some(r));
    }
    if u.provider_message_id.is_empty() {
        return Ok(None);
    }
    scoped(
        recipient::Entity::find()
            .filter(recipient::Column::ProviderMessageId.eq(u.provider_message_id.clone())),
    )
    .one(conn)
    .await
}

/// Applies one status (in the caller's transaction).
pub async fn apply(
    conn: &impl ConnectionTrait,
    org: Option<Uuid>,
    u: &StatusUpdate,
    now: i64,
) -> Result<Applied, DbErr> {
    let Some(r) = find(conn, org, u).await? else {
        if u.provider_message_id.is_empty() {
            return Ok(Applied::Unchanged);
        }
        // An automation's message, not a campaign's.
        if let Some(moved) = crate::services::messages::apply_status(conn, org, u, now).await? {
            return Ok(if moved {
                Applied::Moved
            } else {
                Applied::Unchanged
            });
        }
        keep(conn, u, now).await?;
        return Ok(Applied::Kept);
    };
    platform::remember_reported(
        conn,
        r.organization_id,
        r.contact_id,
        &r.phone,
        u.recipient.as_deref(),
        u.recipient_user_id.as_deref(),
        now,
    )
    .await?;
    let applied = apply_to(conn, &r, u, now).await?;
    if applied == Applied::Moved {
        crate::services::messages::announce_recipient(conn, r.organization_id, r.id, now).await?;
    }
    Ok(applied)
}

/// Keeps a status for a message not recorded yet; the platform's redelivery of one already
/// kept is kept once.
async fn keep(conn: &impl ConnectionTrait, u: &StatusUpdate, now: i64) -> Result<(), DbErr> {
    let mut same = pending_status::Entity::find()
        .filter(pending_status::Column::ProviderMessageId.eq(u.provider_message_id.clone()))
        .filter(pending_status::Column::Status.eq(u.status));
    same = match u.at_ms {
        Some(at) => same.filter(pending_status::Column::AtMs.eq(at)),
        None => same.filter(pending_status::Column::AtMs.is_null()),
    };
    if same.one(conn).await?.is_some() {
        return Ok(());
    }
    pending_status::Entity::insert(pending_status::ActiveModel {
        id: Set(Uuid::now_v7()),
        provider_message_id: Set(u.provider_message_id.clone()),
        correlation_id: Set(u.correlation_id.clone()),
        status: Set(u.status),
        at_ms: Set(u.at_ms),
        error: Set(u.error.clone()),
        opt_out: Set(u.opt_out),
        created_at: Set(now),
    })
    .exec_without_returning(conn)
    .await?;
    Ok(())
}

/// Applies the statuses kept for `provider_message_id` (now that its send is recorded).
pub async fn apply_kept(
    conn: &impl ConnectionTrait,
    provider_message_id: &str,
    now: i64,
) -> Result<usize, DbErr> {
    let kept = pending_status::Entity::find()
        .filter(pending_status::Column::ProviderMessageId.eq(provider_message_id))
        .order_by_asc(pending_status::Column::CreatedAt)
        .all(conn)
        .await?;
    let mut moved = 0;
    for k in &kept {
        let u = StatusUpdate {
            provider_message_id: k.provider_message_id.clone(),
            correlation_id: k.correlation_id.clone(),
            status: k.status,
            at_ms: k.at_ms,
            error: k.error.clone(),
            opt_out: k.opt_out,
            recipient: None,
            recipient_user_id: None,
        };
        let applied = match find(conn, None, &u).await? {
            Some(r) => {
                let moved = apply_to(conn, &r, &u, now).await? == Applied::Moved;
                if moved {
                    crate::services::messages::announce_recipient(
                        conn,
                        r.organization_id,
                        r.id,
                        now,
                    )
                    .await?;
                }
                Some(moved)
            }
            None => crate::services::messages::apply_status(conn, None, &u, now).await?,
        };
        if let Some(m) = applied {
            moved += usize::from(m);
            pending_status::Entity::delete_by_id(k.id)
                .exec(conn)
                .await?;
        }
    }
    Ok(moved)
}

async fn apply_to(
    conn: &impl ConnectionTrait,
    r: &recipient::Model,
    u: &StatusUpdate,
    now: i64,
) -> Result<Applied, DbErr> {
    use RecipientStatus as R;
    let at = u.at_ms.unwrap_or(now);
    let q = recipient::Entity::update_many()
        .filter(recipient::Column::Id.eq(r.id))
        .col_expr(
            recipient::Column::ProviderMessageId,
            Expr::col(recipient::Column::ProviderMessageId).if_null(u.provider_message_id.clone()),
        )
        .col_expr(
            recipient::Column::SentAt,
            Expr::col(recipient::Column::SentAt).if_null(at),
        );
    let (from, q): (&[R], _) = match u.status {
        R::Sent => (&[R::Pending], q),
        R::Delivered => (
            &[R::Pending, R::Sent],
            q.col_expr(recipient::Column::DeliveredAt, Expr::val(at)),
        ),
        R::Read => (
            &[R::Pending, R::Sent, R::Delivered],
            q.col_expr(recipient::Column::ReadAt, Expr::val(at))
                .col_expr(
                    recipient::Column::DeliveredAt,
                    Expr::col(recipient::Column::DeliveredAt).if_null(at),
                ),
        ),
        R::Failed => return fail(conn, r, u, at).await,
        _ => return Ok(Applied::Unchanged),
    };
    let from: Vec<&str> = from.iter().map(|s| s.as_str()).collect();
    let moved = q
        .col_expr(recipient::Column::Status, Expr::val(u.status))
        .filter(recipient::Column::Status.is_in(from))
        .exec(conn)
        .await?
        .rows_affected
        > 0;
    settled(conn, r, u, moved).await
}

/// What a status did to `r`; one that did not move it (already further along, e.g.
/// `delivered` before `sent`) still leaves the platform's message id on it.
async fn settled(
    conn: &impl ConnectionTrait,
    r: &recipient::Model,
    u: &StatusUpdate,
    moved: bool,
) -> Result<Applied, DbErr> {
    if !moved && r.provider_message_id.is_none() {
        remember_message_id(conn, r.id, &u.provider_message_id).await?;
    }
    Ok(if moved {
        Applied::Moved
    } else {
        Applied::Unchanged
    })
}

/// Records the platform's message id on a recipient that has none yet (the first answer
/// or status that names it wins; an empty id is no id).
pub async fn remember_message_id(
    conn: &impl ConnectionTrait,
    recipient_id: Uuid,
    provider_message_id: &str,
) -> Result<(), DbErr> {
    if provider_message_id.is_empty() {
        return Ok(());
    }
    recipient::Entity::update_many()
        .col_expr(
            recipient::Column::ProviderMessageId,
            Expr::val(provider_message_id),
        )
        .filter(recipient::Column::Id.eq(recipient_id))
        .filter(recipient::Column::ProviderMessageId.is_null())
        .exec(conn)
        .await?;
    Ok(())
}

/// A `failed` status: a recipient not yet delivered fails and is refunded (once).
async fn fail(
    conn: &impl ConnectionTrait,
    r: &recipient::Model,
    u: &StatusUpdate,
    at: i64,
) -> Result<Applied, DbErr> {
    let reason = u
        .error
        .clone()
        .unwrap_or_else(|| "The platform reported the message as failed".to_owned());
    let moved = fail_recipient(conn, r, &reason, at).await?;
    if moved && u.opt_out {
        opt_out_contact(conn, r, &reason, at).await?;
    }
    settled(conn, r, u, moved).await
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

/// Marks the contact's campaign message that was replied to as REPLIED: the message the
/// reply quotes (the platform's id in `replied_to`) when it is one of ours, else their
/// latest SENT, DELIVERED or READ one. A reply that quotes a known message credits that
/// message only, once: were it already REPLIED (a second answer to the same message), the
/// fallback would credit some other campaign with a reply it never got. Announced as
/// `campaign.replied` with the answer (`message`, when kept). `false` when nothing was
/// marked.
pub async fn mark_replied(
    conn: &impl ConnectionTrait,
    org: Uuid,
    contact: Uuid,
    replied_to: Option<&str>,
    message: Option<Uuid>,
    now: i64,
) -> Result<bool, DbErr> {
    use RecipientStatus as R;
    let open = [R::Sent.as_str(), R::Delivered.as_str(), R::Read.as_str()];
    let mine = || {
        recipient::Entity::find()
            .filter(recipient::Column::OrganizationId.eq(org))
            .filter(recipient::Column::ContactId.eq(contact))
    };
    // The message quoted is credited whoever the sender resolved to (the person may write
    // from another form of the number, or a colleague may forward it).
    let quoted = match replied_to {
        Some(id) => {
            recipient::Entity::find()
                .filter(recipient::Column::OrganizationId.eq(org))
                .filter(recipient::Column::ProviderMessageId.eq(id))
                .one(conn)
                .await?
        }
        None => None,
    };
    let r = match quoted {
        Some(r) if open.contains(&r.status.as_str()) => r,
        // Known, but already replied to (or never reached the person): nothing to credit.
        Some(_) => return Ok(false),
        None => {
            let latest = mine()
                .filter(recipient::Column::Status.is_in(open))
                .order_by_desc(recipient::Column::SentAt)
                .one(conn)
                .await?;
            let Some(r) = latest else { return Ok(false) };
            r
        }
    };
    // Still open under the write: two deliveries of one reply credit it once.
    let marked = recipient::Entity::update_many()
        .col_expr(recipient::Column::Status, Expr::val(R::Replied))
        .col_expr(recipient::Column::RepliedAt, Expr::val(now))
        .col_expr(
            recipient::Column::DeliveredAt,
            Expr::col(recipient::Column::DeliveredAt).if_null(now),
        )
        .filter(recipient::Column::Id.eq(r.id))
        .filter(recipient::Column::Status.is_in(open))
        .exec(conn)
        .await?
        .rows_affected;
    if marked == 0 {
        return Ok(false);
    }
    crate::services::automations::on_campaign_replied(
        conn,
        org,
        r.contact_id,
        r.campaign_id,
        r.id,
        now,
    )
    .await?;
    let data = CampaignRepliedData {
        organization_id: org,
        campaign_id: r.campaign_id,
        recipient_id: r.id,
        contact_id: r.contact_id,
        message_id: message,
        replied_at: Timestamp::from_millis(now),
    };
    crate::db::outbox::push(conn, org, EventKind::CampaignReplied, &data, now).await?;
    Ok(true)
}
