//! The Send API: `POST /{version}/{page_id|me}/messages` with a Page token.
//!
//! Checks, in this order: token (190; expired: 190/463), object (`me` or the token's
//! Page, else 100/33), recipient (a PSID of the Page → Messenger; an IGSID of the Page's
//! Instagram account → Instagram; an IG account id or another account's IGSID →
//! 100/2534014, or 100/2534013 when the Page has no Instagram account; anything else
//! 100/2018001, or "must be a valid ID string" when not numeric), rate limit (613/2534040
//! per Page or IG account; forced with `throttle_messenger_next`), then either a
//! `sender_action` or `messaging_type`/`tag` and `message` ([`super::validate`]), and
//! last the window (10/2534022): 24 hours after the person's last message, 7 days for
//! `MESSAGE_TAG` + `HUMAN_AGENT`. Sender actions are held to the 24-hour window too
//! (assumed). Rate limits count accepted calls in a sliding second.
//!
//! Answer: `{"recipient_id","message_id"}` (plus `attachment_id` for an
//! `is_reusable` attachment), `{"recipient_id"}` for a sender action. Ids: Messenger
//! mids look like Meta's `m_…` examples; Instagram mids are URL-safe base64 text (their
//! exact make-up is not documented). Attachment URLs in sends are not fetched.

use std::time::{Duration, Instant};

use axum::Json;
use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::Utc;
use rand::Rng;
use serde_json::{Value, json};

use super::attachments::{check_file, store_attachment};
use super::body::{self, Params, mime_from_name};
use super::errors::{self, param};
use super::model::{MessengerSend, MessengerSenderAction, PageSpec, Platform};
use super::store::{Attachment, MEDIA_CALLS_PER_SEC, Store, TEXT_CALLS_PER_SEC};
use super::validate::{self, Bucket, Checked, Source};
use super::{auth, cdn};
use crate::FakeGraph;
use crate::errors::GraphError;

/// A new message id for `platform`.
pub(crate) fn new_mid(platform: Platform, account_id: &str) -> String {
    let mut rng = rand::rng();
    match platform {
        Platform::Messenger => format!("m_{}", URL_SAFE_NO_PAD.encode(rng.random::<[u8; 28]>())),
        Platform::Instagram => {
            let item = format!(
                "ig_message_item:1:IGMessageThread:{account_id}:{}",
                rng.random_range(100_000_000_000_000_000u64..999_999_999_999_999_999)
            );
            URL_SAFE_NO_PAD.encode(item)
        }
    }
}

/// An echo to post after an accepted send.
#[derive(Debug, Clone)]
pub(crate) struct Echo {
    pub platform: Platform,
    pub account_id: String,
    pub recipient: String,
    pub message: Value,
}

/// What an accepted call produced.
pub(crate) enum Outcome {
    Message {
        send: Box<MessengerSend>,
        attachment_id: Option<String>,
        echo: Option<Echo>,
    },
    Action {
        recipient: String,
    },
}

fn recipient_id(params: &Params) -> Result<String, GraphError> {
    let Some(r) = params.fields.get("recipient") else {
        return Err(param("The parameter recipient is required"));
    };
    match r.get("id") {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Number(n)) => Ok(n.to_string()),
        // user_ref, phone_number, post_id, comment_id: nobody the fake knows.
        _ if r.is_object() && !r.as_object().is_some_and(|o| o.is_empty()) => {
            Err(errors::no_matching_user())
        }
        _ => Err(param("The parameter recipient[id] is required")),
    }
}

/// `(platform, account id, recipient)`.
fn resolve_recipient(
    store: &Store,
    page: &PageSpec,
    params: &Params,
) -> Result<(Platform, String, String), GraphError> {
    let id = recipient_id(params)?;
    if store.person(&page.page_id, &id).is_some() {
        return Ok((Platform::Messenger, page.page_id.clone(), id));
    }
    if let Some(ig) = &page.instagram_id
        && store.person(ig, &id).is_some()
    {
        return Ok((Platform::Instagram, ig.clone(), id));
    }
    if store.is_foreign_instagram_id(&id, page.instagram_id.as_deref()) {
        return Err(match page.instagram_id {
            None => errors::page_not_linked(),
            Some(_) => errors::no_matching_instagram_user(),
        });
    }
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_digit()) {
        return Err(param(
            r#"Param recipient[id] must be a valid ID string (e.g., "123")"#,
        ));
    }
    Err(errors::no_matching_user())
}

/// Refuses the call when the account is throttled or its bucket is full.
fn rate_check(store: &mut Store, account_id: &str, bucket: Bucket) -> Result<(), GraphError> {
    let limits = store.limits.entry(account_id.to_owned()).or_default();
    if limits.forced > 0 {
        limits.forced -= 1;
        return Err(errors::rate_limited());
    }
    let now = Instant::now();
    let (queue, cap) = match bucket {
        Bucket::Text => (&mut limits.text, TEXT_CALLS_PER_SEC),
        Bucket::Media => (&mut limits.media, MEDIA_CALLS_PER_SEC),
    };
    while queue
        .front()
        .is_some_and(|t| now.duration_since(*t) >= Duration::from_secs(1))
    {
        queue.pop_front();
    }
    if queue.len() >= cap {
        return Err(errors::rate_limited());
    }
    Ok(())
}

fn count_call(store: &mut Store, account_id: &str, bucket: Bucket) {
    let limits = store.limits.entry(account_id.to_owned()).or_default();
    match bucket {
        Bucket::Text => limits.text.push_back(Instant::now()),
        Bucket::Media => limits.media.push_back(Instant::now()),
    }
}

impl FakeGraph {
    /// Decides one Send API call (synchronously, under the Messenger lock).
    pub(crate) fn decide_messenger_send(
        &self,
        id: &str,
        token: Option<&str>,
        params: &Params,
    ) -> Result<Outcome, GraphError> {
        let base = self.url();
        let mut store = self.msgr();
        let page = auth::page_for_path(&store, token, id, "post")?;
        if params.too_large {
            return Err(errors::attachment_too_large());
        }
        let (platform, account_id, recipient) = resolve_recipient(&store, &page, params)?;
        let bucket = validate::bucket_of(params);
        rate_check(&mut store, &account_id, bucket)?;
        if let Some((action, payload)) = validate::check_action(params)? {
            if !store.window_allows(&account_id, &recipient, false) {
                return Err(errors::outside_window());
            }
            count_call(&mut store, &account_id, bucket);
            store.sender_actions.push(MessengerSenderAction {
                account_id,
                page_id: page.page_id.clone(),
                recipient: recipient.clone(),
                action,
                payload,
                at: Utc::now(),
            });
            return Ok(Outcome::Action { recipient });
        }
        let typ = validate::check_type(params, page.human_agent)?;
        let checked = validate::check_message(params, &store, &page.page_id, platform, typ)?;
        let file = file_of(params, &checked)?;
        if let Some((kind, mime, bytes)) = &file {
            check_file(kind, mime, bytes.len(), platform)?;
        }
        if !store.window_allows(&account_id, &recipient, checked.human_agent) {
            return Err(errors::outside_window());
        }
        count_call(&mut store, &account_id, bucket);
        let mid = new_mid(platform, &account_id);
        let attachment_id = keep_attachment(&mut store, &page, platform, &checked, file.clone());
        let echo = store.echoes.contains(&account_id).then(|| {
            let attachments = echo_attachments(&mut store, &base, platform, &checked, file);
            let text = checked.message.get("text").and_then(Value::as_str);
            Echo {
                platform,
                account_id: account_id.clone(),
                recipient: recipient.clone(),
                message: super::webhooks::echo_message(
                    platform,
                    &mid,
                    store.app_id,
                    text,
                    checked.metadata.as_deref(),
                    &attachments,
                ),
            }
        });
        let send = MessengerSend {
            account_id,
            page_id: page.page_id.clone(),
            platform,
            recipient,
            messaging_type: checked.messaging_type,
            tag: checked.tag,
            message: checked.message,
            reply_to: checked.reply_to,
            message_id: mid,
            at: Utc::now(),
            via_inbox: false,
        };
        store.sends.push(send.clone());
        Ok(Outcome::Message {
            send: Box::new(send),
            attachment_id,
            echo,
        })
    }
}

/// The `filedata` part of a send whose attachment has no URL or id: `(type, mime, bytes)`.
fn file_of(
    params: &Params,
    checked: &Checked,
) -> Result<Option<(String, String, Vec<u8>)>, GraphError> {
    let Some((kind, _)) = checked
        .attachments
        .iter()
        .find(|(_, s)| matches!(s, Source::File))
    else {
        return Ok(None);
    };
    let Some(file) = &params.file else {
        return Err(param("The parameter filedata is required"));
    };
    let mime = file
        .mime
        .clone()
        .or_else(|| {
            file.filename
                .as_deref()
                .and_then(mime_from_name)
                .map(str::to_owned)
        })
        .unwrap_or_else(|| "application/octet-stream".to_owned());
    Ok(Some((kind.clone(), mime, file.bytes.clone())))
}

/// Stores the attachment of an `is_reusable` send; its id for the answer.
fn keep_attachment(
    store: &mut Store,
    page: &PageSpec,
    platform: Platform,
    checked: &Checked,
    file: Option<(String, String, Vec<u8>)>,
) -> Option<String> {
    if !checked.reusable {
        return None;
    }
    let (kind, source) = checked.attachments.first()?;
    let attachment = match (source, file) {
        (Source::File, Some((_, mime, bytes))) => Attachment {
            page_id: page.page_id.clone(),
            platform,
            kind: kind.clone(),
            mime,
            bytes,
            url: None,
        },
        (Source::Url(url), _) => Attachment {
            page_id: page.page_id.clone(),
            platform,
            kind: kind.clone(),
            mime: mime_from_name(url.split('?').next().unwrap_or_default())
                .unwrap_or("application/octet-stream")
                .to_owned(),
            bytes: Vec::new(),
            url: Some(url.clone()),
        },
        _ => return None,
    };
    Some(store_attachment(store, attachment))
}

/// The `(type, payload)` of each attachment as the echo shows it: a URL the fake serves
/// for stored bytes, else the URL sent.
fn echo_attachments(
    store: &mut Store,
    base: &str,
    platform: Platform,
    checked: &Checked,
    file: Option<(String, String, Vec<u8>)>,
) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for (kind, source) in &checked.attachments {
        let payload = match source {
            Source::Url(u) => json!({ "url": u }),
            Source::Payload(p) => p.clone(),
            Source::File => match &file {
                Some((_, mime, bytes)) => {
                    json!({ "url": cdn::publish(store, base, platform, mime, bytes.clone()) })
                }
                None => json!({}),
            },
            Source::Stored(id) => match store.attachments.get(id).cloned() {
                Some(a) if !a.bytes.is_empty() => {
                    json!({ "url": cdn::publish(store, base, platform, &a.mime, a.bytes) })
                }
                Some(a) => json!({ "url": a.url }),
                None => json!({}),
            },
        };
        out.push((kind.clone(), payload));
    }
    out
}

/// The Messenger side of `POST /{version}/{id}/messages`.
pub(crate) async fn handle(fake: FakeGraph, id: String, req: Request) -> Response {
    let headers = req.headers().clone();
    let query = req.uri().query().map(str::to_owned);
    let params = match body::read(req).await {
        Ok(p) => p,
        Err(e) => {
            // Graph looks at the token before the body.
            let token = body::token(&headers, query.as_deref(), &Params::default());
            if let Err(auth) = auth::page_for_path(&fake.msgr(), token.as_deref(), &id, "post") {
                return auth.into_response();
            }
            return e.into_response();
        }
    };
    let token = body::token(&headers, query.as_deref(), &params);
    match fake.decide_messenger_send(&id, token.as_deref(), &params) {
        Err(e) => e.into_response(),
        Ok(Outcome::Action { recipient }) => {
            Json(json!({ "recipient_id": recipient })).into_response()
        }
        Ok(Outcome::Message {
            send,
            attachment_id,
            echo,
        }) => {
            let mut answer = json!({
                "recipient_id": send.recipient,
                "message_id": send.message_id,
            });
            if let Some(a) = attachment_id {
                answer["attachment_id"] = json!(a);
            }
            if let Some(echo) = echo {
                let fake = fake.clone();
                tokio::spawn(async move {
                    if let Err(e) = fake.post_echo(echo).await {
                        tracing::debug!(error = %e, "echo not posted");
                    }
                });
            }
            if fake.msgr().hang_next.remove(&send.recipient) {
                fake.shared.shutting_down().await;
            }
            Json(answer).into_response()
        }
    }
}
