//! Answering customers: `POST /conversations/{id}/messages` checks the reply, the
//! customer-service window and the price, charges it and queues it (PENDING) in one
//! transaction; [`deliver`](mod@deliver) sends it at most once from the conversation's
//! business number; [`read`](mod@read) marks the customer's messages read.
//!
//! The window: a platform with a customer-service window (WhatsApp: 24 hours from the
//! customer's last message) takes only templates outside it, so a free-form reply outside
//! it is refused here (400 `CONVERSATION_WINDOW_CLOSED`) before anything is sent or charged.
//! Money: free-form replies are free (service messages); a template is priced from the rate
//! card by category, a UTILITY template free inside an open window; charged before the call,
//! refunded when the message fails.

use sea_orm::{ConnectionTrait, EntityTrait};
use uuid::Uuid;
use wm_core::address::Address;
use wm_core::platform::Descriptor;
use wm_core::templates;
use wm_types::Money;
use wm_types::campaigns::{TemplateCategory, TemplateStatus};
use wm_types::enums::ErrorCode;
use wm_types::messages::{
    Message, MessageDirection, MessageInteractive, MessageStatus, MessageTemplate, MessageType,
    SendMessage, SendType, SenderKind,
};

use crate::db::Unique;
use crate::db::entities::{contact, conversation, media, message, organization, template};
use crate::db::messages::{self, MEDIA_STORED, NewMessage, Stored};
use crate::db::tenant::find_in_org;
use crate::error::{ApiError, ApiResult};
use crate::keys::AuthContext;
use crate::services::sending;
use crate::state::AppState;

pub mod deliver;
pub mod read;

/// Where a contact is answered on `channel`: on a channel that knows people by phone, their
/// phone (else the business-scoped user id of a person who hides theirs); on one that knows
/// them by its own scoped id (a Page-scoped id, a website visitor), their identity there.
pub fn address_on(k: &contact::Model, channel: &Descriptor) -> Option<Address> {
    if channel.identity == wm_core::platform::Identity::Phone {
        return address_of(k);
    }
    crate::db::contacts::identities_of(k)
        .into_iter()
        .find(|i| i.channel_type == channel.channel_type)
        .map(|i| Address::UserId(i.scoped_id.unwrap_or(i.external_id)))
}

/// Where a contact is answered on WhatsApp: its phone, else the business-scoped user id of
/// a person who hides theirs ([`wm_core::messaging::whatsapp_address`]).
pub fn address_of(k: &contact::Model) -> Option<Address> {
    let identities = crate::db::contacts::identities_of(k);
    wm_core::messaging::whatsapp_address(
        k.primary_phone.as_deref(),
        identities
            .iter()
            .map(|i| (i.channel_type, i.external_id.as_str())),
    )
}

/// Whether a free-form message may be sent in a conversation at `now`: the customer wrote,
/// and the window their message opened (by their channel's rule, kept on the conversation)
/// has not closed; on a channel without a window (a website chat), always.
pub fn window_open(c: &conversation::Model, now: i64) -> bool {
    c.window_closes_at.is_none_or(|at| now < at)
        && (c.last_inbound_at.is_some() || c.channel_type == wm_types::enums::ChannelType::Webchat)
}

/// Whether a person's reply past the free window goes tagged as a human agent's (Messenger's
/// and Instagram's `HUMAN_AGENT`): the channel allows it (`humanAgent`, Meta's approval)
/// and the tagged window of the customer's last message is still open.
pub fn human_agent_reply(
    c: &conversation::Model,
    channel: &Descriptor,
    allowed: bool,
    now: i64,
) -> bool {
    allowed && !window_open(c, now) && channel.window.tagged_open(c.last_inbound_at, now)
}

/// The reply's content as stored, and the text the customer reads.
struct Prepared {
    message_type: MessageType,
    body: Option<String>,
    stored: Stored,
    media_id: Option<Uuid>,
    template: Option<template::Model>,
}

/// Exactly the part `type` names, and nothing else.
fn one_part(body: &SendMessage) -> ApiResult<()> {
    let given = [
        ("text", body.text.is_some()),
        ("media", body.media.is_some()),
        ("interactive", body.interactive.is_some()),
        ("template", body.template.is_some()),
    ];
    let wanted = match body.message_type {
        SendType::Text => "text",
        SendType::Interactive => "interactive",
        SendType::Template => "template",
        _ => "media",
    };
    let mut errors = Vec::new();
    for (part, present) in given {
        if part == wanted && !present {
            errors.push(format!("{part} is required for type {}", body.message_type));
        }
        if part != wanted && present {
            errors.push(format!(
                "{part} must not be given for type {}",
                body.message_type
            ));
        }
    }
    if let Some(i) = &body.interactive {
        let mut ids: Vec<&str> = i.buttons.iter().map(|b| b.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        if ids.len() != i.buttons.len() {
            errors.push("interactive.buttons ids must be unique".into());
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(ApiError::Validation(errors))
    }
}

fn media_type(t: SendType) -> MessageType {
    match t {
        SendType::Video => MessageType::Video,
        SendType::Audio => MessageType::Audio,
        SendType::Document => MessageType::Document,
        SendType::Sticker => MessageType::Sticker,
        _ => MessageType::Image,
    }
}

async fn prepare(
    conn: &impl ConnectionTrait,
    org: Uuid,
    body: &SendMessage,
    k: &contact::Model,
    channel: &Descriptor,
) -> ApiResult<Prepared> {
    let mut p = Prepared {
        message_type: MessageType::Text,
        body: None,
        stored: Stored::default(),
        media_id: None,
        template: None,
    };
    let fits = |field: &str, text: &str| {
        if channel.text_fits(text) {
            Ok(())
        } else {
            Err(ApiError::invalid(format!(
                "{field} must be at most {} on this conversation's channel",
                channel.text_limit()
            )))
        }
    };
    match body.message_type {
        SendType::Text => {
            p.body = body.text.as_ref().map(|t| t.body.clone());
            fits("text.body", p.body.as_deref().unwrap_or_default())?;
        }
        SendType::Interactive => {
            let i = body
                .interactive
                .as_ref()
                .ok_or_else(|| ApiError::invalid("interactive is required"))?;
            fits("interactive.body", &i.body)?;
            p.message_type = MessageType::Interactive;
            p.body = Some(i.body.clone());
            p.stored.interactive = Some(MessageInteractive {
                kind: "buttons".into(),
                reply_id: None,
                title: None,
                buttons: i.buttons.clone(),
            });
        }
        SendType::Template => {
            let t = body
                .template
                .as_ref()
                .ok_or_else(|| ApiError::invalid("template is required"))?;
            if !channel.templates {
                return Err(ApiError::bad_request(
                    "Templates are not sent on this conversation's channel.",
                ));
            }
            let row = find_in_org::<template::Entity>(org, t.template_id)
                .unique(conn)
                .await?
                .filter(|r| r.status == TemplateStatus::Approved)
                .ok_or_else(|| {
                    ApiError::invalid(
                        "template.templateId must be an APPROVED template of this organization",
                    )
                })?;
            let positions = templates::positions(&row.body_text);
            let vars =
                templates::parse_variables(&t.variables.clone().unwrap_or_default(), &positions)
                    .map_err(ApiError::Validation)?;
            let values = templates::ContactValues {
                full_name: k.full_name.as_deref(),
                primary_phone: k.primary_phone.as_deref(),
                primary_email: k.primary_email.as_deref(),
                company: k.company.as_deref(),
                country: k.country.as_deref(),
            };
            let parameters = templates::parameters(&row.body_text, &vars, &values)
                .map_err(|e| ApiError::invalid(e.to_string()))?;
            p.message_type = MessageType::Template;
            p.body = Some(templates::render(&row.body_text, &vars, &values));
            p.stored.template = Some(MessageTemplate {
                template_id: Some(row.id),
                name: row.name.clone(),
                language: row.language.clone(),
                variables: parameters,
            });
            p.template = Some(row);
        }
        media_kind => {
            let m = body
                .media
                .as_ref()
                .ok_or_else(|| ApiError::invalid("media is required"))?;
            let file = find_in_org::<media::Entity>(org, m.id)
                .unique(conn)
                .await?
                .filter(|f| f.status == MEDIA_STORED)
                .ok_or_else(|| {
                    ApiError::invalid(
                        "media.id must be a stored file of this organization (POST /media)",
                    )
                })?;
            p.message_type = media_type(media_kind);
            let is = file
                .mime_type
                .as_deref()
                .and_then(|mime| channel.media_limit(mime))
                .map(|(kind, _)| kind);
            if is != Some(p.message_type) {
                return Err(ApiError::invalid(format!(
                    "media.id is a file of type {} ({}); it cannot be sent as {}",
                    is.map_or("unknown".to_owned(), |k| k.to_string()),
                    file.mime_type.as_deref().unwrap_or("no MIME type"),
                    body.message_type
                )));
            }
            let largest = file
                .mime_type
                .as_deref()
                .and_then(|mime| channel.media_limit(mime))
                .map_or(0, |(_, max)| max);
            if file
                .size
                .is_some_and(|n| u64::try_from(n).unwrap_or(0) > largest)
            {
                return Err(ApiError::invalid(format!(
                    "media.id is {} bytes; this conversation's channel takes at most {largest} bytes for {}",
                    file.size.unwrap_or(0),
                    body.message_type
                )));
            }
            if m.caption.is_some() && !channel.captions {
                return Err(ApiError::invalid(
                    "media.caption cannot be sent on this conversation's channel: send the text as its own message",
                ));
            }
            if media_kind != SendType::Image
                && media_kind != SendType::Video
                && media_kind != SendType::Document
                && m.caption.is_some()
            {
                return Err(ApiError::invalid(format!(
                    "media.caption cannot be sent with type {}",
                    body.message_type
                )));
            }
            p.body = m.caption.clone();
            p.media_id = Some(file.id);
            if media_kind == SendType::Document {
                p.stored.filename = m.filename.clone().or(file.filename);
            }
        }
    }
    Ok(p)
}

/// The 400 of a free-form reply outside the window, saying which window closed and what
/// may still be sent.
fn window_closed(
    c: &conversation::Model,
    channel: &Descriptor,
    human_agent: bool,
    now: i64,
) -> ApiError {
    let message = match (c.last_inbound_at, channel.templates) {
        (None, true) => {
            "The customer has not written in this conversation; only a template can be sent."
                .to_owned()
        }
        (None, false) => "The customer has not written in this conversation; nothing can be sent until they do.".to_owned(),
        (Some(_), true) => "The customer-service window closed 24 hours after the customer's last message; only a template can be sent now.".to_owned(),
        (Some(_), false) if channel.window.tagged_open(c.last_inbound_at, now) && !human_agent => {
            "The messaging window closed 24 hours after the customer's last message; a person's reply could go tagged HUMAN_AGENT for 7 days, but this channel is not allowed to (humanAgent is off).".to_owned()
        }
        (Some(_), false) => "The messaging window closed after the customer's last message; nothing can be sent until they write again.".to_owned(),
    };
    ApiError::business(
        axum::http::StatusCode::BAD_REQUEST,
        Some(ErrorCode::ConversationWindowClosed),
        message,
    )
}

/// The price of a reply: nothing for a free-form one; a template's rate for the contact's
/// market (a business-scoped user id's by its country), nothing for UTILITY inside an open
/// window.
fn price(
    o: &organization::Model,
    t: Option<&template::Model>,
    to: &Address,
    window_open: bool,
) -> ApiResult<Money> {
    let Some(t) = t else { return Ok(Money(0)) };
    if t.category == TemplateCategory::Utility && window_open {
        return Ok(Money(0));
    }
    sending::rate_card(o)
        .market_for_address(to)
        .map(|m| m.price(t.category))
        .ok_or_else(|| {
            ApiError::bad_request("The contact's number has no known market to price the template.")
        })
}

/// `POST /conversations/{id}/messages`: the reply, PENDING, charged and queued.
pub async fn send(
    state: &AppState,
    auth: &AuthContext,
    id: Uuid,
    body: SendMessage,
) -> ApiResult<Message> {
    let org = auth.org_id;
    one_part(&body)?;
    // A conversation the key can read (its channel active).
    crate::services::conversations::get(state, org, id).await?;
    let now = state.now_ms();
    let txn = state.db.write().await?;
    let c = find_in_org::<conversation::Entity>(org, id)
        .unique(&*txn)
        .await?
        .ok_or_else(|| ApiError::not_found("Conversation"))?;
    let provider = state.provider_for(c.channel_type).ok_or_else(|| {
        ApiError::bad_request("No provider sends on this conversation's channel.")
    })?;
    let channel = provider.descriptor;
    let from = crate::services::outbound::sender::answering(&*txn, &c).await?;
    let open = window_open(&c, now);
    let tagged = human_agent_reply(&c, channel, from.human_agent(), now);
    if body.message_type != SendType::Template && !open && !tagged {
        return Err(window_closed(&c, channel, from.human_agent(), now));
    }
    let k = crate::db::contacts::find(&*txn, org, c.contact_id)
        .await?
        .ok_or_else(|| ApiError::not_found("Contact"))?;
    let to = address_on(&k, channel).ok_or_else(|| {
        ApiError::bad_request(if channel.identity == wm_core::platform::Identity::Phone {
            "The contact has no phone number to answer."
        } else {
            "The contact has no identity on this conversation's channel to answer."
        })
    })?;
    let reply_to_id = match body.reply_to_message_id {
        Some(m) => Some(
            message::Entity::find_by_id(m)
                .unique(&*txn)
                .await?
                .filter(|m| m.conversation_id == Some(id) && m.platform_message_id.is_some())
                .ok_or_else(|| {
                    ApiError::invalid(
                        "replyToMessageId must be a delivered message of this conversation",
                    )
                })?
                .id,
        ),
        None => None,
    };
    let p = prepare(&*txn, org, &body, &k, channel).await?;
    if let Some(t) = &p.template
        && t.category == TemplateCategory::Marketing
        && k.opted_out
    {
        return Err(ApiError::bad_request(
            "The contact opted out of marketing messages.",
        ));
    }
    // Known only by their business-scoped user id: the platform would refuse some
    // templates to them (131062), so they are refused here, before any charge.
    if let (Address::UserId(_), Some(t)) = (&to, &p.template)
        && let Some(why) = wm_core::whatsapp::refuses_user_id(t.category)
    {
        return Err(ApiError::bad_request(why));
    }
    let o = organization::Entity::find_by_id(org)
        .unique(&*txn)
        .await?
        .ok_or_else(|| ApiError::not_found("Organization"))?;
    let cost = price(&o, p.template.as_ref(), &to, open)?;
    let id_of_message = Uuid::now_v7();
    if cost.0 > 0 {
        let what = format!(
            "Reply {id_of_message}: template {}",
            p.template.as_ref().map_or("", |t| t.name.as_str())
        );
        if !crate::services::wallet::charge(&*txn, org, cost, None, &what, now).await? {
            return Err(ApiError::bad_request("Saldo insuficiente en la wallet."));
        }
    }
    let row = messages::insert_with_id(
        &*txn,
        id_of_message,
        NewMessage {
            organization_id: org,
            conversation_id: Some(id),
            contact_id: c.contact_id,
            direction: MessageDirection::Outbound,
            message_type: p.message_type,
            body: p.body,
            stored: p.stored,
            media_id: p.media_id,
            reply_to_id,
            platform_message_id: None,
            status: MessageStatus::Pending,
            cost_micros: Some(cost.0),
            sent_by: Some((SenderKind::User, auth.user_id)),
            recipient_id: None,
            phone_number_id: match &from {
                crate::services::outbound::sender::Answering::Number(n) => Some(n.id),
                crate::services::outbound::sender::Answering::Channel(_) => None,
            },
            created_at: now,
        },
    )
    .await?;
    let message = crate::views::messages::load(&*txn, vec![row])
        .await?
        .pop()
        .ok_or_else(|| ApiError::not_found("Message"))?;
    // A retry with the request's key finds this answer even if the process stops before
    // it leaves: it commits with the reply.
    crate::idempotency::seal(&txn, axum::http::StatusCode::CREATED, &message).await?;
    txn.commit().await?;
    state.db.ring(c.contact_id).await;
    state.reply_wake.notify_one();
    Ok(message)
}
