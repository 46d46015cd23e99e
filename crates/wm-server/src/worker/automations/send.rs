//! An automation's SEND_TEMPLATE step: the wallet charge recorded in the run, then the
//! platform call, so a resumed run neither charges nor sends twice.

use crate::db::Unique;
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};
use wm_core::address::Address;
use wm_core::automations::run::StepOutcome;
use wm_core::messaging::messageable;
use wm_core::provider::{OutboundContent, OutboundMessage, SendError};
use wm_types::Timestamp;
use wm_types::automations::{RunStep, StepKind, StepType};
use wm_types::campaigns::{LedgerKind, TemplateStatus};
use wm_types::messages::SenderKind;

use super::AutomationWorker;
use crate::db::entities::{
    automation, automation_run, contact, organization, phone_number, template,
};
use crate::observe::metrics::{self, Source};
use crate::services::{messages, sending, wallet};

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
        let sender = phone_number::Entity::find()
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
        // Charged once: the charge and its mark in the run's log are one transaction.
        let charged = log
            .iter()
            .any(|s| s.index as usize == index && s.outcome == "charged");
        if !charged {
            let now = self.state.now_ms();
            let txn = self.state.db.write().await.map_err(db)?;
            let what = format!("Automation \"{}\": template {}", a.name, tpl.name);
            if !wallet::charge(&*txn, org, price, None, &what, now)
                .await
                .map_err(db)?
            {
                return Err("Saldo insuficiente en la wallet.".into());
            }
            log.push(RunStep {
                index: index as u32,
                step_type: StepType::Action,
                kind: StepKind::SendTemplate,
                outcome: "charged".into(),
                detail: Some(format!("{}", price.to_decimal())),
                at: Timestamp::from_millis(now),
            });
            automation_run::Entity::update_many()
                .col_expr(
                    automation_run::Column::StepsLog,
                    Expr::val(serde_json::to_string(&*log).unwrap_or_default()),
                )
                .filter(automation_run::Column::Id.eq(run.id))
                .exec(&*txn)
                .await
                .map_err(db)?;
            txn.commit().await.map_err(db)?;
        }
        let provider = self.state.provider.name();
        let message = OutboundMessage {
            correlation_id: format!("{}:{index}", run.id),
            from: sender.number_e164.clone(),
            account: crate::worker::dispatch::account(&self.state, &sender),
            to: to.clone(),
            content: OutboundContent::Template {
                name: tpl.name.clone(),
                language: tpl.language.clone(),
                parameters: Vec::new(),
            },
            reply_to: None,
            body: tpl.body_text.clone(),
        };
        let own_mps = sender.mps.and_then(|n| u32::try_from(n).ok());
        self.state
            .pacer
            .wait(sender.id, own_mps)
            .await
            .map_err(db)?;
        match self.state.provider.send(&message).await {
            Ok(accepted) => {
                let id = accepted.message_id;
                metrics::messages_sent(provider, Source::Automation, 1);
                let now = self.state.now_ms();
                let outbound = messages::Outbound {
                    org,
                    contact: c.id,
                    platform_message_id: &id,
                    message: &message,
                    template_id: Some(tpl.id),
                    cost_micros: price.0,
                    sent_by: (SenderKind::Automation, a.id),
                    recipient_id: None,
                    phone_number_id: sender.id,
                };
                let txn = self.state.db.write().await.map_err(db)?;
                messages::record_outbound(&*txn, outbound, now)
                    .await
                    .map_err(db)?;
                sending::receipts::apply_kept(&*txn, &id, now)
                    .await
                    .map_err(db)?;
                txn.commit().await.map_err(db)?;
                Ok(StepOutcome::Sent {
                    detail: format!("template {} (message {id})", tpl.name),
                    price_micros: price.0,
                })
            }
            // Maybe sent: kept charged, never re-sent.
            Err(SendError::Ambiguous(reason)) => {
                metrics::messages_failed(provider, Source::Automation, "ambiguous", 1);
                Err(format!("outcome unknown: {reason}"))
            }
            Err(e) => {
                let (class, reason) = match e {
                    SendError::Rejected { reason, .. } => ("rejected", reason),
                    SendError::RetryLater(reason) => ("unavailable", reason),
                    SendError::Paused { reason, .. } => ("paused", reason),
                    SendError::Ambiguous(reason) => ("ambiguous", reason),
                };
                metrics::messages_failed(provider, Source::Automation, class, 1);
                metrics::messages_refunded(provider, Source::Automation, usize::from(price.0 > 0));
                let now = self.state.now_ms();
                let txn = self.state.db.write().await.map_err(db)?;
                let what = format!("Automation \"{}\": refund of a rejected message", a.name);
                wallet::credit(&*txn, org, LedgerKind::Refund, price, None, &what, now)
                    .await
                    .map_err(db)?;
                txn.commit().await.map_err(db)?;
                Err(reason)
            }
        }
    }
}
