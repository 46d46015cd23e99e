//! Conversations that hold their messages: the thread page on a long thread, and inbound
//! platform messages applied per second, each beside its anchor measured in the same run.
//!
//! - `GET /conversations/{id}/messages?pageSize=50` on a thread of `THREAD` messages (default
//!   100,000), the newest page and a page 90 % down (`before`), through the whole router
//!   (auth, rate limit, validation, JSON). Anchors: a bare axum route answering a
//!   precomputed 50-message body through the same `oneshot`, and the page's raw keyset
//!   `SELECT` on the same database connection pool.
//! - Inbound text messages applied per second: `INBOUND` (default 2,000) signed-webhook
//!   bodies in Meta's documented envelope kept as the intake keeps them, then applied by the
//!   applier (`services::platform::apply_pending`): contact resolution, conversation, the
//!   message row, the seen-id mark, one write transaction each. Anchor: the same number of
//!   one-row INSERT transactions on the same database.
//!
//! - Replies sent per second through the fake Graph API: `REPLIES` (default 1,000) text
//!   replies queued with `POST /conversations/{id}/messages` (the request's time is what a
//!   reply costs the writer: one write transaction), then sent by the reply sender
//!   (`services::replies::deliver`, claim + call + record) unpaced. Anchor: the same number of
//!   bare HTTP POSTs of the same body to the fake's send endpoint.
//!
//! - The same two for Messenger and Instagram (`meta.rs`), in the same run.
//!
//! `cargo bench -p wm-benches --bench messages` (SQLite file);
//! `WM_BENCH_DATABASE_URL=postgres://… cargo bench -p wm-benches --bench messages`.

use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::http::Request;
use sea_orm::{ConnectionTrait, EntityTrait};
use tower::ServiceExt;
use uuid::Uuid;
use wm_server::db::Db;
use wm_server::db::entities::message;
use wm_server::state::{AppState, Settings};
use wm_types::campaigns::{CreatePhoneNumber, Inbound};
use wm_types::enums::{ChannelType, Scope};
use wm_types::messages::{MessageDirection, MessageStatus, MessageType};

#[path = "../crates/wm-server/tests/it/replicas_harness.rs"]
mod harness;
mod meta;

const PNID: &str = "109000000000001";

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn p50_p95(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    (percentile(&v, 0.5), percentile(&v, 0.95))
}

async fn database() -> anyhow::Result<(String, &'static str, Option<std::path::PathBuf>)> {
    Ok(match std::env::var("WM_BENCH_DATABASE_URL") {
        Ok(url) if !url.is_empty() => (harness::fresh_pg_database(&url).await, "PostgreSQL", None),
        _ => {
            let dir = std::env::temp_dir().join(format!("wm-bench-msg-{}", Uuid::now_v7()));
            std::fs::create_dir_all(&dir)?;
            let url = format!("sqlite://{}/bench.db?mode=rwc", dir.display());
            (url, "SQLite", Some(dir))
        }
    })
}

struct Org {
    state: AppState,
    id: Uuid,
    key: String,
}

async fn organisation(state: &AppState) -> anyhow::Result<Org> {
    let now = state.now_ms();
    let txn = state.db.write().await?;
    let org = wm_server::services::organizations::create(
        &*txn,
        wm_types::admin::CreateOrganization {
            name: "bench".into(),
            currency: None,
            timezone: None,
            included_utility_messages: None,
        },
        now,
    )
    .await
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    txn.commit().await?;
    let user = wm_server::services::organizations::create_user(
        state,
        org.id,
        wm_types::admin::CreateUser {
            full_name: "Bench".into(),
            email: "bench@example.com".into(),
        },
    )
    .await
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    let key = wm_server::services::organizations::create_api_key(
        state,
        org.id,
        wm_types::admin::CreateApiKey {
            name: "bench".into(),
            user_id: user.id,
            scopes: Scope::ALL.to_vec(),
            expires_at: None,
        },
    )
    .await
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(Org {
        state: state.clone(),
        id: org.id,
        key: key.key,
    })
}

/// A conversation with `n` messages, written straight to the table in batches.
async fn long_thread(o: &Org, n: usize) -> anyhow::Result<(Uuid, Vec<Uuid>)> {
    let r = wm_server::services::inbound::inbound(
        &o.state,
        o.id,
        Inbound {
            channel_type: ChannelType::MessagingAppA,
            external_id: "5215511110001".into(),
            full_name: Some("Ana".into()),
            text: Some("hola".into()),
        },
    )
    .await
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    let (conversation, contact) = (r.conversation_id, r.contact_id);
    let start = o.state.now_ms();
    let mut ids = Vec::with_capacity(n);
    for chunk in (0..n).collect::<Vec<_>>().chunks(500) {
        let rows: Vec<message::ActiveModel> = chunk
            .iter()
            .map(|i| {
                let id = Uuid::now_v7();
                ids.push(id);
                let at = start + *i as i64;
                let outbound = i % 3 == 0;
                message::ActiveModel::from(message::Model {
                    id,
                    organization_id: o.id,
                    conversation_id: Some(conversation),
                    contact_id: contact,
                    direction: if outbound {
                        MessageDirection::Outbound
                    } else {
                        MessageDirection::Inbound
                    },
                    message_type: MessageType::Text,
                    body: Some(format!("mensaje número {i} del hilo")),
                    content: None,
                    media_id: None,
                    reply_to_id: None,
                    platform_message_id: None,
                    status: if outbound {
                        MessageStatus::Delivered
                    } else {
                        MessageStatus::Received
                    },
                    error_message: None,
                    cost_micros: None,
                    sent_by_kind: None,
                    sent_by_id: None,
                    recipient_id: None,
                    phone_number_id: None,
                    attempt_at: None,
                    retry_at: None,
                    retries: 0,
                    created_at: at,
                    updated_at: at,
                    seq: None,
                })
            })
            .collect();
        let txn = o.state.db.write().await?;
        message::Entity::insert_many(rows)
            .exec_without_returning(&*txn)
            .await?;
        txn.commit().await?;
    }
    Ok((conversation, ids))
}

async fn get(router: &axum::Router, key: &str, uri: &str) -> anyhow::Result<f64> {
    let req = Request::builder()
        .uri(uri)
        .header("authorization", format!("Bearer {key}"))
        .body(Body::empty())?;
    let t = Instant::now();
    let res = router.clone().oneshot(req).await?;
    let status = res.status();
    let body = axum::body::to_bytes(res.into_body(), usize::MAX).await?;
    let ms = t.elapsed().as_secs_f64() * 1e3;
    anyhow::ensure!(status.is_success(), "{uri}: {status} {body:?}");
    Ok(ms)
}

async fn thread_pages(o: &Org, n: usize, reps: usize) -> anyhow::Result<String> {
    let t = Instant::now();
    let (conversation, ids) = long_thread(o, n).await?;
    let filled = t.elapsed().as_secs_f64();
    let router = axum::Router::new().nest("/api/v1", wm_server::router(o.state.clone()));
    let newest = format!("/api/v1/conversations/{conversation}/messages?pageSize=50");
    let deep_id = ids[n / 10];
    let deep = format!("{newest}&before={deep_id}");
    // Bare axum: the very bytes of wm's newest page, precomputed.
    let req = Request::builder()
        .uri(&newest)
        .header("authorization", format!("Bearer {}", o.key))
        .body(Body::empty())?;
    let res = router.clone().oneshot(req).await?;
    let body = Arc::new(
        axum::body::to_bytes(res.into_body(), usize::MAX)
            .await?
            .to_vec(),
    );
    let bare = axum::Router::new().route(
        "/page",
        axum::routing::get(move || {
            let body = body.clone();
            async move {
                (
                    [("content-type", "application/json")],
                    body.as_ref().clone(),
                )
            }
        }),
    );
    let (mut ours_new, mut ours_deep, mut bare_ms, mut raw_new, mut raw_deep) =
        (vec![], vec![], vec![], vec![], vec![]);
    // The page's query alone, on the same pool (no HTTP, auth or JSON).
    let raw = |before: Option<Uuid>| {
        let conn = o.state.db.conn.clone();
        async move {
            let before = match before {
                Some(b) => message::Entity::find_by_id(b)
                    .one(&conn)
                    .await?
                    .map(|m| (m.created_at, m.id)),
                None => None,
            };
            let t = Instant::now();
            let rows = wm_server::db::messages::page(
                &conn,
                wm_server::db::messages::Thread::Conversation(conversation),
                before,
                51,
            )
            .await?;
            anyhow::ensure!(rows.len() == 51);
            Ok::<f64, anyhow::Error>(t.elapsed().as_secs_f64() * 1e3)
        }
    };
    for _ in 0..10 {
        get(&router, &o.key, &newest).await?;
    }
    for _ in 0..reps {
        ours_new.push(get(&router, &o.key, &newest).await?);
        ours_deep.push(get(&router, &o.key, &deep).await?);
        bare_ms.push(get(&bare, "", "/page").await?);
        raw_new.push(raw(None).await?);
        raw_deep.push(raw(Some(deep_id)).await?);
    }
    let (a, a95) = p50_p95(ours_new);
    let (b, b95) = p50_p95(ours_deep);
    let (c, c95) = p50_p95(bare_ms);
    let (d, d95) = p50_p95(raw_new);
    let (e, e95) = p50_p95(raw_deep);
    Ok(format!(
        "thread of {n} messages (written in {filled:.1} s), pageSize=50, {reps} requests each\n\
         {:<44} {:>8} {:>8}\n\
         {:<44} {a:>8.2} {a95:>8.2}\n\
         {:<44} {b:>8.2} {b95:>8.2}\n\
         {:<44} {c:>8.2} {c95:>8.2}\n\
         {:<44} {d:>8.2} {d95:>8.2}\n\
         {:<44} {e:>8.2} {e95:>8.2}\n",
        "",
        "p50 ms",
        "p95 ms",
        "GET …/messages newest page (wm)",
        "GET …/messages page 90% down, before= (wm)",
        "anchor: bare axum, same-size JSON",
        "anchor: the page's keyset query alone, newest",
        "anchor: the page's keyset query alone, 90% down",
    ))
}

/// A webhook body with one text message from `from`, as Meta documents it.
fn webhook(i: usize, from: &str) -> String {
    serde_json::json!({
        "object": "whatsapp_business_account",
        "entry": [{"id": "209000000000001", "changes": [{"field": "messages", "value": {
            "messaging_product": "whatsapp",
            "metadata": {"display_phone_number": "525500000001", "phone_number_id": PNID},
            "contacts": [{"profile": {"name": format!("Persona {i}")}, "wa_id": from}],
            "messages": [{"from": from, "id": format!("wamid.bench{i:08}"),
                          "timestamp": "1764300000", "type": "text",
                          "text": {"body": format!("Hola, mensaje {i}")}}]
        }}]}]
    })
    .to_string()
}

async fn inbound_rate(o: &Org, n: usize, people: usize) -> anyhow::Result<String> {
    wm_server::services::phone_numbers::create(
        &o.state,
        o.id,
        CreatePhoneNumber {
            number_e164: "+525500000001".into(),
            display_name: "Ventas".into(),
            quality_rating: None,
            platform_phone_number_id: Some(PNID.into()),
            waba_id: None,
            access_token: None,
            mps: None,
        },
    )
    .await
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    for i in 0..n {
        let from = format!("52155{:08}", i % people);
        wm_server::services::platform::keep(&o.state, "whatsapp", webhook(i, &from))
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    let t = Instant::now();
    let mut applied = 0;
    loop {
        let k = wm_server::services::platform::apply_pending(&o.state).await?;
        if k == 0 {
            break;
        }
        applied += k;
    }
    let secs = t.elapsed().as_secs_f64();
    let kept = {
        use sea_orm::{ColumnTrait, PaginatorTrait, QueryFilter};
        message::Entity::find()
            .filter(message::Column::OrganizationId.eq(o.id))
            .filter(message::Column::PlatformMessageId.is_not_null())
            .count(&o.state.db.conn)
            .await?
    };
    anyhow::ensure!(kept as usize == n, "{kept} messages kept of {n}");
    // Anchor: as many one-row write transactions.
    o.state
        .db
        .conn
        .execute_unprepared("CREATE TABLE bench_anchor (id TEXT PRIMARY KEY, body TEXT)")
        .await?;
    let ta = Instant::now();
    for i in 0..n {
        let txn = o.state.db.write().await?;
        txn.execute_unprepared(&format!(
            "INSERT INTO bench_anchor (id, body) VALUES ('{}', 'Hola, mensaje {i}')",
            Uuid::now_v7()
        ))
        .await?;
        txn.commit().await?;
    }
    let anchor = ta.elapsed().as_secs_f64();
    Ok(format!(
        "inbound text messages: {n} webhooks from {people} people\n\
         {:<44} {:>10.0} /s ({applied} applied in {secs:.2} s)\n\
         {:<44} {:>10.0} /s\n",
        "applied by the applier (wm)",
        n as f64 / secs,
        "anchor: one-row INSERT transactions",
        n as f64 / anchor,
    ))
}

/// Replies through the fake: queued, then sent; and the fake alone as the anchor.
async fn replies(url: &str, n: usize) -> anyhow::Result<String> {
    const PNID: &str = "109000000000002";
    use wm_fake_graph::{FakeGraph, FakeGraphOptions, InboundKind, InboundMessage, NumberSpec};
    let fake = FakeGraph::start(FakeGraphOptions::default()).await?;
    fake.register_number(NumberSpec {
        phone_number_id: PNID.into(),
        waba_id: "209000000000001".into(),
        display_phone_number: "525500000002".into(),
        access_token: "EAAG-bench".into(),
    });
    let db = Db::connect(url).await?;
    let mut settings = Settings::new("bench");
    settings.rate_limit_per_minute = 1_000_000_000;
    settings.provider_mps = 0;
    settings.providers.whatsapp.graph_url = fake.url();
    settings.providers.messaging = "whatsapp".into();
    let clock: Arc<dyn wm_core::time::Clock> = Arc::new(wm_core::time::SystemClock);
    let registry = wm_server::provider::registry(&settings.providers, &db, clock.clone())
        .map_err(|e| anyhow::anyhow!(e))?;
    let state = AppState::with_registry(
        db,
        clock,
        settings,
        registry,
        Some(wm_server::secrets::SecretKey::generate()),
    );
    let o = organisation(&state).await?;
    wm_server::services::phone_numbers::create(
        &state,
        o.id,
        CreatePhoneNumber {
            number_e164: "+525500000002".into(),
            display_name: "Ventas".into(),
            quality_rating: None,
            platform_phone_number_id: Some(PNID.into()),
            waba_id: None,
            access_token: Some("EAAG-bench".into()),
            mps: None,
        },
    )
    .await
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    // The customer writes (the fake opens its window), and wm keeps the message.
    let person = "5215511110001";
    fake.post_inbound(InboundMessage {
        phone_number_id: PNID.into(),
        from: person.into(),
        profile_name: Some("Ana".into()),
        kind: InboundKind::Text {
            body: "Hola".into(),
        },
        context: None,
    })
    .await
    .ok();
    let r = wm_server::services::inbound::inbound(
        &state,
        o.id,
        Inbound {
            channel_type: ChannelType::MessagingAppA,
            external_id: person.into(),
            full_name: Some("Ana".into()),
            text: Some("Hola".into()),
        },
    )
    .await
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    let router = axum::Router::new().nest("/api/v1", wm_server::router(state.clone()));
    let uri = format!("/api/v1/conversations/{}/messages", r.conversation_id);
    let mut posts = Vec::with_capacity(n);
    for i in 0..n {
        let body = serde_json::json!({"type": "text", "text": {"body": format!("Respuesta {i}")}});
        let req = Request::builder()
            .method("POST")
            .uri(&uri)
            .header("authorization", format!("Bearer {}", o.key))
            .header("content-type", "application/json")
            .body(Body::from(body.to_string()))?;
        let t = Instant::now();
        let res = router.clone().oneshot(req).await?;
        anyhow::ensure!(res.status().as_u16() == 201, "reply: {}", res.status());
        posts.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let t = Instant::now();
    let mut sent = 0;
    while sent < n {
        let out = wm_server::services::replies::deliver::run_once(&state).await?;
        anyhow::ensure!(out.failed == 0, "replies failed: {out:?}");
        if out.sent == 0 {
            anyhow::bail!("{sent} of {n} replies sent, then none");
        }
        sent += out.sent;
    }
    let secs = t.elapsed().as_secs_f64();
    // Anchor: the fake's send endpoint, the same number of bare POSTs.
    let http = reqwest::Client::new();
    let send_url = format!("{}/v24.0/{PNID}/messages", fake.url());
    let ta = Instant::now();
    for i in 0..n {
        let body = serde_json::json!({"messaging_product": "whatsapp", "to": person, "type": "text",
            "text": {"body": format!("Respuesta {i}")}});
        let res = http
            .post(&send_url)
            .bearer_auth("EAAG-bench")
            .json(&body)
            .send()
            .await?;
        anyhow::ensure!(res.status().is_success(), "anchor: {}", res.status());
    }
    let anchor = ta.elapsed().as_secs_f64();
    let (p50, p95) = p50_p95(posts);
    fake.shutdown().await;
    Ok(format!(
        "replies: {n} text replies to one customer, unpaced\n\
         {:<44} {p50:>8.2} {p95:>8.2} ms (p50, p95)\n\
         {:<44} {:>10.0} /s ({sent} in {secs:.2} s)\n\
         {:<44} {:>10.0} /s\n",
        "POST …/messages (validate, window, one txn)",
        "sent through the fake by the reply sender",
        n as f64 / secs,
        "anchor: bare POSTs to the fake's send",
        n as f64 / anchor,
    ))
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> anyhow::Result<()> {
    let thread = env_usize("THREAD", 100_000);
    let inbound = env_usize("INBOUND", 2_000);
    let reps = env_usize("REPS", 200);
    let (url, kind, dir) = database().await?;
    let db = Db::connect(&url).await?;
    db.migrate().await?;
    let mut settings = Settings::new("bench");
    settings.rate_limit_per_minute = 1_000_000_000;
    let state = AppState::new(db, Arc::new(wm_core::time::SystemClock), settings);
    let o = organisation(&state).await?;
    println!(
        "wm messages benchmark — {kind}, {} cores\n",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!("{}", thread_pages(&o, thread, reps).await?);
    let o2 = organisation(&state).await?;
    println!("{}", inbound_rate(&o2, inbound, inbound / 4).await?);
    let _ = rustls::crypto::ring::default_provider().install_default();
    println!("{}", replies(&url, env_usize("REPLIES", 1_000)).await?);
    println!(
        "{}",
        meta::run(&url, inbound, env_usize("REPLIES", 1_000)).await?
    );
    if let Some(dir) = dir {
        let _ = std::fs::remove_dir_all(dir);
    }
    Ok(())
}
