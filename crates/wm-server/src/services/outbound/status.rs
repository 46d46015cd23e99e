//! Platform statuses, moved in one place for every outbound message and every source (the
//! simulated platform's receipts, a platform's status webhooks and watermarks, the
//! operator's `provider-events`).
//!
//! A status finds its message by the correlation id it was sent with (a campaign
//! recipient's id, a message's own id) and otherwise by the platform's message id: a
//! campaign message's status is its recipient's (the funnel the campaign counts), any
//! other's is its message row's. Either only moves forward (SENT → DELIVERED → READ, a
//! campaign's → REPLIED), so duplicates and out-of-order statuses are harmless; a `failed`
//! before delivery is recorded and refunded (the platform does not bill undelivered
//! messages). A status for a message not known yet is kept in `pending_statuses` and
//! applied once its send is recorded: a receipt is never dropped. Every move is announced
//! (`message.sent`) through [`crate::services::messages`].
//!
//! A burst of statuses is applied together by [`super::grouped::apply_many`], with the
//! outcome of one at a time.

use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, ExprTrait, QueryFilter,
    QueryOrder,
};
use uuid::Uuid;
use wm_core::provider::StatusUpdate;
use wm_types::enums::RecipientStatus;
use wm_types::messages::{MessageDirection, MessageStatus};

use super::failed::{self, fail_recipient, opt_out_contact};
use crate::db::Unique;
use crate::db::entities::{message, pending_status, recipient};
use crate::services::contacts::platform;

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
        if let Some(moved) = apply_to_message(conn, org, u, now).await? {
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
        crate::services::sending::CAMPAIGNS,
        r.organization_id,
        r.contact_id,
        &r.phone,
        platform::Reported {
            wa_id: u.recipient.as_deref(),
            user_id: u.recipient_user_id.as_deref(),
        },
        now,
    )
    .await?;
    let applied = apply_to(conn, &r, u, now).await?;
    if applied == Applied::Moved {
        crate::services::announce::recipient(conn, r.organization_id, r.id, now).await?;
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
                    crate::services::announce::recipient(conn, r.organization_id, r.id, now)
                        .await?;
                }
                Some(moved)
            }
            None => apply_to_message(conn, None, &u, now).await?,
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

/// Applies a status to an outbound message that is no campaign recipient's (a reply, an
/// automation's, a bot's): found by the platform's id, or by the correlation id (its own
/// id) when the status beat the call's answer; forward only (SENT → DELIVERED → READ;
/// FAILED before delivery, refunded), announced as `message.sent` with the new status.
/// `None` when wm has no such message; `Some(moved)`.
async fn apply_to_message(
    conn: &impl ConnectionTrait,
    org: Option<Uuid>,
    u: &StatusUpdate,
    now: i64,
) -> Result<Option<bool>, DbErr> {
    use MessageStatus as M;
    let mut by_platform_id = message::Entity::find()
        .filter(message::Column::PlatformMessageId.eq(u.provider_message_id.clone()))
        .filter(message::Column::Direction.eq(MessageDirection::Outbound))
        .filter(message::Column::RecipientId.is_null());
    if let Some(org) = org {
        by_platform_id = by_platform_id.filter(message::Column::OrganizationId.eq(org));
    }
    let found = if u.provider_message_id.is_empty() {
        None
    } else {
        by_platform_id.one(conn).await?
    };
    let found = match found {
        Some(m) => Some(m),
        None => crate::db::messages::by_correlation(conn, org, u.correlation_id.as_deref()).await?,
    };
    let Some(m) = found else {
        return Ok(None);
    };
    if m.platform_message_id.is_none() && !u.provider_message_id.is_empty() {
        message::Entity::update_many()
            .col_expr(
                message::Column::PlatformMessageId,
                Expr::val(u.provider_message_id.clone()),
            )
            .filter(message::Column::Id.eq(m.id))
            .exec(conn)
            .await?;
    }
    let (to, from): (M, &[M]) = match u.status {
        RecipientStatus::Sent => (M::Sent, &[M::Pending]),
        RecipientStatus::Delivered => (M::Delivered, &[M::Pending, M::Sent]),
        RecipientStatus::Read => (M::Read, &[M::Pending, M::Sent, M::Delivered]),
        RecipientStatus::Failed => {
            let reason = u
                .error
                .as_deref()
                .unwrap_or("The platform could not deliver it");
            let moved = failed::fail(conn, &m, reason, now).await?;
            return Ok(Some(moved));
        }
        _ => return Ok(Some(false)),
    };
    let moved = message::Entity::update_many()
        .col_expr(message::Column::Status, Expr::val(to))
        .col_expr(message::Column::UpdatedAt, Expr::val(now))
        .filter(message::Column::Id.eq(m.id))
        .filter(message::Column::Status.is_in(from.iter().copied()))
        .exec(conn)
        .await?
        .rows_affected
        == 1;
    if moved && let Some(row) = message::Entity::find_by_id(m.id).unique(conn).await? {
        crate::services::announce::message(conn, m.organization_id, row, now).await?;
    }
    Ok(Some(moved))
}
