//! The reply sender's pass: queued replies (and any outbound message waiting in the
//! messages store) are built from what was stored — text, buttons, a template, a file
//! uploaded to the platform once and reused until it expires there — and sent through
//! [`outbound::send`](crate::services::outbound::send), at most once, paced by their
//! account with its campaigns.

use std::sync::atomic::AtomicBool;

use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};
use uuid::Uuid;
use wm_core::provider::{MediaUpload, OutboundContent, OutboundMessage, SendError};
use wm_types::messages::MessageType;

use crate::db::Unique;
use crate::db::entities::{contact, conversation, media, message};
use crate::db::messages::{MEDIA_UPLOAD, stored_of};
use crate::observe::metrics::Source;
use crate::services::outbound::messages::{Attempt, due};
use crate::services::outbound::send::{Settled, send};
use crate::services::outbound::sender::Sender;
use crate::state::AppState;

/// Messages claimed per pass.
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

/// Sends the messages that are due, and fails the ones whose outcome stayed unknown.
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
        let Some(m) = message::Entity::find_by_id(id)
            .unique(&state.db.conn)
            .await?
        else {
            continue;
        };
        match send_one(state, &m).await? {
            Settled::Sent => out.sent += 1,
            Settled::Rejected { .. } | Settled::Paused { .. } => out.failed += 1,
            Settled::Retry(_) => out.retried += 1,
            Settled::Ambiguous | Settled::NotCalled => {}
        }
    }
    Ok(out)
}

/// Sends one stored message from its account.
async fn send_one(state: &AppState, m: &message::Model) -> anyhow::Result<Settled> {
    let sender = crate::services::outbound::sender::of_message(state, m).await?;
    let attempt = Attempt {
        m,
        source: Source::Reply,
        claimed: false,
    };
    let Some(sender) = sender else {
        return refuse(state, &attempt, "the account it was sent from is gone").await;
    };
    let halt = AtomicBool::new(false);
    let settled = send(state, &attempt, &sender, &halt, build(state, m, &sender)).await;
    state.db.ring(m.contact_id).await;
    settled
}

/// Fails a message that cannot be sent at all (no account to send it from).
async fn refuse(state: &AppState, attempt: &Attempt<'_>, reason: &str) -> anyhow::Result<Settled> {
    let txn = state.db.write().await?;
    let failed =
        crate::services::outbound::failed::fail(&*txn, attempt.m, reason, state.now_ms()).await?;
    txn.commit().await?;
    Ok(if failed {
        Settled::Rejected {
            refunded: attempt.m.cost_micros.unwrap_or(0) > 0,
        }
    } else {
        Settled::NotCalled
    })
}

/// The message a stored one asks the platform to send.
pub async fn build(
    state: &AppState,
    m: &message::Model,
    sender: &Sender,
) -> Result<OutboundMessage, SendError> {
    let refused = |reason: &str| SendError::Rejected {
        reason: reason.to_owned(),
        opt_out: false,
    };
    let later = |e: sea_orm::DbErr| SendError::RetryLater(e.to_string());
    let channel = sender.provider.descriptor;
    let to = contact::Entity::find_by_id(m.contact_id)
        .unique(&state.db.conn)
        .await
        .map_err(later)?
        .and_then(|k| super::address_on(&k, channel))
        .ok_or_else(|| refused("the contact has no address on this channel any more"))?;
    // A person's reply past the free window goes tagged, where the account may.
    let human_agent = match m.conversation_id {
        Some(c) if m.sent_by_kind == Some(wm_types::messages::SenderKind::User) => {
            conversation::Entity::find_by_id(c)
                .unique(&state.db.conn)
                .await
                .map_err(later)?
                .is_some_and(|c| {
                    super::human_agent_reply(&c, channel, sender.human_agent, state.now_ms())
                })
        }
        _ => false,
    };
    let content = content(state, m, sender).await?;
    let reply_to = match m.reply_to_id {
        Some(id) => message::Entity::find_by_id(id)
            .unique(&state.db.conn)
            .await
            .map_err(later)?
            .and_then(|q| q.platform_message_id),
        None => None,
    };
    Ok(OutboundMessage {
        correlation_id: m.id.to_string(),
        from: sender.from.clone(),
        account: sender.account.clone(),
        to,
        content,
        reply_to,
        body: m.body.clone().unwrap_or_default(),
        human_agent,
    })
}

/// What the platform is asked to send for a stored message.
async fn content(
    state: &AppState,
    m: &message::Model,
    sender: &Sender,
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
                .ok_or_else(|| refused("the message's template is missing"))?;
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
            .ok_or_else(|| refused("the message's file is gone"))?;
            let media_id = uploaded(state, &file, sender).await?;
            OutboundContent::Media {
                kind,
                media_id,
                caption: m.body.clone(),
                filename: stored.filename.or(file.filename),
            }
        }
    })
}

/// The platform's id of a file for `sender`: uploaded once, reused until it expires there
/// (the channel's upload lifetime).
async fn uploaded(
    state: &AppState,
    file: &media::Model,
    sender: &Sender,
) -> Result<String, SendError> {
    let now = state.now_ms();
    let provider = sender.name();
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
    let id = sender
        .provider
        .sender
        .upload_media(sender.account.as_ref(), &upload)
        .await?;
    if file.origin == MEDIA_UPLOAD {
        // A day's margin before the platform forgets it.
        let lifetime = sender.provider.descriptor.upload_ms;
        media::Entity::update_many()
            .col_expr(media::Column::PlatformMediaId, Expr::val(id.clone()))
            .col_expr(media::Column::PhoneNumberId, Expr::val(sender.id))
            .col_expr(media::Column::Provider, Expr::val(provider))
            .col_expr(media::Column::ExpiresAt, Expr::val(now + lifetime))
            .filter(media::Column::Id.eq(file.id))
            .exec(&state.db.conn)
            .await
            .map_err(|e| SendError::RetryLater(e.to_string()))?;
    }
    Ok(id)
}

/// Fails the messages whose outcome stayed unknown past the reconciliation window.
async fn reconcile(state: &AppState) -> anyhow::Result<usize> {
    let now = state.now_ms();
    let window = i64::try_from(state.settings.reconcile_after.as_millis()).unwrap_or(i64::MAX);
    let stale = crate::services::outbound::messages::stale(
        &state.db.conn,
        now.saturating_sub(window),
        BATCH,
    )
    .await?;
    let mut failed = 0;
    for m in stale {
        let txn = state.db.write().await?;
        if crate::services::outbound::failed::fail(
            &*txn,
            &m,
            crate::services::outbound::reconcile::OUTCOME_UNKNOWN,
            now,
        )
        .await?
        {
            failed += 1;
        }
        txn.commit().await?;
    }
    Ok(failed)
}
