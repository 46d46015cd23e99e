//! An automation's SEND_TEMPLATE step: the wallet charge and the message (queued, claimed by
//! the step) in one transaction with their mark in the run, then the platform call through
//! the one outbound path; a resumed run finds its message and neither charges nor sends
//! twice.

use std::sync::atomic::AtomicBool;

use crate::db::Unique;
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};
use uuid::Uuid;
use wm_core::address::Address;
use wm_core::automations::run::StepOutcome;
use wm_core::messaging::messageable;
use wm_core::provider::{OutboundContent, OutboundMessage};
use wm_types::automations::{RunStep, StepKind, StepType};
use wm_types::campaigns::TemplateStatus;
use wm_types::messages::{MessageStatus, SenderKind};
use wm_types::{Money, Timestamp};

use super::AutomationWorker;
use crate::db::entities::{
    automation, automation_run, contact, message, organization, phone_number, template,
};
use crate::observe::metrics::Source;
use crate::services::messages::{self, Outbound};
use crate::services::outbound::messages::Attempt;
use crate::services::outbound::send::{Settled, send};
use crate::services::outbound::sender::Sender;
use crate::services::{sending, wallet};

impl AutomationWorker {
    pub(super) async fn send_template(
        &self,
        run: &automation_run::Model,
        a: &automation::Model,
        index: usize,
        c: &contact::Model,
        name: &str,
        log: &mut Vec<RunStep>,
    ) -> Result<StepOutcome, String> {
        let conn = &self.state.db.conn;
        let db = |e: sea_orm::DbErr| e.to_string();
        let to = crate::services::replies::address_of(c);
        let to = match messageable(c.opted_out, c.consent_given, to) {
            Ok(to) => to,
            Err(why) => return Ok(StepOutcome::Skipped(why.reason().into())),
        };
        let org = c.organization_id;
        let tpl = template::Entity::find()
            .filter(template::Column::OrganizationId.eq(org))
            .filter(template::Column::Name.eq(name.trim()))
            .filter(template::Column::Status.eq(TemplateStatus::Approved))
            .one(conn)
            .await
            .map_err(db)?
            .ok_or_else(|| format!("no APPROVED template named {name}"))?;
        let number = phone_number::Entity::find()
            .filter(phone_number::Column::OrganizationId.eq(org))
            .order_by_asc(phone_number::Column::CreatedAt)
            .one(conn)
            .await
            .map_err(db)?
            .ok_or("the organization has no sender number")?;
        let o = organization::Entity::find_by_id(org)
            .unique(conn)
            .await
            .map_err(db)?
            .ok_or("organization missing")?;
        let category = tpl.category;
        if matches!(to, Address::UserId(_))
            && let Some(why) = wm_core::whatsapp::refuses_user_id(category)
        {
            return Err(why.to_owned());
        }
        let price = sending::rate_card(&o)
            .market_for_address(&to)
            .map(|m| m.price(category))
            .ok_or("unpriceable destination: the number has no known market")?;
        let sender = Sender::of_number(&self.state, &number)
            .ok_or("no provider sends for the organization's number")?;
        let message = OutboundMessage {
            correlation_id: String::new(),
            from: sender.from.clone(),
            account: sender.account.clone(),
            to,
            content: OutboundContent::Template {
                name: tpl.name.clone(),
                language: tpl.language.clone(),
                parameters: Vec::new(),
            },
            reply_to: None,
            body: tpl.body_text.clone(),
            human_agent: false,
        };
        // Resumed after a crash mid-send: the message this step queued decides, never a
        // second one (it was written with the charge, at the time the log says).
        let found = match charged_at(log, index) {
            Some(at) => message::Entity::find()
                .filter(message::Column::SentByKind.eq(SenderKind::Automation))
                .filter(message::Column::SentById.eq(a.id))
                .filter(message::Column::ContactId.eq(c.id))
                .filter(message::Column::CreatedAt.eq(at))
                .one(conn)
                .await
                .map_err(db)?,
            None => None,
        };
        let queued = match found {
            Some(m) => m,
            None => {
                let Some(row) = self
                    .queue(run, a, index, c, &tpl, &number, &message, price, log)
                    .await
                    .map_err(db)?
                else {
                    return Err("Saldo insuficiente en la wallet.".into());
                };
                let attempt = Attempt {
                    m: &row,
                    source: Source::Automation,
                    claimed: true,
                };
                let halt = AtomicBool::new(false);
                let call = OutboundMessage {
                    correlation_id: row.id.to_string(),
                    ..message
                };
                let settled = send(&self.state, &attempt, &sender, &halt, async { Ok(call) })
                    .await
                    .map_err(|e| format!("{e:#}"))?;
                if settled == Settled::NotCalled {
                    // Stopping before the call: the reply sender sends it later.
                    release(&self.state, row.id).await.map_err(db)?;
                }
                message::Entity::find_by_id(row.id)
                    .unique(conn)
                    .await
                    .map_err(db)?
                    .ok_or("the step's message is gone")?
            }
        };
        outcome(&queued, &tpl.name, price.0)
    }

    /// The step's message, charged and queued (claimed: this step makes the call) in one
    /// transaction with its mark in the run's log (`charged`, the price); `None` when the
    /// wallet cannot pay it. A run whose log says it was charged (before its message was
    /// kept with the charge) is not charged again.
    #[allow(clippy::too_many_arguments)]
    async fn queue(
        &self,
        run: &automation_run::Model,
        a: &automation::Model,
        index: usize,
        c: &contact::Model,
        tpl: &template::Model,
        number: &phone_number::Model,
        message: &OutboundMessage,
        price: Money,
        log: &mut Vec<RunStep>,
    ) -> Result<Option<message::Model>, sea_orm::DbErr> {
        let now = self.state.now_ms();
        let txn = self.state.db.write().await?;
        let charged = charged_at(log, index).is_some();
        let what = format!("Automation \"{}\": template {}", a.name, tpl.name);
        if !charged && !wallet::charge(&*txn, c.organization_id, price, None, &what, now).await? {
            return Ok(None);
        }
        let queued = Outbound {
            org: c.organization_id,
            contact: c.id,
            platform_message_id: "",
            message,
            template_id: Some(tpl.id),
            cost_micros: price.0,
            sent_by: (SenderKind::Automation, a.id),
            recipient_id: None,
            phone_number_id: number.id,
        };
        let row = messages::queue_template(&*txn, queued, now).await?;
        message::Entity::update_many()
            .col_expr(message::Column::AttemptAt, Expr::val(now))
            .filter(message::Column::Id.eq(row.id))
            .exec(&*txn)
            .await?;
        if !charged {
            log.push(RunStep {
                index: index as u32,
                step_type: StepType::Action,
                kind: StepKind::SendTemplate,
                outcome: CHARGED.into(),
                detail: Some(format!("{}", price.to_decimal())),
                at: Timestamp::from_millis(now),
            });
        }
        automation_run::Entity::update_many()
            .col_expr(
                automation_run::Column::StepsLog,
                Expr::val(serde_json::to_string(&*log).unwrap_or_default()),
            )
            .filter(automation_run::Column::Id.eq(run.id))
            .exec(&*txn)
            .await?;
        txn.commit().await?;
        Ok(Some(row))
    }
}

/// The log outcome of a step's message charged (and queued with the charge).
const CHARGED: &str = "charged";

/// When step `index` was charged (and its message written), by its mark in the run's log.
fn charged_at(log: &[RunStep], index: usize) -> Option<i64> {
    log.iter()
        .find(|s| s.index as usize == index && s.outcome == CHARGED)
        .map(|s| s.at.millis())
}

/// A claimed message whose call was not made (the server stopping): back in the queue.
async fn release(state: &crate::state::AppState, id: Uuid) -> Result<(), sea_orm::DbErr> {
    message::Entity::update_many()
        .col_expr(message::Column::AttemptAt, Expr::val(Option::<i64>::None))
        .filter(message::Column::Id.eq(id))
        .filter(message::Column::Status.eq(MessageStatus::Pending))
        .exec(&state.db.conn)
        .await?;
    Ok(())
}

/// The step's outcome, by what became of its message: sent (or in the queue again, the
/// platform having asked to retry later), or failed (refunded) with the platform's reason.
fn outcome(m: &message::Model, template: &str, price_micros: i64) -> Result<StepOutcome, String> {
    match m.status {
        MessageStatus::Failed => Err(m
            .error_message
            .clone()
            .unwrap_or_else(|| "the platform refused the message".into())),
        MessageStatus::Pending if m.attempt_at.is_some() => Err(format!(
            "outcome unknown: the platform did not confirm message {}",
            m.id
        )),
        _ => Ok(StepOutcome::Sent {
            detail: match &m.platform_message_id {
                Some(id) => format!("template {template} (message {id})"),
                None => format!("template {template} (message {}, queued)", m.id),
            },
            price_micros,
        }),
    }
}
