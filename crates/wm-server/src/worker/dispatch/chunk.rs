//! One chunk of a campaign's messages: each one built from its recipient, contact and the
//! campaign's template, then paced, claimed, sent and recorded through
//! [`outbound::send`](crate::services::outbound::send::send) with the campaign store of
//! attempts ([`recipients::Attempt`]), several in flight at once.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures::StreamExt;
use sea_orm::{EntityTrait, QuerySelect};
use tracing::Instrument;
use uuid::Uuid;
use wm_core::address::Address;
use wm_core::messaging::messageable;
use wm_core::provider::{OutboundContent, OutboundMessage};
use wm_core::templates::{self, VarSource};
use wm_types::campaigns::CampaignStatus;

use crate::db::Unique;
use crate::db::entities::{campaign, contact, phone_number, recipient, template};
use crate::services::outbound::recipients::{self, Attempt};
use crate::services::outbound::send::{Settled, send as call};
use crate::services::outbound::sender::Sender;
use crate::state::AppState;

/// Most messages taken per chunk before the campaign's status is looked at again.
pub(super) const CHUNK: u64 = 200;
/// A chunk takes at most this many seconds at the number's pace, well inside the lease.
pub(super) const CHUNK_SECS: u64 = 5;
/// Platform calls in flight at once for one campaign: also the most calls a campaign makes
/// after the platform's first answer that stops it (they were already under way).
pub const SEND_CONCURRENCY: usize = 16;

/// What a campaign's chunks are sent with, read once per lease.
pub(super) struct Context {
    sender: Sender,
    template: template::Model,
    vars: std::collections::BTreeMap<String, VarSource>,
    /// Messages per chunk: about [`CHUNK_SECS`] at the number's pace.
    pub chunk: u64,
}

impl Context {
    /// The campaign's sender number (with its provider and platform account), template and
    /// variables; `None` when the number or template is gone, or no provider sends for it.
    pub async fn load(state: &AppState, c: &campaign::Model) -> anyhow::Result<Option<Context>> {
        let conn = &state.db.conn;
        let Some(number) = phone_number::Entity::find_by_id(c.phone_number_id)
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
        let Some(sender) = Sender::of_number(state, &number) else {
            return Ok(None);
        };
        let chunk = match sender.own_mps.unwrap_or(state.settings.provider_mps) {
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
            from: self.sender.from.clone(),
            account: self.sender.account.clone(),
            to: Address::from_stored(&r.phone),
            content: OutboundContent::Template {
                name: self.template.name.clone(),
                language: self.template.language.clone(),
                parameters,
            },
            reply_to: None,
            body: templates::render(body, &self.vars, &values),
            human_agent: false,
        };
        let blocked = k
            .and_then(|k| messageable(k.opted_out, k.consent_given, Some(())).err())
            .map(|why| why.reason().to_owned())
            .or(empty);
        (message, blocked)
    }
}

/// Sends one chunk: its messages built, then up to [`SEND_CONCURRENCY`] in flight, each
/// paced, claimed, called and recorded. The first answer that stops the campaign (or asks
/// to retry later) stops the calls not yet made.
pub(super) async fn send(
    state: &AppState,
    ctx: &Context,
    batch: Vec<recipient::Model>,
) -> anyhow::Result<Vec<Settled>> {
    let ids: Vec<Uuid> = batch.iter().map(|r| r.contact_id).collect();
    let contacts: HashMap<Uuid, contact::Model> =
        crate::db::by_id::<contact::Entity>(&state.db.conn, ids, |k| k.id).await?;
    // Raised by the first answer that stops the chunk.
    let halt = Arc::new(AtomicBool::new(false));
    let calls: Vec<futures::future::BoxFuture<'static, anyhow::Result<Settled>>> = batch
        .into_iter()
        .map(|r| {
            let (m, blocked) = ctx.message(&r, contacts.get(&r.contact_id));
            let call = one(
                state.clone(),
                ctx.sender.clone(),
                ctx.template.id,
                r,
                m,
                blocked,
                halt.clone(),
            );
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

/// One message: a recipient who may no longer be messaged fails uncharged (refunded);
/// any other is sent through the driver. A recipient not claimed because its campaign
/// stopped sending (a user's pause, a template webhook, another call's answer) stops the
/// chunk's calls not yet made.
async fn one(
    state: AppState,
    sender: Sender,
    template_id: Uuid,
    r: recipient::Model,
    m: OutboundMessage,
    blocked: Option<String>,
    halt: Arc<AtomicBool>,
) -> anyhow::Result<Settled> {
    if let Some(reason) = blocked {
        let txn = state.db.write().await?;
        let done = recipients::rejected(&*txn, &r, &reason, false, state.now_ms()).await?;
        txn.commit().await?;
        return Ok(if done {
            Settled::Rejected {
                refunded: r.cost_micros > 0,
            }
        } else {
            Settled::NotCalled
        });
    }
    let attempt = Attempt { r: &r, template_id };
    let settled = call(&state, &attempt, &sender, &halt, async { Ok(m) }).await?;
    if settled == Settled::NotCalled
        && !halt.load(Ordering::SeqCst)
        && !sending(&state, r.campaign_id).await?
    {
        halt.store(true, Ordering::SeqCst);
    }
    Ok(settled)
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
