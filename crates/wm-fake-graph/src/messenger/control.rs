//! The `/_fake/messenger/...` JSON control API: thin wrappers over the Rust methods.
//!
//! | Route | Body | Does |
//! | --- | --- | --- |
//! | `POST /_fake/messenger/pages` | [`PageSpec`] | register a Page |
//! | `POST /_fake/messenger/people` | [`PersonSpec`] | register a person |
//! | `POST /_fake/messenger/pages/{id}/expire_token` | | expire the Page token (190/463) |
//! | `POST /_fake/messenger/throttle` | `{account_id, count}` | next `count` sends: 613 |
//! | `POST /_fake/messenger/profile_failure` | `{scoped_id, code: n \| null}` | profile reads fail |
//! | `POST /_fake/messenger/echoes` | `{account_id, on}` | echo accepted sends |
//! | `PUT /_fake/messenger/last_write` | `{account_id, scoped_id, ago_secs?}` | move the window (absent: never wrote) |
//! | `PUT /_fake/messenger/webhook/{page\|instagram}` | [`WebhookConfig`] or `null` | webhook target |
//! | `POST /_fake/messenger/write` | [`Write`] | post one event ([`MessengerPosted`]) |
//! | `POST /_fake/messenger/batch` | `[Write]` | post several in one webhook |
//! | `POST /_fake/messenger/delivered` | `{account_id, scoped_id, watermark_ms, mids?}` | delivery receipt |
//! | `POST /_fake/messenger/read` | `{account_id, scoped_id, watermark_ms}` | read receipt |
//! | `POST /_fake/messenger/seen` | `{account_id, scoped_id, mid}` | Instagram seen |
//! | `POST /_fake/messenger/inbox_reply` | `{account_id, scoped_id, text}` | inbox reply + echo |
//! | `POST /_fake/messenger/raw` | `{platform, body, signature: {kind: sign\|given\|unsigned, value?}}` | raw post |
//! | `GET /_fake/messenger/sends` | | [`crate::MessengerSend`]s |
//! | `GET /_fake/messenger/sender_actions` | | [`crate::MessengerSenderAction`]s |
//! | `GET /_fake/messenger/attachments/{id}` | | [`crate::MessengerAttachment`] + `bytes` (base64) |

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::{Json, Router};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde::Deserialize;
use serde_json::json;

use super::model::{MessengerPosted, PageSpec, PersonSpec, Platform, RawSignature, Write};
use crate::FakeGraph;
use crate::model::WebhookConfig;

fn ok() -> Response {
    Json(json!({ "ok": true })).into_response()
}

fn fail(status: StatusCode, msg: &str) -> Response {
    (status, Json(json!({ "error": msg }))).into_response()
}

fn posted<T: serde::Serialize>(result: anyhow::Result<T>) -> Response {
    match result {
        Ok(p) => Json(p).into_response(),
        Err(e) => fail(StatusCode::CONFLICT, &e.to_string()),
    }
}

#[derive(Deserialize)]
struct CountBody {
    account_id: String,
    count: u32,
}

#[derive(Deserialize)]
struct FailureBody {
    scoped_id: String,
    code: Option<i64>,
}

#[derive(Deserialize)]
struct EchoBody {
    account_id: String,
    on: bool,
}

#[derive(Deserialize)]
struct LastWriteBody {
    account_id: String,
    scoped_id: String,
    ago_secs: Option<f64>,
}

#[derive(Deserialize)]
struct ReceiptBody {
    account_id: String,
    scoped_id: String,
    watermark_ms: i64,
    #[serde(default)]
    mids: Option<Vec<String>>,
}

#[derive(Deserialize)]
struct SeenBody {
    account_id: String,
    scoped_id: String,
    mid: String,
}

#[derive(Deserialize)]
struct InboxBody {
    account_id: String,
    scoped_id: String,
    text: String,
}

#[derive(Deserialize)]
struct RawBody {
    platform: Platform,
    body: String,
    signature: RawSignature,
}

async fn add_page(State(f): State<FakeGraph>, Json(p): Json<PageSpec>) -> Response {
    f.register_page(p);
    ok()
}

async fn add_person(State(f): State<FakeGraph>, Json(p): Json<PersonSpec>) -> Response {
    f.register_person(p);
    ok()
}

async fn expire(State(f): State<FakeGraph>, Path(id): Path<String>) -> Response {
    if f.expire_page_token(&id) {
        ok()
    } else {
        fail(StatusCode::NOT_FOUND, "page not found")
    }
}

async fn throttle(State(f): State<FakeGraph>, Json(b): Json<CountBody>) -> Response {
    if f.throttle_messenger_next(&b.account_id, b.count) {
        ok()
    } else {
        fail(StatusCode::NOT_FOUND, "account not found")
    }
}

async fn profile_failure(State(f): State<FakeGraph>, Json(b): Json<FailureBody>) -> Response {
    if f.set_profile_failure(&b.scoped_id, b.code) {
        ok()
    } else {
        fail(StatusCode::NOT_FOUND, "person not found")
    }
}

async fn echoes(State(f): State<FakeGraph>, Json(b): Json<EchoBody>) -> Response {
    f.set_echoes(&b.account_id, b.on);
    ok()
}

async fn last_write(State(f): State<FakeGraph>, Json(b): Json<LastWriteBody>) -> Response {
    let at = match b.ago_secs {
        Some(secs) if secs.is_finite() && secs >= 0.0 => {
            let ms = (secs * 1000.0).min(1e15) as i64;
            Some(chrono::Utc::now() - chrono::Duration::milliseconds(ms))
        }
        Some(_) => {
            return fail(
                StatusCode::BAD_REQUEST,
                "ago_secs must be a non-negative number",
            );
        }
        None => None,
    };
    f.set_last_write(&b.account_id, &b.scoped_id, at);
    ok()
}

async fn webhook(
    State(f): State<FakeGraph>,
    Path(object): Path<String>,
    Json(config): Json<Option<WebhookConfig>>,
) -> Response {
    match object.as_str() {
        "page" => f.configure_messenger_webhook(config),
        "instagram" => f.configure_instagram_webhook(config),
        _ => return fail(StatusCode::NOT_FOUND, "object must be page or instagram"),
    }
    ok()
}

async fn write(State(f): State<FakeGraph>, Json(w): Json<Write>) -> Response {
    posted::<MessengerPosted>(f.messenger_write(w).await)
}

async fn batch(State(f): State<FakeGraph>, Json(ws): Json<Vec<Write>>) -> Response {
    posted(f.messenger_batch(ws).await)
}

async fn delivered(State(f): State<FakeGraph>, Json(b): Json<ReceiptBody>) -> Response {
    posted(
        f.messenger_delivered(&b.account_id, &b.scoped_id, b.watermark_ms, b.mids)
            .await,
    )
}

async fn read(State(f): State<FakeGraph>, Json(b): Json<ReceiptBody>) -> Response {
    posted(
        f.messenger_read(&b.account_id, &b.scoped_id, b.watermark_ms)
            .await,
    )
}

async fn seen(State(f): State<FakeGraph>, Json(b): Json<SeenBody>) -> Response {
    posted(f.instagram_seen(&b.account_id, &b.scoped_id, &b.mid).await)
}

async fn inbox_reply(State(f): State<FakeGraph>, Json(b): Json<InboxBody>) -> Response {
    posted(f.inbox_reply(&b.account_id, &b.scoped_id, &b.text).await)
}

async fn raw(State(f): State<FakeGraph>, Json(b): Json<RawBody>) -> Response {
    posted(
        f.post_raw_messenger(b.platform, b.body.into_bytes(), b.signature)
            .await,
    )
}

async fn sends(State(f): State<FakeGraph>) -> Response {
    Json(f.messenger_sends()).into_response()
}

async fn sender_actions(State(f): State<FakeGraph>) -> Response {
    Json(f.messenger_sender_actions()).into_response()
}

async fn attachment(State(f): State<FakeGraph>, Path(id): Path<String>) -> Response {
    match (
        f.messenger_attachment_info(&id),
        f.messenger_attachment(&id),
    ) {
        (Some(info), Some((_, bytes))) => {
            let mut v = json!(info);
            v["bytes"] = json!(STANDARD.encode(bytes));
            Json(v).into_response()
        }
        _ => fail(StatusCode::NOT_FOUND, "attachment not found"),
    }
}

/// The control routes (merged into the main router).
pub(crate) fn routes() -> Router<FakeGraph> {
    Router::new()
        .route("/_fake/messenger/pages", post(add_page))
        .route("/_fake/messenger/people", post(add_person))
        .route("/_fake/messenger/pages/{id}/expire_token", post(expire))
        .route("/_fake/messenger/throttle", post(throttle))
        .route("/_fake/messenger/profile_failure", post(profile_failure))
        .route("/_fake/messenger/echoes", post(echoes))
        .route("/_fake/messenger/last_write", put(last_write))
        .route("/_fake/messenger/webhook/{object}", put(webhook))
        .route("/_fake/messenger/write", post(write))
        .route("/_fake/messenger/batch", post(batch))
        .route("/_fake/messenger/delivered", post(delivered))
        .route("/_fake/messenger/read", post(read))
        .route("/_fake/messenger/seen", post(seen))
        .route("/_fake/messenger/inbox_reply", post(inbox_reply))
        .route("/_fake/messenger/raw", post(raw))
        .route("/_fake/messenger/sends", get(sends))
        .route("/_fake/messenger/sender_actions", get(sender_actions))
        .route("/_fake/messenger/attachments/{id}", get(attachment))
}
