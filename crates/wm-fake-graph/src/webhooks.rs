//! Signed webhook delivery (with the platform's retry-on-non-2xx behaviour) and
//! the status webhooks that follow an accepted send.
//!
//! Deliveries run in background tasks so a send's response never waits for the
//! app, except when `before_response` deliberately races the response.
//!
//! User identifiers in statuses follow the business-scoped user ids guide
//! (<https://developers.facebook.com/documentation/business-messaging/whatsapp/business-scoped-user-ids/>):
//! `recipient_user_id` (the BSUID) always, except on `failed` for a message sent to a
//! phone; `recipient_id` when the message was sent to a phone (that phone), or sent to a
//! BSUID and the phone may be shared; `recipient_parent_user_id` when the user has a
//! parent BSUID (with `recipient_user_id`); and a `contacts[]` beside `statuses[]`
//! (`{profile:{name, username?}, wa_id?, user_id, parent_user_id?}`, `username` omitted on
//! `sent`) on `sent`, `delivered` and `read`, never on `failed`.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::atomic::Ordering;
use std::time::Duration;

use hmac::{Hmac, KeyInit, Mac};
use rand::seq::SliceRandom;
use serde_json::{Map, Value, json};
use sha2::Sha256;

use crate::FakeGraph;
use crate::errors::GraphError;
use crate::model::{NumberSpec, Posted, StatusOptions, WebhookConfig};
use crate::send::Accepted;
use crate::users::Snapshot;

/// The `X-Hub-Signature-256` header value for `body`:
/// `sha256=` + hex HMAC-SHA256 of the exact raw bytes, keyed with the app secret.
pub fn sign(app_secret: &str, body: &[u8]) -> String {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(app_secret.as_bytes())
        .unwrap_or_else(|_| unreachable!("HMAC takes any key length"));
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

/// Checks a `X-Hub-Signature-256` header value against `body` (constant-time
/// in the MAC comparison). Handy for the small receivers tests run.
pub fn verify(app_secret: &str, body: &[u8], header: &str) -> bool {
    let Some(hex_sig) = header.strip_prefix("sha256=") else {
        return false;
    };
    let Ok(sig) = hex::decode(hex_sig) else {
        return false;
    };
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(app_secret.as_bytes())
        .unwrap_or_else(|_| unreachable!("HMAC takes any key length"));
    mac.update(body);
    mac.verify_slice(&sig).is_ok()
}

/// `{"object":"whatsapp_business_account","entry":[{"id":WABA,"changes":[{"value":{messaging_product, metadata, ...fields},"field":"messages"}]}]}`
pub(crate) fn messages_envelope(number: &NumberSpec, fields: Map<String, Value>) -> Value {
    number_envelope(number, "messages", fields)
}

/// [`messages_envelope`] for another field of a business number (`user_preferences`).
pub(crate) fn number_envelope(
    number: &NumberSpec,
    field: &str,
    fields: Map<String, Value>,
) -> Value {
    let mut value = Map::new();
    value.insert("messaging_product".into(), json!("whatsapp"));
    value.insert(
        "metadata".into(),
        json!({
            "display_phone_number": number.display_phone_number,
            "phone_number_id": number.phone_number_id,
        }),
    );
    value.extend(fields);
    json!({
        "object": "whatsapp_business_account",
        "entry": [{
            "id": number.waba_id,
            "changes": [{ "value": Value::Object(value), "field": field }],
        }],
    })
}

/// A management-field envelope (`entry[].id` = WABA, `entry[].time` = unix seconds).
pub(crate) fn waba_envelope(waba_id: &str, field: &str, value: Value) -> Value {
    json!({
        "entry": [{
            "id": waba_id,
            "time": chrono::Utc::now().timestamp(),
            "changes": [{ "value": value, "field": field }],
        }],
        "object": "whatsapp_business_account",
    })
}

struct InFlight<'a>(&'a FakeGraph);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0
            .shared
            .counters
            .in_flight
            .fetch_sub(1, Ordering::SeqCst);
    }
}

/// Posts `body` to the configured webhook URL, retrying non-2xx answers and
/// transport errors per the retry policy; records the result in the log.
pub(crate) async fn deliver(
    fake: &FakeGraph,
    config: &WebhookConfig,
    field: &str,
    wamid: Option<String>,
    body: Vec<u8>,
    signature: Option<String>,
) -> Posted {
    let shared = &fake.shared;
    shared.counters.webhooks.fetch_add(1, Ordering::Relaxed);
    shared.counters.in_flight.fetch_add(1, Ordering::SeqCst);
    let _guard = InFlight(fake);
    let _permit = shared.deliveries.acquire().await.ok();
    let (mut attempts, mut last_status, mut acked) = (0u32, None, false);
    let mut backoff = Duration::from_millis(config.retry.initial_backoff_ms);
    let timeout = Duration::from_millis(config.retry.timeout_ms.max(1));
    while attempts < config.retry.max_attempts.max(1) {
        if attempts > 0 {
            tokio::time::sleep(backoff).await;
            backoff = backoff.saturating_mul(2);
        }
        attempts += 1;
        shared
            .counters
            .webhook_posts
            .fetch_add(1, Ordering::Relaxed);
        let mut req = shared
            .http
            .post(&config.url)
            .timeout(timeout)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.clone());
        if let Some(sig) = &signature {
            req = req.header("X-Hub-Signature-256", sig);
        }
        match req.send().await {
            Ok(resp) => {
                let status = resp.status();
                last_status = Some(status.as_u16());
                // Drain the body so the pooled connection can be reused.
                let _ = resp.bytes().await;
                if status.is_success() {
                    acked = true;
                    break;
                }
            }
            Err(e) => tracing::debug!(error = %e, url = %config.url, "webhook delivery failed"),
        }
    }
    if acked {
        shared
            .counters
            .webhook_acked
            .fetch_add(1, Ordering::Relaxed);
    } else {
        shared
            .counters
            .webhook_failed
            .fetch_add(1, Ordering::Relaxed);
    }
    let posted = Posted {
        field: field.to_owned(),
        body: String::from_utf8_lossy(&body).into_owned(),
        signature,
        wamid,
        attempts,
        last_status,
        acked,
    };
    let mut inner = shared.lock();
    if inner.webhook_log.len() >= shared.webhook_log_cap.max(1) {
        inner.webhook_log.pop_front();
    }
    inner.webhook_log.push_back(posted.clone());
    posted
}

/// Signs `value` with the configured secret and delivers it; `Err` when no
/// webhook is configured.
pub(crate) async fn deliver_value(
    fake: &FakeGraph,
    field: &str,
    wamid: Option<String>,
    value: &Value,
) -> anyhow::Result<Posted> {
    let Some(config) = fake.webhook_config() else {
        anyhow::bail!("no webhook is configured on the fake");
    };
    let body = serde_json::to_vec(value)?;
    let signature = Some(sign(&config.app_secret, &body));
    fake.shared
        .counters
        .webhooks
        .fetch_add(1, Ordering::Relaxed);
    Ok(deliver(fake, &config, field, wamid, body, signature).await)
}

fn conversation_id(acc: &Accepted) -> String {
    let mut parts = [0u64; 2];
    for (i, part) in parts.iter_mut().enumerate() {
        let mut h = DefaultHasher::new();
        (i, &acc.msg.phone_number_id, &acc.msg.wa_id, &acc.category).hash(&mut h);
        *part = h.finish();
    }
    format!("{:016x}{:016x}", parts[0], parts[1])
}

/// One status and the `contacts[]` entry it brings (none on `failed`).
#[derive(Debug, Clone)]
pub(crate) struct StatusItem {
    status: Value,
    contact: Option<Value>,
}

/// A status of an accepted message with its contact.
fn status_item(acc: &Accepted, status: &str, ts: i64, opts: &StatusOptions) -> StatusItem {
    let contact = (status != "failed").then(|| acc.user.contact(status != "sent"));
    StatusItem {
        status: status_value(acc, status, ts, opts),
        contact,
    }
}

/// One entry of `statuses[]`, per the status messages webhook reference.
fn status_value(acc: &Accepted, status: &str, ts: i64, opts: &StatusOptions) -> Value {
    let mut v = json!({
        "id": acc.msg.wamid,
        "status": status,
        "timestamp": ts.to_string(),
    });
    let to_phone = !acc.msg.by_user_id;
    let recipient_id = if to_phone {
        Some(acc.msg.wa_id.clone())
    } else {
        acc.user.shared_phone.clone()
    };
    if let Some(r) = recipient_id {
        v["recipient_id"] = json!(r);
    }
    if !(status == "failed" && to_phone) {
        v["recipient_user_id"] = json!(acc.user.user_id);
        if let Some(p) = &acc.user.parent_user_id {
            v["recipient_parent_user_id"] = json!(p);
        }
    }
    if let Some(data) = &acc.msg.biz_opaque_callback_data {
        v["biz_opaque_callback_data"] = json!(data);
    }
    if status == "failed" {
        if let Some((code, details)) = &acc.async_error {
            v["errors"] = json!([GraphError::webhook_error(*code, details.as_deref())]);
        }
        return v;
    }
    if status == "sent" || status == "delivered" {
        if opts.include_conversation {
            let mut conv =
                json!({ "id": conversation_id(acc), "origin": { "type": acc.category } });
            if status == "sent" {
                conv["expiration_timestamp"] = json!((ts + 86_400).to_string());
            }
            v["conversation"] = conv;
        }
        let mut pricing = json!({
            "billable": true,
            "pricing_model": opts.pricing_model,
            "category": acc.category,
        });
        if opts.pricing_model == "PMP" {
            // Per-message pricing (from July 2025): a free-form reply can only be sent
            // inside the customer-service window, where it is free.
            if acc.msg.message_type == "template" {
                pricing["type"] = json!("regular");
            } else {
                pricing["billable"] = json!(false);
                pricing["type"] = json!("free_customer_service");
            }
        }
        v["pricing"] = pricing;
    }
    v
}

/// The `messages` webhook of some statuses: `contacts[]` (one per user, when any status
/// brings one) and `statuses[]`.
fn statuses_body(number: &NumberSpec, items: Vec<StatusItem>) -> Vec<u8> {
    let mut contacts: Vec<Value> = Vec::new();
    let mut statuses = Vec::with_capacity(items.len());
    for item in items {
        if let Some(c) = item.contact
            && !contacts.iter().any(|k| k["user_id"] == c["user_id"])
        {
            contacts.push(c);
        }
        statuses.push(item.status);
    }
    let mut fields = Map::new();
    if !contacts.is_empty() {
        fields.insert("contacts".into(), Value::Array(contacts));
    }
    fields.insert("statuses".into(), Value::Array(statuses));
    serde_json::to_vec(&messages_envelope(number, fields)).unwrap_or_default()
}

impl FakeGraph {
    /// The webhook the platform would post for one status (`sent`, `delivered`, `read`) of
    /// an accepted message, signed with the configured app secret, without posting it: the
    /// body and its `X-Hub-Signature-256`. For load generators that post the platform's
    /// statuses themselves, at the rate and concurrency they choose.
    pub fn status_webhook(&self, wamid: &str, status: &str) -> anyhow::Result<(Vec<u8>, String)> {
        let Some(config) = self.webhook_config() else {
            anyhow::bail!("no webhook is configured on the fake");
        };
        let Some(msg) = self.message(wamid) else {
            anyhow::bail!("no accepted message has the id {wamid}");
        };
        let (number, category, user) = {
            let inner = self.shared.lock();
            let Some(number) = inner.numbers.get(&msg.phone_number_id) else {
                anyhow::bail!("unknown phone_number_id {}", msg.phone_number_id);
            };
            let category = msg
                .template_name
                .as_ref()
                .and_then(|name| {
                    inner.wabas.get(&msg.waba_id)?.templates.iter().find(|t| {
                        &t.spec.name == name && Some(&t.spec.language) == msg.language.as_ref()
                    })
                })
                .map_or_else(
                    || "service".to_owned(),
                    |t| t.spec.category.to_ascii_lowercase(),
                );
            let user = crate::users::find(&inner, &msg.user_id)
                .or_else(|| {
                    (!msg.wa_id.is_empty())
                        .then(|| crate::users::find(&inner, &msg.wa_id))
                        .flatten()
                })
                .and_then(|i| inner.users.snapshot(i))
                .unwrap_or_else(|| Snapshot {
                    user_id: msg.user_id.clone(),
                    parent_user_id: None,
                    username: None,
                    shared_phone: (!msg.wa_id.is_empty()).then(|| msg.wa_id.clone()),
                    name: "Test User".to_owned(),
                });
            (number.spec.clone(), category, user)
        };
        let ts = msg.at.timestamp();
        let acc = Accepted {
            msg,
            number,
            category,
            user,
            async_error: None,
            ambiguity: None,
        };
        let body = statuses_body(
            &acc.number,
            vec![status_item(&acc, status, ts, &config.statuses)],
        );
        let signature = sign(&config.app_secret, &body);
        Ok((body, signature))
    }
}

async fn deliver_statuses(
    fake: &FakeGraph,
    config: &WebhookConfig,
    number: &NumberSpec,
    wamid: Option<String>,
    statuses: Vec<StatusItem>,
) {
    let body = statuses_body(number, statuses);
    let sig = Some(sign(&config.app_secret, &body));
    deliver(fake, config, "messages", wamid, body, sig).await;
}

/// Schedules the status webhooks of an accepted send. With `before_response`
/// the first one is delivered before this returns; the rest run in a task
/// (or go through the batcher when `max_batch > 1`).
pub(crate) async fn after_accept(fake: &FakeGraph, acc: &Accepted) {
    let Some(config) = fake.webhook_config() else {
        return;
    };
    let opts = &config.statuses;
    if !opts.enabled {
        return;
    }
    let base = acc.msg.at.timestamp() + i64::try_from(opts.delay_ms / 1000).unwrap_or(0);
    let step = i64::try_from(opts.step_ms / 1000).unwrap_or(0);
    let names: Vec<&str> = if acc.async_error.is_some() {
        vec!["failed"]
    } else if opts.read {
        vec!["sent", "delivered", "read"]
    } else {
        vec!["sent", "delivered"]
    };
    let mut statuses = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let status = status_item(acc, name, base + step * i as i64, opts);
        if opts.duplicate {
            statuses.push(status.clone());
        }
        statuses.push(status);
    }
    if opts.shuffle {
        statuses.shuffle(&mut rand::rng());
    }
    let wamid = acc.msg.wamid.clone();
    let mut rest = statuses.into_iter();
    if opts.before_response
        && let Some(first) = rest.next()
    {
        deliver_statuses(fake, &config, &acc.number, Some(wamid.clone()), vec![first]).await;
    }
    let rest: Vec<StatusItem> = rest.collect();
    if rest.is_empty() {
        return;
    }
    let (delay, step_ms) = (
        Duration::from_millis(opts.delay_ms),
        Duration::from_millis(opts.step_ms),
    );
    if opts.max_batch > 1 {
        let tx = batch_sender(fake);
        let number = acc.number.clone();
        let enqueue = move |status: StatusItem, config: &WebhookConfig| {
            let _ = tx.send(BatchItem {
                number: number.clone(),
                status,
                config: config.clone(),
            });
        };
        if delay.is_zero() && step_ms.is_zero() {
            for status in rest {
                enqueue(status, &config);
            }
        } else {
            tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                for (i, status) in rest.into_iter().enumerate() {
                    if i > 0 {
                        tokio::time::sleep(step_ms).await;
                    }
                    enqueue(status, &config);
                }
            });
        }
        return;
    }
    let fake = fake.clone();
    let number = acc.number.clone();
    tokio::spawn(async move {
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        for (i, status) in rest.into_iter().enumerate() {
            if i > 0 && !step_ms.is_zero() {
                tokio::time::sleep(step_ms).await;
            }
            deliver_statuses(&fake, &config, &number, Some(wamid.clone()), vec![status]).await;
        }
    });
}

/// A status waiting in the batcher.
#[derive(Debug)]
pub(crate) struct BatchItem {
    number: NumberSpec,
    status: StatusItem,
    config: WebhookConfig,
}

struct Batch {
    number: NumberSpec,
    config: WebhookConfig,
    statuses: Vec<StatusItem>,
    deadline: tokio::time::Instant,
}

fn batch_sender(fake: &FakeGraph) -> tokio::sync::mpsc::UnboundedSender<BatchItem> {
    fake.shared
        .batcher
        .get_or_init(|| {
            let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
            tokio::spawn(run_batcher(fake.clone(), rx));
            tx
        })
        .clone()
}

fn flush(fake: &FakeGraph, batch: Batch) {
    let fake = fake.clone();
    tokio::spawn(async move {
        deliver_statuses(&fake, &batch.config, &batch.number, None, batch.statuses).await;
    });
}

/// Groups statuses per business number into webhooks of up to `max_batch`
/// statuses, flushing partial batches after `batch_window_ms`.
async fn run_batcher(fake: FakeGraph, mut rx: tokio::sync::mpsc::UnboundedReceiver<BatchItem>) {
    let mut batches: std::collections::HashMap<String, Batch> = std::collections::HashMap::new();
    loop {
        let next = batches.values().map(|b| b.deadline).min();
        let far = tokio::time::Instant::now() + Duration::from_secs(3600);
        tokio::select! {
            item = rx.recv() => {
                let Some(item) = item else { break };
                let key = item.number.phone_number_id.clone();
                let window = Duration::from_millis(item.config.statuses.batch_window_ms);
                let max = item.config.statuses.max_batch.max(1);
                let batch = batches.entry(key.clone()).or_insert_with(|| Batch {
                    number: item.number,
                    config: item.config,
                    statuses: Vec::new(),
                    deadline: tokio::time::Instant::now() + window,
                });
                batch.statuses.push(item.status);
                if batch.statuses.len() >= max
                    && let Some(full) = batches.remove(&key)
                {
                    flush(&fake, full);
                }
            }
            () = tokio::time::sleep_until(next.unwrap_or(far)), if next.is_some() => {
                let now = tokio::time::Instant::now();
                let due: Vec<String> = batches.iter().filter(|(_, b)| b.deadline <= now).map(|(k, _)| k.clone()).collect();
                for key in due {
                    if let Some(batch) = batches.remove(&key) {
                        flush(&fake, batch);
                    }
                }
            }
            () = fake.shared.shutting_down() => break,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sign_matches_known_vector_and_verifies() {
        // RFC 4231 test case 2: key "Jefe", data "what do ya want for nothing?".
        let sig = sign("Jefe", b"what do ya want for nothing?");
        assert_eq!(
            sig,
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        assert!(verify("Jefe", b"what do ya want for nothing?", &sig));
        assert!(!verify("Jefe", b"tampered", &sig));
        assert!(!verify("Jefe", b"what do ya want for nothing?", "sha1=00"));
    }
}
