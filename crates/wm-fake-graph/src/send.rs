//! `POST /{version}/{phone_number_id}/messages`.
//!
//! The checks run in the platform's order: token (190), object (100/33),
//! throttling (130429/4/80007), body shape (100/131008/131009/131051),
//! recipient (an unknown BSUID: 100), template (132001/132015/132016, 131062 for an
//! authentication template sent to a BSUID, 132000), media (131053), then injected
//! recipient errors; a free-form send outside the customer-service window is accepted
//! and fails later with 131047 ([`crate::window`]). Bodies with `status` are
//! mark-as-read requests ([`crate::read`]).
//! All of it is decided in one short critical section; the awaits (webhooks,
//! delays, hangs) happen after the lock is released.
//!
//! The addressee is `to` (a phone) or, without `to`, `recipient` (a BSUID or parent
//! BSUID); per-recipient state (window, injections, ambiguous outcomes) is looked up by
//! the user either names ([`crate::users`]). The answer's `contacts[]` is
//! `{input, wa_id}` for a send to a phone (also when `recipient` was given too) and
//! `{input, user_id}` for a send to a BSUID, as the business-scoped user ids guide shows.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::{ConnectInfo, Path, RawQuery, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use chrono::Utc;
use rand::Rng;
use serde_json::{Value, json};

use crate::FakeGraph;
use crate::errors::{Delivery, GraphError, code_info};
use crate::freeform::check_media;
use crate::media::MediaInfo;
use crate::model::{
    AcceptedMessage, AmbiguityKind, Attempt, AttemptOutcome, NumberSpec, TemplateStatus,
};
use crate::server::ConnHandle;
use crate::state::Inner;
use crate::users::Snapshot;
use crate::validate::{parse_send, str_field, unknown_user_id};

/// `error_data.details` of 131062 for an authentication template sent to a BSUID. Meta
/// documents the code and its message for this case ("one-tap, zero-tap, and copy code
/// authentication templates … require user phone numbers") but not this text; it is
/// modelled on the documented `bid_spec` details.
const AUTH_TEMPLATE_131062: &str = "The template specified in the request is an authentication template (one-tap, zero-tap or copy code), which is not supported for Business-scoped user ID (BSUID) recipients. To send this template, please provide the phone number of recipients.";

pub(crate) enum AuthCheck {
    Ok,
    Fail(GraphError),
}

/// The bearer token from `Authorization`, else the `access_token` parameter.
pub(crate) fn request_token(headers: &HeaderMap, query_token: Option<&str>) -> Option<String> {
    let header = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    if let Some(h) = header {
        let h = h.trim();
        let token = h
            .strip_prefix("Bearer ")
            .or_else(|| h.strip_prefix("bearer "))
            .unwrap_or(h);
        return Some(token.trim().to_owned());
    }
    query_token.map(str::to_owned)
}

/// Graph validates the token before it looks at the object.
pub(crate) fn check_token(inner: &Inner, token: Option<&str>) -> AuthCheck {
    match token.map(|t| (t, inner.tokens.get(t))) {
        None | Some(("", _)) => AuthCheck::Fail(GraphError::oauth(
            "An active access token must be used to query information about the current user.",
        )),
        Some((_, None)) => AuthCheck::Fail(GraphError::oauth(
            "Invalid OAuth access token - Cannot parse access token",
        )),
        Some((_, Some(true))) => AuthCheck::Fail(GraphError::oauth(
            "Error validating access token: Session has expired. The access token has expired.",
        )),
        Some((_, Some(false))) => AuthCheck::Ok,
    }
}

fn new_wamid(wa_id: &str, seq: u64) -> String {
    let mut bytes = Vec::with_capacity(wa_id.len() + 16);
    bytes.extend_from_slice(wa_id.as_bytes());
    bytes.extend_from_slice(&seq.to_be_bytes());
    bytes.extend_from_slice(&rand::rng().random::<[u8; 8]>());
    format!("wamid.{}", STANDARD.encode(bytes))
}

/// An accepted send, with what the response and webhooks need.
#[derive(Debug)]
pub(crate) struct Accepted {
    pub msg: AcceptedMessage,
    pub number: NumberSpec,
    pub category: String,
    /// The recipient as the platform knows them at acceptance.
    pub user: Snapshot,
    pub async_error: Option<(i64, Option<String>)>,
    pub ambiguity: Option<AmbiguityKind>,
}

pub(crate) enum Decision {
    Refuse(GraphError),
    Accept(Box<Accepted>),
}

impl FakeGraph {
    /// Decides the fate of one send (synchronously, under the lock).
    pub(crate) fn decide_send(
        &self,
        phone_number_id: &str,
        token: Option<&str>,
        body: Option<&Value>,
    ) -> Decision {
        let shared = &self.shared;
        shared.counters.attempts.fetch_add(1, Ordering::Relaxed);
        let to_hint = body.and_then(|b| str_field(b, "to")).map(str::to_owned);
        let recipient_hint = body
            .and_then(|b| str_field(b, "recipient"))
            .map(str::to_owned);
        // The media store has its own lock, never taken under the registry's.
        let held = body
            .and_then(crate::freeform::media_id_of)
            .and_then(|id| self.media_info(id));
        let tpl_hint = body
            .and_then(|b| b.get("template"))
            .and_then(|t| str_field(t, "name"))
            .map(str::to_owned);
        let mut inner = shared.lock();
        let seq = inner.attempts.len() as u64 + 1;
        let result = decide_locked(
            &mut inner,
            phone_number_id,
            token,
            body,
            held.as_ref(),
            shared.started,
        );
        let at = Utc::now();
        let outcome = match &result {
            Ok(acc) => AttemptOutcome::Accepted {
                wamid: acc.msg.wamid.clone(),
            },
            Err(e) => AttemptOutcome::Refused {
                code: e.code,
                http_status: e.http_status,
            },
        };
        let attempt = Attempt {
            seq,
            phone_number_id: phone_number_id.to_owned(),
            to: to_hint,
            recipient: recipient_hint,
            template_name: tpl_hint,
            at,
            outcome,
        };
        inner.attempts.push(attempt);
        match result {
            Ok(acc) => {
                shared.counters.accepted.fetch_add(1, Ordering::Relaxed);
                Decision::Accept(Box::new(acc))
            }
            Err(e) => {
                shared.counters.refused.fetch_add(1, Ordering::Relaxed);
                Decision::Refuse(e)
            }
        }
    }
}

fn take_matching<T: Clone>(
    map: &mut std::collections::HashMap<String, std::collections::VecDeque<T>>,
    user_key: &str,
    matches: impl Fn(&T) -> bool,
    consume: impl Fn(&mut T) -> bool,
) -> Option<T> {
    for key in [user_key, "*"] {
        let Some(queue) = map.get_mut(key) else {
            continue;
        };
        if let Some(i) = queue.iter().position(&matches) {
            let item = queue[i].clone();
            if consume(&mut queue[i]) {
                queue.remove(i);
            }
            return Some(item);
        }
    }
    None
}

fn decide_locked(
    inner: &mut Inner,
    phone_number_id: &str,
    token: Option<&str>,
    body: Option<&Value>,
    held: Option<&MediaInfo>,
    started: Instant,
) -> Result<Accepted, GraphError> {
    if let AuthCheck::Fail(e) = check_token(inner, token) {
        return Err(e);
    }
    let Some(number) = inner.numbers.get_mut(phone_number_id) else {
        return Err(GraphError::unknown_object("post", phone_number_id));
    };
    let waba_id = number.spec.waba_id.clone();
    let token_ok = token.is_some_and(|t| {
        t == number.spec.access_token
            || inner
                .wabas
                .get(&waba_id)
                .is_some_and(|w| w.tokens.contains(t))
    });
    if !token_ok {
        return Err(GraphError::oauth(
            "Invalid OAuth access token - Cannot parse access token",
        ));
    }
    if let Some((left, code)) = number.burst.as_mut() {
        let code = *code;
        *left -= 1;
        if *left == 0 {
            number.burst = None;
        }
        return Err(GraphError::whatsapp(code, None, None));
    }
    if let Some(cap) = number.mps_cap {
        let now = Instant::now();
        while number
            .recent
            .front()
            .is_some_and(|t| now.duration_since(*t) >= Duration::from_secs(1))
        {
            number.recent.pop_front();
        }
        if number.recent.len() >= cap as usize {
            return Err(GraphError::whatsapp(130429, None, None));
        }
    }
    let Some(body) = body else {
        return Err(GraphError::invalid_parameter(
            "(#100) The request body is not valid JSON.",
        ));
    };
    let parsed = parse_send(body)?;
    let number_spec = number.spec.clone();
    let user = if parsed.by_user_id {
        crate::users::find(inner, &parsed.to).ok_or_else(|| unknown_user_id(&parsed.to))?
    } else {
        crate::users::resolve(inner, &parsed.to).ok_or_else(|| {
            GraphError::whatsapp(
                131_009,
                Some("Parameter to is not a valid phone number."),
                None,
            )
        })?
    };
    let user_key = crate::users::key_of(user);
    let mut category = "service".to_owned();
    if let Some((name, lang, params)) = &parsed.template {
        let tpl = inner.wabas.get(&waba_id).and_then(|w| {
            w.templates
                .iter()
                .find(|t| &t.spec.name == name && &t.spec.language == lang)
        });
        let Some(tpl) = tpl else {
            let details = format!("template name ({name}) does not exist in {lang}");
            return Err(GraphError::whatsapp(132001, Some(&details), None));
        };
        match tpl.spec.status {
            TemplateStatus::Approved => {}
            TemplateStatus::Paused => return Err(GraphError::whatsapp(132015, None, None)),
            TemplateStatus::Disabled => return Err(GraphError::whatsapp(132016, None, None)),
            _ => {
                let details = format!(
                    "template name ({name}) in {lang} is not approved (status {})",
                    tpl.spec.status.as_str()
                );
                return Err(GraphError::whatsapp(132001, Some(&details), None));
            }
        }
        if parsed.by_user_id && tpl.spec.category.eq_ignore_ascii_case("AUTHENTICATION") {
            return Err(GraphError::whatsapp(
                131_062,
                Some(AUTH_TEMPLATE_131062),
                None,
            ));
        }
        if params.len() != tpl.param_count {
            let details = format!(
                "body: number of localizable_params ({}) does not match the expected number of params ({})",
                params.len(),
                tpl.param_count
            );
            return Err(GraphError::whatsapp(132000, Some(&details), None));
        }
        category = tpl.spec.category.to_ascii_lowercase();
    }
    if let Some(media) = &parsed.media {
        check_media(media, held, phone_number_id)?;
    }
    let injection = take_matching(
        &mut inner.injections,
        &user_key,
        |i| {
            i.phone_number_id
                .as_deref()
                .is_none_or(|p| p == phone_number_id)
        },
        |i| match i.times.as_mut() {
            Some(n) => {
                *n = n.saturating_sub(1);
                *n == 0
            }
            None => false,
        },
    );
    let mut async_error = None;
    if let Some(inj) = injection {
        let mode = inj.mode.unwrap_or(code_info(inj.code).default_delivery);
        match mode {
            Delivery::Sync => {
                return Err(GraphError::whatsapp(
                    inj.code,
                    inj.details.as_deref(),
                    inj.http_status,
                ));
            }
            Delivery::Async => async_error = Some((inj.code, inj.details)),
        }
    }
    // The business messaged the user's phone: from now on webhooks may carry it (Meta's
    // 30-day and contact-book conditions; see `crate::users`).
    if !parsed.by_user_id
        && let Some(u) = inner.users.get_mut(user)
    {
        u.spec.phone_shared = true;
    }
    let Some(snapshot) = inner.users.snapshot(user) else {
        return Err(unknown_user_id(&parsed.to));
    };
    let wa = if parsed.by_user_id {
        inner
            .users
            .get(user)
            .and_then(|u| u.spec.phone.clone())
            .unwrap_or_default()
    } else {
        let digits = crate::validate::wa_id(&parsed.to);
        inner.wa_ids.get(&digits).cloned().unwrap_or(digits)
    };
    // Outside the customer-service window a free-form send is accepted, then fails
    // with 131047 in a status webhook (see `crate::window`).
    if parsed.template.is_none()
        && async_error.is_none()
        && !crate::window::is_open(inner, phone_number_id, &user_key)
    {
        async_error = Some((131_047, None));
    }
    if let Some(n) = inner.numbers.get_mut(phone_number_id)
        && n.mps_cap.is_some()
    {
        n.recent.push_back(Instant::now());
    }
    let ambiguity = take_matching(
        &mut inner.ambiguities,
        &user_key,
        |_| true,
        |a| {
            a.times = a.times.saturating_sub(1);
            a.times == 0
        },
    )
    .map(|a| a.kind);
    let seq = inner.accepted.len() as u64 + 1;
    let (template_name, language, body_params) = match parsed.template {
        Some((n, l, p)) => (Some(n), Some(l), p),
        None => (None, None, Vec::new()),
    };
    let msg = AcceptedMessage {
        seq,
        wamid: new_wamid(
            if wa.is_empty() {
                &snapshot.user_id
            } else {
                &wa
            },
            seq,
        ),
        phone_number_id: phone_number_id.to_owned(),
        waba_id,
        to: parsed.to.clone(),
        wa_id: wa,
        user_id: snapshot.user_id.clone(),
        by_user_id: parsed.by_user_id,
        message_type: parsed.kind,
        template_name,
        language,
        body_params,
        text_body: parsed.text_body,
        biz_opaque_callback_data: parsed.opaque,
        at: Utc::now(),
        elapsed_ms: started.elapsed().as_secs_f64() * 1000.0,
        async_error: async_error.as_ref().map(|(c, _)| *c),
        context_message_id: parsed.context,
        body: body.clone(),
    };
    inner.accepted.push(msg.clone());
    *inner.accepted_by_to.entry(parsed.to).or_insert(0) += 1;
    Ok(Accepted {
        msg,
        number: number_spec,
        category,
        user: snapshot,
        async_error,
        ambiguity,
    })
}

/// The documented success body: `contacts[]` carries `wa_id` for a send to a phone and
/// `user_id` (never both) for a send to a BSUID or parent BSUID.
fn success_body(acc: &Accepted) -> Value {
    let mut message = json!({ "id": acc.msg.wamid });
    if acc.msg.message_type == "template" {
        message["message_status"] = json!("accepted");
    }
    let contact = if acc.msg.by_user_id {
        json!({ "input": acc.msg.to, "user_id": acc.msg.user_id })
    } else {
        json!({ "input": acc.msg.to, "wa_id": acc.msg.wa_id })
    };
    json!({
        "messaging_product": "whatsapp",
        "contacts": [contact],
        "messages": [message],
    })
}

/// The send handler.
pub(crate) async fn send_message(
    State(fake): State<FakeGraph>,
    ConnectInfo(conn): ConnectInfo<ConnHandle>,
    Path((_version, phone_number_id)): Path<(String, String)>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
    body: Bytes,
) -> Response {
    let query_token = query.as_deref().and_then(|q| {
        form_urlencoded::parse(q.as_bytes())
            .find(|(k, _)| k == "access_token")
            .map(|(_, v)| v.into_owned())
    });
    let token = request_token(&headers, query_token.as_deref());
    let body: Option<Value> = serde_json::from_slice(&body).ok();
    if body.as_ref().is_some_and(crate::read::is_read_request) {
        return fake
            .mark_read(&phone_number_id, token.as_deref(), body.as_ref())
            .into_response();
    }
    let acc = match fake.decide_send(&phone_number_id, token.as_deref(), body.as_ref()) {
        Decision::Refuse(e) => return e.into_response(),
        Decision::Accept(acc) => acc,
    };
    let response = axum::Json(success_body(&acc)).into_response();
    crate::webhooks::after_accept(&fake, &acc).await;
    match acc.ambiguity {
        None => response,
        Some(AmbiguityKind::DropConnection) => {
            conn.kill();
            response
        }
        Some(AmbiguityKind::Delay { secs }) => {
            let delay = Duration::from_secs_f64(secs.max(0.0));
            tokio::select! {
                () = tokio::time::sleep(delay) => response,
                () = fake.shared.shutting_down() => { conn.kill(); response }
            }
        }
        Some(AmbiguityKind::Hang) => {
            fake.shared.shutting_down().await;
            conn.kill();
            response
        }
    }
}
