//! The Messenger and Instagram half of the `messages` bench: inbound messages applied per
//! second and replies sent per second through the fake Graph API, measured in the same run
//! as WhatsApp's figures (the caller prints them side by side).
//!
//! - Inbound: `n` signed-webhook bodies in Meta's documented `page` and `instagram`
//!   envelopes (half each, one message per entry), kept as the intake keeps them, then
//!   applied by the applier: contact by scoped id, conversation on the channel, the
//!   message row, the seen mark, the profile read queued.
//! - Replies: `n` text replies queued with `POST /conversations/{id}/messages` to one
//!   Messenger person, then sent by the reply sender through the Page's Send API. Paced as
//!   Meta allows a Page (300 text calls/s), so that is the ceiling. Anchor: as many bare
//!   POSTs to the fake's Send API (unpaced).

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::Request;
use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter};
use tower::ServiceExt;
use wm_fake_graph::{FakeGraph, FakeGraphOptions, PageSpec, PersonSpec};
use wm_server::db::Db;
use wm_server::db::entities::message;
use wm_server::state::{AppState, Settings};
use wm_types::channels::{ConnectInstagram, ConnectPage};

const PAGE: &str = "104000000000009";
const IG: &str = "178400000000009";
const TOKEN: &str = "EAAP-bench";
const PERSON: &str = "24000000000000009";

/// One inbound text message in Meta's envelope for `object` (`page` or `instagram`).
fn webhook(object: &str, account: &str, i: usize, from: &str) -> String {
    let now = chrono::Utc::now().timestamp_millis() - 60_000 + i as i64;
    serde_json::json!({
        "object": object,
        "entry": [{"id": account, "time": now, "messaging": [{
            "sender": {"id": from}, "recipient": {"id": account}, "timestamp": now,
            "message": {"mid": format!("m_bench{object}{i:08}"), "text": format!("Hola, mensaje {i}")}
        }]}]
    })
    .to_string()
}

/// A state whose providers talk to the fake, with a secret key for the Page tokens.
fn state_for(db: Db, fake: &FakeGraph) -> anyhow::Result<AppState> {
    let mut settings = Settings::new("bench");
    settings.rate_limit_per_minute = 1_000_000_000;
    settings.providers.whatsapp.graph_url = fake.url();
    let clock: Arc<dyn wm_core::time::Clock> = Arc::new(wm_core::time::SystemClock);
    let registry = wm_server::provider::registry(&settings.providers, &db, clock.clone())
        .map_err(|e| anyhow::anyhow!(e))?;
    Ok(AppState::with_registry(
        db,
        clock,
        settings,
        registry,
        Some(wm_server::secrets::SecretKey::generate()),
    ))
}

async fn connect(state: &AppState, org: uuid::Uuid) -> anyhow::Result<()> {
    let e = |e: wm_server::error::ApiError| anyhow::anyhow!("{e}");
    wm_server::services::channels::connect_page(
        state,
        org,
        ConnectPage {
            page_id: PAGE.into(),
            name: "Tienda".into(),
            access_token: TOKEN.into(),
            human_agent: None,
        },
    )
    .await
    .map_err(e)?;
    wm_server::services::channels::connect_instagram(
        state,
        org,
        ConnectInstagram {
            instagram_id: IG.into(),
            page_id: PAGE.into(),
            name: "@tienda".into(),
            access_token: TOKEN.into(),
            human_agent: None,
        },
    )
    .await
    .map_err(e)?;
    Ok(())
}

/// Keeps `bodies` as the intake would and applies them all; the seconds applying took.
async fn apply_all(state: &AppState, bodies: Vec<(&str, String)>) -> anyhow::Result<f64> {
    for (provider, body) in bodies {
        wm_server::services::platform::keep(state, provider, body)
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    let t = Instant::now();
    while wm_server::services::platform::apply_pending(state).await? > 0 {}
    Ok(t.elapsed().as_secs_f64())
}

/// Both measurements on a fresh organisation of database `url`; the lines to print.
pub async fn run(url: &str, inbound: usize, replies: usize) -> anyhow::Result<String> {
    let fake = FakeGraph::start(FakeGraphOptions::default()).await?;
    fake.register_page(PageSpec {
        page_id: PAGE.into(),
        access_token: TOKEN.into(),
        name: "Tienda".into(),
        instagram_id: Some(IG.into()),
        human_agent: false,
    });
    fake.register_person(PersonSpec {
        account_id: PAGE.into(),
        scoped_id: PERSON.into(),
        first_name: "Ana".into(),
        last_name: "Ruiz".into(),
        name: "Ana Ruiz".into(),
        username: None,
        profile_pic: None,
    });
    fake.set_echoes(PAGE, false);
    let state = state_for(Db::connect(url).await?, &fake)?;
    let o = super::organisation(&state).await?;
    connect(&state, o.id).await?;

    // Inbound: half Messenger, half Instagram, from inbound/4 people.
    let people = (inbound / 4).max(1);
    let bodies = (0..inbound)
        .map(|i| {
            let from = format!("2400000{:010}", i % people);
            if i % 2 == 0 {
                ("messenger", webhook("page", PAGE, i, &from))
            } else {
                ("instagram", webhook("instagram", IG, i, &from))
            }
        })
        .collect();
    let secs = apply_all(&state, bodies).await?;
    let kept = message::Entity::find()
        .filter(message::Column::OrganizationId.eq(o.id))
        .count(&state.db.conn)
        .await?;
    anyhow::ensure!(
        kept as usize == inbound,
        "{kept} messages kept of {inbound}"
    );

    // Replies: the person writes (the fake opens the window; wm opens the conversation).
    fake.set_last_write(PAGE, PERSON, Some(chrono::Utc::now()));
    apply_all(
        &state,
        vec![("messenger", webhook("page", PAGE, inbound + 1, PERSON))],
    )
    .await?;
    let conversation = {
        use wm_server::db::entities::{conversation, identity};
        let who = identity::Entity::find()
            .filter(identity::Column::ExternalId.eq(PERSON))
            .one(&state.db.conn)
            .await?
            .ok_or_else(|| anyhow::anyhow!("the person is not a contact"))?;
        conversation::Entity::find()
            .filter(conversation::Column::ContactId.eq(who.contact_id))
            .one(&state.db.conn)
            .await?
            .ok_or_else(|| anyhow::anyhow!("no conversation"))?
            .id
    };
    let router = axum::Router::new().nest("/api/v1", wm_server::router(state.clone()));
    let uri = format!("/api/v1/conversations/{conversation}/messages");
    let mut posts = Vec::with_capacity(replies);
    for i in 0..replies {
        let body = serde_json::json!({"type": "TEXT", "text": {"body": format!("Respuesta {i}")}});
        let req = Request::builder()
            .method("POST")
            .uri(&uri)
            .header("authorization", format!("Bearer {}", o.key))
            .header("content-type", "application/json")
            .body(Body::from(body.to_string()))?;
        let t = Instant::now();
        let res = router.clone().oneshot(req).await?.status();
        anyhow::ensure!(res.as_u16() == 201, "reply: {res}");
        posts.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let t = Instant::now();
    let mut sent = 0;
    let mut idle = 0;
    while sent < replies {
        let out = wm_server::services::replies::deliver::run_once(&state).await?;
        anyhow::ensure!(out.failed == 0, "replies failed: {out:?}");
        sent += out.sent;
        if out.sent == 0 {
            idle += 1;
            anyhow::ensure!(idle < 200, "{sent} of {replies} replies sent, then none");
            tokio::time::sleep(Duration::from_millis(10)).await;
        } else {
            idle = 0;
        }
    }
    let reply_secs = t.elapsed().as_secs_f64();
    let calls = fake
        .messenger_sends()
        .iter()
        .filter(|s| s.recipient == PERSON)
        .count();
    anyhow::ensure!(calls == replies, "{calls} calls for {replies} replies");

    // Anchor: the fake's Send API alone, as many POSTs (its per-Page limit reset first).
    fake.reset_messenger_logs();
    let http = reqwest::Client::new();
    let send_url = format!("{}/v24.0/{PAGE}/messages", fake.url());
    let ta = Instant::now();
    let mut anchored = 0;
    for i in 0..replies {
        let body = serde_json::json!({"recipient": {"id": PERSON}, "messaging_type": "RESPONSE",
            "message": {"text": format!("Respuesta {i}")}});
        let res = http
            .post(&send_url)
            .bearer_auth(TOKEN)
            .json(&body)
            .send()
            .await?;
        if res.status().is_success() {
            anchored += 1;
        }
    }
    let anchor = ta.elapsed().as_secs_f64();
    fake.shutdown().await;
    let (p50, p95) = super::p50_p95(posts);
    Ok(format!(
        "Messenger + Instagram: {inbound} inbound webhooks (page and instagram) from {people} people\n\
         {:<44} {:>10.0} /s ({inbound} in {secs:.2} s)\n\
         replies: {replies} text replies to one Messenger person (paced at the Page's 300/s)\n\
         {:<44} {p50:>8.2} {p95:>8.2} ms (p50, p95)\n\
         {:<44} {:>10.0} /s ({sent} in {reply_secs:.2} s)\n\
         {:<44} {:>10.0} /s ({anchored} of {replies} taken: the fake's own per-Page limit)\n",
        "applied by the applier (wm)",
        inbound as f64 / secs,
        "POST …/messages (validate, window, one txn)",
        "sent through the fake by the reply sender",
        replies as f64 / reply_secs,
        "anchor: bare POSTs to the fake's Send API",
        replies as f64 / anchor,
    ))
}
