//! Sending queued replies, at most once, as campaign messages are sent: a reply is claimed
//! (`attempt_at` set, committed) before the platform call, with its id as the correlation id;
//! an answer records it (SENT with the platform's id, FAILED and refunded, or back in the
//! queue after a backoff when the platform asks to retry later); an unknown outcome is never
//! sent again: a status webhook carrying its correlation id or platform id settles it, or it
//! fails as "outcome unknown" after the reconciliation window and is refunded. Pacing is the
//! number's, shared with its campaigns.

use sea_orm::sea_query::Expr;
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect,
};
use uuid::Uuid;
use wm_core::provider::{MediaUpload, OutboundContent, OutboundMessage, SendError};
use wm_types::Money;
use wm_types::campaigns::LedgerKind;
use wm_types::messages::{MessageDirection, MessageStatus, MessageType};

use crate::db::Unique;
use crate::db::entities::{contact, media, message, phone_number};
use crate::db::messages::{MEDIA_UPLOAD, stored_of};
use crate::services::sending::attempts::{OUTCOME_UNKNOWN, backoff_ms};
use crate::state::AppState;

/// How long an uploaded file stays usable at the platform (Meta: 30 days), less a day.
const UPLOAD_LIFETIME_MS: i64 = 29 * 24 * 3_600_000;
/// Replies claimed per pass.
const BATCH: u64 = 20;

/// What one pass did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    /// Taken by the platform.
    pub sent: usize,
    /// Failed (and refunded).
    pub failed: usize,
    /// Back in the queue after a backoff.
    pub retried: usize,
}

/// Sends the replies that are due, and fails the ones whose outcome stayed unknown.
pub async fn run_once(state: &AppState) -> anyhow::Result<Outcome> {
    let mut out = Outcome {
        failed: reconcile(state).await?,
        ..Outcome::default()
    };
    let now = state.now_ms();
    let ids: Vec<Uuid> = message::Entity::find()
        .select_only()
        .column(message::Column::Id)
        .filter(due(now))
        .order_by_asc(message::Column::CreatedAt)
        .limit(BATCH)
        .into_tuple()
        .all(&state.db.conn)
        .await?;
    for id in ids {
        if !claim(state, id).await? {
            continue;
        }
        let Some(m) = message::Entity::find_by_id(id)
            .unique(&state.db.conn)
            .await?
        else {
            continue;
        };
        match send_one(state, &m).await? {
            Answer::Taken => out.sent += 1,
            Answer::Failed => out.failed += 1,
            Answer::Retry => out.retried += 1,
            Answer::Unknown => {}
        }
    }
    Ok(out)
}

/// Replies waiting for their call: PENDING, not attempted, past any retry time
/// (`ix_messages_queue`).
fn due(now: i64) -> Condition {
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

/// Records the attempt before the call; `false` when another worker has it.
async fn claim(state: &AppState, id: Uuid) -> anyhow::Result<bool> {
    let now = state.now_ms();
    let txn = state.db.write().await?;
    let n = message::Entity::update_many()
        .col_expr(message::Column::AttemptAt, Expr::val(now))
        .filter(message::Column::Id.eq(id))
        .filter(due(now))
        .exec(&*txn)
        .await?
        .rows_affected;
    txn.commit().await?;
    Ok(n == 1)
}

/// What one call came to.
enum Answer {
    Taken,
    Failed,
    Retry,
    Unknown,
}

async fn send_one(state: &AppState, m: &message::Model) -> anyhow::Result<Answer> {
    let conn = &state.db.conn;
    let sender = match m.phone_number_id {
        Some(id) => phone_number::Entity::find_by_id(id).unique(conn).await?,
        None => None,
    };
    let Some(sender) = sender else {
        return settle(
            state,
            m,
            Err(SendError::Rejected {
                reason: "the business number was deleted".into(),
                opt_out: false,
            }),
        )
        .await;
    };
    let to = contact::Entity::find_by_id(m.contact_id)
        .unique(conn)
        .await?
        .and_then(|k| super::address_of(&k));
    let Some(to) = to else {
        let reason = "the contact has no phone number any more".into();
        return settle(
            state,
            m,
            Err(SendError::Rejected {
                reason,
                opt_out: false,
            }),
        )
        .await;
    };
    let account = crate::worker::dispatch::account(state, &sender);
    let content = match content(state, m, &sender, account.as_ref()).await {
        Ok(c) => c,
        Err(e) => return settle(state, m, Err(e)).await,
    };
    let reply_to = match m.reply_to_id {
        Some(id) => message::Entity::find_by_id(id)
            .unique(conn)
            .await?
            .and_then(|q| q.platform_message_id),
        None => None,
    };
    let call = OutboundMessage {
        correlation_id: m.id.to_string(),
        from: sender.number_e164.clone(),
        account,
        to,
        content,
        reply_to,
        body: m.body.clone().unwrap_or_default(),
    };
    let own_mps = sender.mps.and_then(|n| u32::try_from(n).ok());
    state.pacer.wait(sender.id, own_mps).await?;
    let answer = state.provider.send(&call).await;
    settle(state, m, answer).await
}

/// What the platform is asked to send for a stored reply.
async fn content(
    state: &AppState,
    m: &message::Model,
    sender: &phone_number::Model,
    account: Option<&wm_core::provider::PlatformAccount>,
) -> Result<OutboundContent, SendError> {
    let stored = stored_of(m);
    let refused = |reason: &str| SendError::Rejected {
        reason: reason.to_owned(),
        opt_out: false,
    };
    Ok(match m.message_type {
        MessageType::Text => OutboundContent::Text,
        MessageType::Interactive => OutboundContent::Interactive {
            buttons: stored
                .interactive
                .map(|i| i.buttons.into_iter().map(|b| (b.id, b.title)).collect())
                .unwrap_or_default(),
        },
        MessageType::Template => {
            let t = stored
                .template
                .ok_or_else(|| refused("the reply's template is missing"))?;
            OutboundContent::Template {
                name: t.name,
                language: t.language,
                parameters: t.variables,
            }
        }
        kind => {
            let file = match m.media_id {
                Some(id) => media::Entity::find_by_id(id)
                    .unique(&state.db.conn)
                    .await
                    .map_err(|e| SendError::RetryLater(e.to_string()))?,
                None => None,
            }
            .ok_or_else(|| refused("the reply's file is gone"))?;
            let media_id = uploaded(state, &file, sender, account).await?;
            OutboundContent::Media {
                kind,
                media_id,
                caption: m.body.clone(),
                filename: stored.filename.or(file.filename),
            }
        }
    })
}

/// The platform's id of a file for `sender`: uploaded once, reused until it expires there.
async fn uploaded(
    state: &AppState,
    file: &media::Model,
    sender: &phone_number::Model,
    account: Option<&wm_core::provider::PlatformAccount>,
) -> Result<String, SendError> {
    let now = state.now_ms();
    let provider = state.provider.name();
    if file.origin == MEDIA_UPLOAD
        && !file.platform_media_id.is_empty()
        && file.phone_number_id == Some(sender.id)
        && file.provider == provider
        && file.expires_at > now
    {
        return Ok(file.platform_media_id.clone());
    }
    let later = |e: anyhow::Error| SendError::RetryLater(format!("{e:#}"));
    let key = file
        .storage_key
        .as_deref()
        .ok_or_else(|| SendError::RetryLater("the file is not stored yet".into()))?;
    let bytes = state
        .media
        .get(key)
        .await
        .map_err(later)?
        .ok_or_else(|| SendError::Rejected {
            reason: "the file is no longer in the media store".into(),
            opt_out: false,
        })?;
    let upload = MediaUpload {
        bytes: bytes.to_vec(),
        mime_type: file
            .mime_type
            .clone()
            .unwrap_or_else(|| "application/octet-stream".into()),
        filename: file.filename.clone(),
    };
    let id = state.provider.upload_media(account, &upload).await?;
    if file.origin == MEDIA_UPLOAD {
        media::Entity::update_many()
            .col_expr(media::Column::PlatformMediaId, Expr::val(id.clone()))
            .col_expr(media::Column::PhoneNumberId, Expr::val(sender.id))
            .col_expr(media::Column::Provider, Expr::val(provider))
            .col_expr(
                media::Column::ExpiresAt,
                Expr::val(now + UPLOAD_LIFETIME_MS),
            )
            .filter(media::Column::Id.eq(file.id))
            .exec(&state.db.conn)
            .await
            .map_err(|e| SendError::RetryLater(e.to_string()))?;
    }
    Ok(id)
}

/// Records the platform's answer.
async fn settle(
    state: &AppState,
    m: &message::Model,
    answer: Result<wm_core::provider::Accepted, SendError>,
) -> anyhow::Result<Answer> {
    let now = state.now_ms();
    let txn = state.db.write().await?;
    let outcome = match answer {
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
                .exec(&*txn)
                .await?;
            if let Some(row) = message::Entity::find_by_id(m.id).unique(&*txn).await? {
                crate::services::messages::announce(&*txn, m.organization_id, row, now).await?;
            }
            crate::services::sending::receipts::apply_kept(&*txn, &accepted.message_id, now)
                .await?;
            Answer::Taken
        }
        Err(SendError::RetryLater(reason)) => {
            tracing::warn!(message = %m.id, %reason, "the platform asked to retry a reply later");
            message::Entity::update_many()
                .col_expr(message::Column::AttemptAt, Expr::val(Option::<i64>::None))
                .col_expr(
                    message::Column::RetryAt,
                    Expr::val(now + backoff_ms(m.retries)),
                )
                .col_expr(message::Column::Retries, Expr::val(m.retries + 1))
                .filter(message::Column::Id.eq(m.id))
                .exec(&*txn)
                .await?;
            Answer::Retry
        }
        Err(SendError::Ambiguous(reason)) => {
            // Maybe sent: never re-sent; a status webhook or the reconciliation settles it.
            tracing::warn!(message = %m.id, %reason, "reply outcome unknown");
            Answer::Unknown
        }
        Err(SendError::Rejected { reason, .. } | SendError::Paused { reason, .. }) => {
            fail(&*txn, m, &reason, now).await?;
            Answer::Failed
        }
    };
    txn.commit().await?;
    Ok(outcome)
}

/// Fails a reply that is not delivered yet (PENDING or SENT): FAILED with `reason`, its
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
            crate::services::messages::announce(conn, m.organization_id, row, now).await?;
        }
    }
    Ok(moved)
}

/// Gives back what a failed message was charged.
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

/// Fails the replies whose outcome stayed unknown past the reconciliation window.
async fn reconcile(state: &AppState) -> anyhow::Result<usize> {
    let now = state.now_ms();
    let window = i64::try_from(state.settings.reconcile_after.as_millis()).unwrap_or(i64::MAX);
    let stale = message::Entity::find()
        .filter(message::Column::Status.eq(MessageStatus::Pending))
        .filter(message::Column::AttemptAt.lt(now.saturating_sub(window)))
        .filter(message::Column::RecipientId.is_null())
        .limit(BATCH)
        .all(&state.db.conn)
        .await?;
    let mut failed = 0;
    for m in stale {
        let txn = state.db.write().await?;
        if fail(&*txn, &m, OUTCOME_UNKNOWN, now).await? {
            failed += 1;
        }
        txn.commit().await?;
    }
    Ok(failed)
}

/// Finds a reply by the correlation id the platform echoes (its message id), for a status
/// that arrives before the call's answer was recorded.
pub async fn by_correlation(
    conn: &impl ConnectionTrait,
    org: Option<Uuid>,
    correlation: Option<&str>,
) -> Result<Option<message::Model>, DbErr> {
    let Some(id) = correlation.and_then(|c| Uuid::parse_str(c).ok()) else {
        return Ok(None);
    };
    let mut q = message::Entity::find_by_id(id)
        .filter(message::Column::Direction.eq(MessageDirection::Outbound))
        .filter(message::Column::RecipientId.is_null());
    if let Some(org) = org {
        q = q.filter(message::Column::OrganizationId.eq(org));
    }
    q.one(conn).await
}
