//! The `/_fake/...` JSON control API, for shell scripts and multi-process tests.
//!
//! Every route is a thin wrapper over the same [`FakeGraph`] method the Rust
//! tests call, so both drive one implementation. Bodies are the serde forms of
//! the types in [`crate::model`].
//!
//! | Route | Body / query | Does |
//! | --- | --- | --- |
//! | `POST /_fake/setup` | [`Setup`] | bulk-register numbers, templates, webhook |
//! | `POST /_fake/numbers` | [`NumberSpec`] | register a number |
//! | `POST /_fake/wabas` | `{waba_id, access_token}` | register a WABA token |
//! | `POST /_fake/templates` | [`TemplateSpec`] | register a template (returns it with its id) |
//! | `POST /_fake/templates/status` | `{waba_id, name, language, status}` | change a template's status |
//! | `POST /_fake/templates/delete` | `{waba_id, name, language}` | delete a template |
//! | `GET /_fake/wabas/{waba_id}/templates` | | stored templates |
//! | `POST /_fake/numbers/{id}/expire_token` | | expire the number's token (190) |
//! | `POST /_fake/numbers/{id}/throttle` | `{count, code?=130429}` | next `count` sends answer `code` |
//! | `POST /_fake/numbers/{id}/mps_cap` | `{mps: n \| null}` | cap accepted sends per second |
//! | `GET /_fake/numbers/{id}/send_times` | | `{times_ms, max_mps}` |
//! | `POST /_fake/injections` / `DELETE` | [`Injection`] | add / clear error injections |
//! | `POST /_fake/ambiguities` | [`Ambiguity`] (`kind`: `drop_connection`, `delay`+`secs`, `hang`) | ambiguous outcomes |
//! | `GET/PUT/DELETE /_fake/webhook` | [`WebhookConfig`] | webhook target and status knobs |
//! | `GET /_fake/stats` | | [`crate::Stats`] |
//! | `GET /_fake/messages` | `?to=` | accepted messages |
//! | `GET /_fake/messages/count` | `?to=` | `{count}` |
//! | `GET /_fake/attempts` | | every send attempt |
//! | `GET /_fake/webhooks` | | webhook log ([`crate::Posted`]) |
//! | `POST /_fake/inbound` | [`InboundMessage`] | post an inbound message (opens the window) |
//! | `PUT /_fake/window` | `{phone_number_id, wa_id, last_inbound?: RFC 3339 \| null, ago_secs?}` | when the user last wrote (`null`/absent: never) |
//! | `GET /_fake/window` | `?phone_number_id=&wa_id=` | `{last_inbound, open}` (customer-service window) |
//! | `GET /_fake/reads` | | mark-as-read requests ([`crate::ReadMark`]) |
//! | `POST /_fake/template_status_update` | [`TemplateStatusUpdate`] | post that webhook |
//! | `POST /_fake/quality_update` | [`QualityUpdate`] | post that webhook |
//! | `POST /_fake/users` | [`UserSpec`] | register (or update) a WhatsApp user |
//! | `GET /_fake/users/{phone_or_user_id}` | | the [`UserSpec`] (a new phone gets its generated BSUID) |
//! | `POST /_fake/users/change_user_id` | `{old, new_user_id}` | change a user's BSUID (no webhook) |
//! | `POST /_fake/number_change` | `{phone_number_id, from, new_wa_id}` | post `user_changed_number` |
//! | `POST /_fake/user_changed_user_id` | `{phone_number_id, user, new_user_id}` | post `user_changed_user_id` |
//! | `POST /_fake/user_id_update` | `{phone_number_id, previous_user_id, current_user_id}` | post `user_id_update` |
//! | `POST /_fake/user_preference` | `{phone_number_id, wa_id, value}` | post `user_preferences` |
//! | `POST /_fake/raw` | `{body, signature?}` | post exact bytes with this signature |
//! | `POST /_fake/media` | [`MediaSpec`] (`bytes` base64) | hold a user's file ([`crate::MediaInfo`] back) |
//! | `GET /_fake/media/{id}` | | [`crate::MediaInfo`] |
//! | `POST /_fake/media/{id}/expire` | | end the file's lifetime now |
//! | `POST /_fake/media/fail_downloads` | `{count}` | next `count` downloads answer 500 |
//! | `POST /_fake/media/drop_downloads` | `{count}` | next `count` downloads lose the connection |
//! | `PUT /_fake/media/url_ttl` | `{ms}` | lifetime of new download URLs |
//! | `GET /_fake/media/stats` | | [`crate::MediaStats`] |
//! | `POST /_fake/reset` | | clear logs and counters |
//! | `POST /_fake/shutdown` | | stop the server (the binary exits) |

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::FakeGraph;
use crate::media::MediaSpec;
use crate::model::{
    Ambiguity, InboundMessage, Injection, NumberSpec, QualityUpdate, TemplateSpec, TemplateStatus,
    TemplateStatusUpdate, UserSpec, WebhookConfig,
};

/// A bulk registration, accepted by `POST /_fake/setup` and the binary's `--setup` file.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Setup {
    /// Numbers to register.
    pub numbers: Vec<NumberSpec>,
    /// Templates to register.
    pub templates: Vec<TemplateSpec>,
    /// Webhook target to configure.
    pub webhook: Option<WebhookConfig>,
    /// WhatsApp users to register.
    pub users: Vec<UserSpec>,
}

impl FakeGraph {
    /// Registers everything in `setup` (numbers first, then templates).
    pub fn apply_setup(&self, setup: Setup) {
        for n in setup.numbers {
            self.register_number(n);
        }
        for t in setup.templates {
            self.register_template(t);
        }
        for u in setup.users {
            self.register_user(u);
        }
        if setup.webhook.is_some() {
            self.configure_webhook(setup.webhook);
        }
    }
}

#[derive(Deserialize)]
struct WabaBody {
    waba_id: String,
    access_token: String,
}

#[derive(Deserialize)]
struct StatusBody {
    waba_id: String,
    name: String,
    language: String,
    status: TemplateStatus,
}

#[derive(Deserialize)]
struct TemplateKey {
    waba_id: String,
    name: String,
    language: String,
}

#[derive(Deserialize)]
struct ThrottleBody {
    count: u32,
    #[serde(default = "default_throttle_code")]
    code: i64,
}

fn default_throttle_code() -> i64 {
    130_429
}

#[derive(Deserialize)]
struct MpsBody {
    mps: Option<u32>,
}

#[derive(Deserialize)]
struct ToQuery {
    to: Option<String>,
}

#[derive(Deserialize)]
struct RawBody {
    body: String,
    #[serde(default)]
    signature: Option<String>,
}

/// `PUT /_fake/window`: `ago_secs` (seconds before now) wins over `last_inbound`.
#[derive(Deserialize)]
struct WindowBody {
    phone_number_id: String,
    wa_id: String,
    #[serde(default)]
    last_inbound: Option<chrono::DateTime<chrono::Utc>>,
    #[serde(default)]
    ago_secs: Option<f64>,
}

#[derive(Deserialize)]
struct WindowQuery {
    phone_number_id: String,
    wa_id: String,
}

#[derive(Deserialize)]
struct ChangeUserIdBody {
    old: String,
    new_user_id: String,
}

#[derive(Deserialize)]
struct NumberChangeBody {
    phone_number_id: String,
    from: String,
    new_wa_id: String,
}

#[derive(Deserialize)]
struct UserChangedIdBody {
    phone_number_id: String,
    user: String,
    new_user_id: String,
}

#[derive(Deserialize)]
struct UserIdUpdateBody {
    phone_number_id: String,
    previous_user_id: String,
    current_user_id: String,
}

#[derive(Deserialize)]
struct PreferenceBody {
    phone_number_id: String,
    wa_id: String,
    value: String,
}

#[derive(Deserialize)]
struct CountBody {
    count: usize,
}

#[derive(Deserialize)]
struct TtlBody {
    ms: u64,
}

fn ok() -> Response {
    Json(json!({ "ok": true })).into_response()
}

fn found(found: bool, what: &str) -> Response {
    if found {
        ok()
    } else {
        (
            StatusCode::NOT_FOUND,
            Json(json!({ "error": format!("{what} not found") })),
        )
            .into_response()
    }
}

fn posted(result: anyhow::Result<crate::model::Posted>) -> Response {
    match result {
        Ok(p) => Json(p).into_response(),
        Err(e) => (
            StatusCode::CONFLICT,
            Json(json!({ "error": e.to_string() })),
        )
            .into_response(),
    }
}

async fn add_number(State(f): State<FakeGraph>, Json(n): Json<NumberSpec>) -> Response {
    f.register_number(n);
    ok()
}

async fn add_waba(State(f): State<FakeGraph>, Json(b): Json<WabaBody>) -> Response {
    f.register_waba(&b.waba_id, &b.access_token);
    ok()
}

async fn add_template(State(f): State<FakeGraph>, Json(t): Json<TemplateSpec>) -> Response {
    Json(f.register_template(t)).into_response()
}

async fn list_templates(State(f): State<FakeGraph>, Path(waba): Path<String>) -> Response {
    Json(f.templates(&waba)).into_response()
}

async fn template_status(State(f): State<FakeGraph>, Json(b): Json<StatusBody>) -> Response {
    found(
        f.set_template_status(&b.waba_id, &b.name, &b.language, b.status),
        "template",
    )
}

async fn delete_template(State(f): State<FakeGraph>, Json(b): Json<TemplateKey>) -> Response {
    found(
        f.delete_template(&b.waba_id, &b.name, &b.language),
        "template",
    )
}

async fn expire(State(f): State<FakeGraph>, Path(id): Path<String>) -> Response {
    found(f.expire_token(&id), "number")
}

async fn throttle(
    State(f): State<FakeGraph>,
    Path(id): Path<String>,
    Json(b): Json<ThrottleBody>,
) -> Response {
    found(f.throttle_next(&id, b.count, b.code), "number")
}

async fn mps_cap(
    State(f): State<FakeGraph>,
    Path(id): Path<String>,
    Json(b): Json<MpsBody>,
) -> Response {
    found(f.set_mps_cap(&id, b.mps), "number")
}

async fn send_times(State(f): State<FakeGraph>, Path(id): Path<String>) -> Response {
    Json(json!({ "times_ms": f.send_times(&id), "max_mps": f.max_mps(&id) })).into_response()
}

async fn add_injection(State(f): State<FakeGraph>, Json(i): Json<Injection>) -> Response {
    f.inject(i);
    ok()
}

async fn clear_injections(State(f): State<FakeGraph>) -> Response {
    f.clear_injections();
    ok()
}

async fn add_ambiguity(State(f): State<FakeGraph>, Json(a): Json<Ambiguity>) -> Response {
    f.ambiguous(a);
    ok()
}

async fn get_webhook(State(f): State<FakeGraph>) -> Response {
    Json(f.webhook_config()).into_response()
}

async fn put_webhook(State(f): State<FakeGraph>, Json(c): Json<WebhookConfig>) -> Response {
    f.configure_webhook(Some(c));
    ok()
}

async fn delete_webhook(State(f): State<FakeGraph>) -> Response {
    f.configure_webhook(None);
    ok()
}

async fn stats(State(f): State<FakeGraph>) -> Response {
    Json(f.stats()).into_response()
}

async fn messages(State(f): State<FakeGraph>, Query(q): Query<ToQuery>) -> Response {
    let all = f.accepted();
    let list: Vec<_> = match q.to {
        Some(to) => all.into_iter().filter(|m| m.to == to).collect(),
        None => all,
    };
    Json(list).into_response()
}

async fn message_count(State(f): State<FakeGraph>, Query(q): Query<ToQuery>) -> Response {
    let count = match q.to {
        Some(to) => f.accepted_to(&to),
        None => f.accepted_count(),
    };
    Json(json!({ "count": count })).into_response()
}

async fn attempts(State(f): State<FakeGraph>) -> Response {
    Json(f.attempts()).into_response()
}

async fn webhook_log(State(f): State<FakeGraph>) -> Response {
    Json(f.webhook_log()).into_response()
}

async fn inbound(State(f): State<FakeGraph>, Json(m): Json<InboundMessage>) -> Response {
    posted(f.post_inbound(m).await)
}

async fn put_window(State(f): State<FakeGraph>, Json(b): Json<WindowBody>) -> Response {
    let at = match b.ago_secs {
        Some(secs) if secs.is_finite() && secs >= 0.0 => {
            let ms = (secs * 1000.0).min(1e15) as i64;
            Some(chrono::Utc::now() - chrono::Duration::milliseconds(ms))
        }
        Some(_) => {
            return (
                StatusCode::BAD_REQUEST,
                Json(json!({ "error": "ago_secs must be a non-negative number" })),
            )
                .into_response();
        }
        None => b.last_inbound,
    };
    f.set_last_inbound(&b.phone_number_id, &b.wa_id, at);
    ok()
}

async fn get_window(State(f): State<FakeGraph>, Query(q): Query<WindowQuery>) -> Response {
    Json(json!({
        "last_inbound": f.last_inbound(&q.phone_number_id, &q.wa_id),
        "open": f.window_open(&q.phone_number_id, &q.wa_id),
    }))
    .into_response()
}

async fn reads(State(f): State<FakeGraph>) -> Response {
    Json(f.reads()).into_response()
}

async fn tpl_update(State(f): State<FakeGraph>, Json(u): Json<TemplateStatusUpdate>) -> Response {
    posted(f.post_template_status_update(u).await)
}

async fn quality(State(f): State<FakeGraph>, Json(u): Json<QualityUpdate>) -> Response {
    posted(f.post_quality_update(u).await)
}

async fn add_user(State(f): State<FakeGraph>, Json(u): Json<UserSpec>) -> Response {
    f.register_user(u);
    ok()
}

async fn get_user(State(f): State<FakeGraph>, Path(id): Path<String>) -> Response {
    match f.user(&id) {
        Some(u) => Json(u).into_response(),
        None => found(false, "user"),
    }
}

async fn change_user_id(State(f): State<FakeGraph>, Json(b): Json<ChangeUserIdBody>) -> Response {
    found(f.change_user_id(&b.old, &b.new_user_id), "user")
}

async fn number_change(State(f): State<FakeGraph>, Json(b): Json<NumberChangeBody>) -> Response {
    posted(
        f.post_number_change(&b.phone_number_id, &b.from, &b.new_wa_id)
            .await,
    )
}

async fn user_changed_user_id(
    State(f): State<FakeGraph>,
    Json(b): Json<UserChangedIdBody>,
) -> Response {
    posted(
        f.post_user_changed_user_id(&b.phone_number_id, &b.user, &b.new_user_id)
            .await,
    )
}

async fn user_id_update(State(f): State<FakeGraph>, Json(b): Json<UserIdUpdateBody>) -> Response {
    posted(
        f.post_user_id_update(&b.phone_number_id, &b.previous_user_id, &b.current_user_id)
            .await,
    )
}

async fn user_preference(State(f): State<FakeGraph>, Json(b): Json<PreferenceBody>) -> Response {
    posted(
        f.post_user_preference(&b.phone_number_id, &b.wa_id, &b.value)
            .await,
    )
}

async fn raw(State(f): State<FakeGraph>, Json(b): Json<RawBody>) -> Response {
    posted(f.post_raw(b.body.into_bytes(), b.signature).await)
}

async fn add_media(State(f): State<FakeGraph>, Json(m): Json<MediaSpec>) -> Response {
    let id = f.add_media(m);
    Json(f.media_info(&id)).into_response()
}

async fn media_info(State(f): State<FakeGraph>, Path(id): Path<String>) -> Response {
    match f.media_info(&id) {
        Some(info) => Json(info).into_response(),
        None => found(false, "media"),
    }
}

async fn expire_media(State(f): State<FakeGraph>, Path(id): Path<String>) -> Response {
    found(f.expire_media(&id), "media")
}

async fn fail_downloads(State(f): State<FakeGraph>, Json(b): Json<CountBody>) -> Response {
    f.fail_media_downloads(b.count);
    ok()
}

async fn drop_downloads(State(f): State<FakeGraph>, Json(b): Json<CountBody>) -> Response {
    f.drop_media_downloads(b.count);
    ok()
}

async fn media_url_ttl(State(f): State<FakeGraph>, Json(b): Json<TtlBody>) -> Response {
    f.set_media_url_ttl(std::time::Duration::from_millis(b.ms));
    ok()
}

async fn media_stats(State(f): State<FakeGraph>) -> Response {
    Json(f.media_requests()).into_response()
}

async fn setup(State(f): State<FakeGraph>, Json(s): Json<Setup>) -> Response {
    f.apply_setup(s);
    ok()
}

async fn reset(State(f): State<FakeGraph>) -> Response {
    f.reset_logs();
    ok()
}

async fn shutdown(State(f): State<FakeGraph>) -> Response {
    f.shared.shutdown.send_replace(true);
    ok()
}

/// The control routes (merged into the main router).
pub(crate) fn routes() -> Router<FakeGraph> {
    Router::new()
        .route("/_fake/setup", post(setup))
        .route("/_fake/numbers", post(add_number))
        .route("/_fake/wabas", post(add_waba))
        .route("/_fake/templates", post(add_template))
        .route("/_fake/templates/status", post(template_status))
        .route("/_fake/templates/delete", post(delete_template))
        .route("/_fake/wabas/{waba_id}/templates", get(list_templates))
        .route("/_fake/numbers/{id}/expire_token", post(expire))
        .route("/_fake/numbers/{id}/throttle", post(throttle))
        .route("/_fake/numbers/{id}/mps_cap", post(mps_cap))
        .route("/_fake/numbers/{id}/send_times", get(send_times))
        .route(
            "/_fake/injections",
            post(add_injection).delete(clear_injections),
        )
        .route("/_fake/ambiguities", post(add_ambiguity))
        .route(
            "/_fake/webhook",
            get(get_webhook).put(put_webhook).delete(delete_webhook),
        )
        .route("/_fake/stats", get(stats))
        .route("/_fake/messages", get(messages))
        .route("/_fake/messages/count", get(message_count))
        .route("/_fake/attempts", get(attempts))
        .route("/_fake/webhooks", get(webhook_log))
        .route("/_fake/inbound", post(inbound))
        .route("/_fake/window", get(get_window).put(put_window))
        .route("/_fake/reads", get(reads))
        .route("/_fake/template_status_update", post(tpl_update))
        .route("/_fake/quality_update", post(quality))
        .route("/_fake/raw", post(raw))
        .route("/_fake/users", post(add_user))
        .route("/_fake/users/change_user_id", post(change_user_id))
        .route("/_fake/users/{id}", get(get_user))
        .route("/_fake/number_change", post(number_change))
        .route("/_fake/user_changed_user_id", post(user_changed_user_id))
        .route("/_fake/user_id_update", post(user_id_update))
        .route("/_fake/user_preference", post(user_preference))
        .route("/_fake/media", post(add_media))
        .route("/_fake/media/stats", get(media_stats))
        .route("/_fake/media/fail_downloads", post(fail_downloads))
        .route("/_fake/media/drop_downloads", post(drop_downloads))
        .route("/_fake/media/url_ttl", axum::routing::put(media_url_ttl))
        .route("/_fake/media/{id}", get(media_info))
        .route("/_fake/media/{id}/expire", post(expire_media))
        .route("/_fake/reset", post(reset))
        .route("/_fake/shutdown", post(shutdown))
}
