//! One chunk of a campaign's messages: each one built from its recipient, contact and the
//! campaign's template, then claimed, sent and recorded ([`one`]), several in flight at once
//! and each paced by its sender number.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures::StreamExt;
use sea_orm::{EntityTrait, QuerySelect};
use tracing::Instrument;
use uuid::Uuid;
use wm_core::address::Address;
use wm_core::messaging::messageable;
use wm_core::provider::{OutboundContent, OutboundMessage, PlatformAccount, SendError};
use wm_core::templates::{self, VarSource};
use wm_types::campaigns::CampaignStatus;

use super::{CHUNK, CHUNK_SECS, SEND_CONCURRENCY, account};
use crate::db::Unique;
use crate::db::entities::{campaign, contact, phone_number, recipient, template};
use crate::observe::metrics::{self, Source};
use crate::services::sending::attempts;
use crate::state::AppState;

/// What became of one message.
pub(super) enum Result1 {
    Sent,
    Rejected,
    /// Back in the queue until this time (ms).
    Retry(i64),
    Paused(String, String),
    Ambiguous,
    Skipped,
}

/// What a campaign's chunks are sent with, read once per lease.
pub(super) struct Context {
    sender: phone_number::Model,
    template: template::Model,
    account: Option<PlatformAccount>,
    own_mps: Option<u32>,
    vars: std::collections::BTreeMap<String, VarSource>,
    /// Messages per chunk: about [`CHUNK_SECS`] at the number's pace.
    pub chunk: u64,
}

impl Context {
    /// The campaign's sender number (with its platform account), template and variables;
    /// `None` when the number or template is gone.
    pub async fn load(state: &AppState, c: &campaign::Model) -> anyhow::Result<Option<Context>> {
        let conn = &state.db.conn;
        let Some(sender) = phone_number::Entity::find_by_id(c.phone_number_id)
            .unique(conn)
            .await?
        else {
            return Ok(None);
        };
        let Some(template) = template::Entity::find_by_id(c.template_id)
            .unique(conn)
            .await?
        else {
            return Ok(None);
        };
        let account = account(state, &sender);
        let own_mps = sender.mps.and_then(|n| u32::try_from(n).ok());
        let chunk = match own_mps.unwrap_or(state.settings.provider_mps) {
            0 => CHUNK,
            mps => (u64::from(mps) * CHUNK_SECS).clamp(SEND_CONCURRENCY as u64, CHUNK),
        };
        let positions = templates::positions(&template.body_text);
        let vars_json: serde_json::Map<String, serde_json::Value> =
            crate::db::stored::json("campaigns.variables", c.id, &c.variables);
        let vars = templates::parse_variables(&vars_json, &positions).unwrap_or_default();
        Ok(Some(Context {
            sender,
            template,
            account,
            own_mps,
            vars,
            chunk,
        }))
    }

    /// The message for one recipient, and why it may not be sent (its contact opted out
    /// since the batch was charged, or has no value for a variable): refunded, not sent.
    fn message(
        &self,
        r: &recipient::Model,
        k: Option<&contact::Model>,
    ) -> (OutboundMessage, Option<String>) {
        let values = templates::ContactValues {
            full_name: k.and_then(|k| k.full_name.as_deref()),
            // The number it is sent to (none for a business-scoped user id).
            primary_phone: Some(r.phone.as_str()).filter(|p| p.starts_with('+')),
            primary_email: k.and_then(|k| k.primary_email.as_deref()),
            company: k.and_then(|k| k.company.as_deref()),
            country: k.and_then(|k| k.country.as_deref()),
        };
        let body = &self.template.body_text;
        let (parameters, empty) = match templates::parameters(body, &self.vars, &values) {
            Ok(p) => (p, None),
            Err(e) => (Vec::new(), Some(e.to_string())),
        };
        let message = OutboundMessage {
            correlation_id: r.id.to_string(),
            from: self.sender.number_e164.clone(),
            account: self.account.clone(),
            to: Address::from_stored(&r.phone),
            content: OutboundContent::Template {
                name: self.template.name.clone(),
                language: self.template.language.clone(),
                parameters,
            },
            reply_to: None,
            body: templates::render(body, &self.vars, &values),
        };
        let blocked = k
            .and_then(|k| messageable(k.opted_out, k.consent_given, Some(())).err())
            .map(|why| why.reason().to_owned())
            .or(empty);
        (message, blocked)
    }
}

/// Sends one chunk: its messages built, then up to [`SEND_CONCURRENCY`] in flight, each
/// claimed, called and recorded. The first answer that stops the campaign (or asks to
/// retry later) stops the calls not yet made.
pub(super) async fn send(
    state: &AppState,
    ctx: &Context,
    batch: Vec<recipient::Model>,
) -> anyhow::Result<Vec<Result1>> {
    let ids: Vec<Uuid> = batch.iter().map(|r| r.contact_id).collect();
    let contacts: HashMap<Uuid, contact::Model> =
        crate::db::by_id::<contact::Entity>(&state.db.conn, ids, |k| k.id).await?;
    let sender = Sender {
        id: ctx.sender.id,
        own_mps: ctx.own_mps,
        template_id: ctx.template.id,
    };
    // Raised by the first answer that stops the chunk.
    let halt = Arc::new(AtomicBool::new(false));
    let calls: Vec<futures::future::BoxFuture<'static, anyhow::Result<Result1>>> = batch
        .into_iter()
        .map(|r| {
            let (m, blocked) = ctx.message(&r, contacts.get(&r.contact_id));
            let call = one(state.clone(), sender, r, m, blocked, halt.clone());
            Box::pin(call) as futures::future::BoxFuture<'static, _>
        })
        .collect();
    let span = tracing::info_span!("campaign_chunk", messages = calls.len());
    futures::stream::iter(calls)
        .buffer_unordered(SEND_CONCURRENCY)
        .collect::<Vec<_>>()
        .instrument(span)
        .await
        .into_iter()
        .collect()
}

/// A chunk's results in the metrics and the log.
pub(super) fn count(provider: &'static str, results: &[Result1]) {
    let count = |f: fn(&Result1) -> bool| results.iter().filter(|r| f(r)).count();
    let sent = count(|r| matches!(r, Result1::Sent));
    let rejected = count(|r| matches!(r, Result1::Rejected));
    metrics::messages_sent(provider, Source::Campaign, sent);
    metrics::messages_failed(provider, Source::Campaign, "rejected", rejected);
    metrics::messages_refunded(provider, Source::Campaign, rejected);
    metrics::messages_failed(
        provider,
        Source::Campaign,
        "unavailable",
        count(|r| matches!(r, Result1::Retry(_))),
    );
    metrics::messages_failed(
        provider,
        Source::Campaign,
        "ambiguous",
        count(|r| matches!(r, Result1::Ambiguous)),
    );
    tracing::info!(sent, rejected, "chunk sent");
}

/// The number a chunk is sent from, its own pace, and the template it sends.
#[derive(Clone, Copy)]
struct Sender {
    id: Uuid,
    own_mps: Option<u32>,
    /// The campaign's template, recorded with each message sent.
    template_id: Uuid,
}

/// One message: claim, call, record. Not made once `halt` is raised (by this chunk's first
/// answer that pauses the campaign or asks to retry later); raises it on such an answer.
async fn one(
    state: AppState,
    sender: Sender,
    r: recipient::Model,
    m: OutboundMessage,
    blocked: Option<String>,
    halt: Arc<AtomicBool>,
) -> anyhow::Result<Result1> {
    let r = &r;
    if let Some(reason) = blocked {
        let txn = state.db.write().await?;
        let done = attempts::rejected(&*txn, r, &reason, false, state.now_ms()).await?;
        txn.commit().await?;
        return Ok(if done {
            Result1::Rejected
        } else {
            Result1::Skipped
        });
    }
    if halt.load(Ordering::SeqCst) {
        return Ok(Result1::Skipped);
    }
    state.pacer.wait(sender.id, sender.own_mps).await?;
    if state.stopping() || halt.load(Ordering::SeqCst) {
        // Not claimed: whoever takes the campaign over (or the next pass) sends it.
        return Ok(Result1::Skipped);
    }
    {
        let txn = state.db.write().await?;
        let claimed = attempts::claim(&*txn, r.id, state.now_ms()).await?;
        txn.commit().await?;
        if !claimed {
            // Another worker has it, or the campaign stopped sending (paused by a user, a
            // template webhook or another call): then no other call of the chunk is made.
            if !sending(&state, r.campaign_id).await? {
                halt.store(true, Ordering::SeqCst);
            }
            return Ok(Result1::Skipped);
        }
    }
    let answer = state.provider.send(&m).await;
    if matches!(
        answer,
        Err(SendError::RetryLater(_) | SendError::Paused { .. })
    ) {
        halt.store(true, Ordering::SeqCst);
    }
    let now = state.now_ms();
    let txn = state.db.write().await?;
    let result = match answer {
        Ok(accepted) => {
            let sent = attempts::Sent {
                message: &m,
                template_id: sender.template_id,
                phone_number_id: sender.id,
            };
            attempts::sent(&*txn, r, &accepted, &sent, now).await?;
            Result1::Sent
        }
        Err(SendError::Rejected { reason, opt_out }) => {
            attempts::rejected(&*txn, r, &reason, opt_out, now).await?;
            Result1::Rejected
        }
        Err(SendError::RetryLater(reason)) => {
            tracing::warn!(recipient = %r.id, %reason, "the platform asked to retry later");
            attempts::retry_later(&*txn, r, now).await?;
            Result1::Retry(now + attempts::backoff_ms(r.retries))
        }
        Err(SendError::Paused {
            stop_reason,
            reason,
        }) => {
            attempts::release(&*txn, r.id).await?;
            Result1::Paused(stop_reason, reason)
        }
        Err(SendError::Ambiguous(reason)) => {
            // Maybe sent: never re-sent; a status webhook or the reconciliation settles it.
            tracing::warn!(recipient = %r.id, %reason, "platform outcome unknown");
            Result1::Ambiguous
        }
    };
    txn.commit().await?;
    Ok(result)
}

/// Whether the campaign is still SENDING.
async fn sending(state: &AppState, id: Uuid) -> anyhow::Result<bool> {
    let status: Option<CampaignStatus> = campaign::Entity::find_by_id(id)
        .select_only()
        .column(campaign::Column::Status)
        .into_tuple()
        .one(&state.db.conn)
        .await?;
    Ok(status == Some(CampaignStatus::Sending))
}
