//! Webhook deliveries end to end, POSTed to a real receiver on loopback that verifies every
//! signature with wm-webhook. Management is in `webhooks_management`, refused targets in
//! `webhooks_ssrf`.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use chrono::Duration;
use serde_json::{Value, json};
use wm_core::time::Clock;

use crate::support::{IdOf, Org, TestApp};

/// One request the receiver got, with the (test) time it arrived.
#[derive(Debug, Clone)]
pub(crate) struct Received {
    headers: HeaderMap,
    body: Bytes,
    at_secs: i64,
}

#[derive(Clone)]
struct Inbox {
    clock: Arc<wm_core::time::ManualClock>,
    got: Arc<Mutex<Vec<Received>>>,
    /// Statuses to answer, in order; 200 once empty.
    plan: Arc<Mutex<VecDeque<u16>>>,
}

pub(crate) struct Receiver {
    pub(crate) url: String,
    inbox: Inbox,
}

async fn hook(State(inbox): State<Inbox>, headers: HeaderMap, body: Bytes) -> (StatusCode, String) {
    let at_secs = inbox.clock.now().timestamp();
    inbox.got.lock().unwrap().push(Received {
        headers,
        body,
        at_secs,
    });
    let status = inbox.plan.lock().unwrap().pop_front().unwrap_or(200);
    let text = if status >= 300 {
        "e".repeat(2000)
    } else {
        "ok".to_owned()
    };
    (StatusCode::from_u16(status).unwrap(), text)
}

impl Receiver {
    pub(crate) async fn start(app: &TestApp) -> Receiver {
        let inbox = Inbox {
            clock: app.clock.clone(),
            got: Arc::default(),
            plan: Arc::default(),
        };
        let app = axum::Router::new()
            .route("/hook", post(hook))
            .with_state(inbox.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.ok() });
        Receiver { url, inbox }
    }

    fn answer(&self, statuses: &[u16]) {
        self.inbox.plan.lock().unwrap().extend(statuses);
    }

    pub(crate) fn got(&self) -> Vec<Received> {
        self.inbox.got.lock().unwrap().clone()
    }

    /// Every delivery so far, checked as a receiver would when it arrived: signature (with
    /// the 300 s tolerance), headers, body shape.
    fn verified(&self, secret: &str) -> Vec<Value> {
        self.got()
            .iter()
            .map(|r| {
                let h = |n: &str| r.headers.get(n).map(|v| v.to_str().unwrap().to_owned());
                let sig = h("x-wm-signature").expect("signature header");
                wm_webhook::verify(secret, &sig, &r.body, r.at_secs).expect("signature verifies");
                assert_eq!(h("content-type").as_deref(), Some("application/json"));
                assert_eq!(h("user-agent").as_deref(), Some("WM-Webhooks/1.0"));
                let body: Value = serde_json::from_slice(&r.body).unwrap();
                assert_eq!(
                    h("x-wm-delivery").as_deref(),
                    body["id"].as_str(),
                    "X-WM-Delivery equals body id"
                );
                assert_eq!(h("x-wm-event").as_deref(), body["event"].as_str());
                let keys: Vec<&str> = body
                    .as_object()
                    .unwrap()
                    .keys()
                    .map(String::as_str)
                    .collect();
                assert_eq!(keys.len(), 4, "{keys:?}");
                for k in ["id", "event", "createdAt", "data"] {
                    assert!(body.get(k).is_some(), "{k} missing");
                }
                capture(secret, r);
                body
            })
            .collect()
    }
}

/// With `WM_WEBHOOK_CAPTURE_DIR` set, keeps each delivery for CI's check with Stripe's own
/// verifier.
fn capture(secret: &str, r: &Received) {
    let Ok(dir) = std::env::var("WM_WEBHOOK_CAPTURE_DIR") else {
        return;
    };
    let headers: serde_json::Map<String, Value> = r
        .headers
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_owned(),
                Value::from(v.to_str().unwrap_or_default()),
            )
        })
        .collect();
    let id = r
        .headers
        .get("x-wm-delivery")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("unknown");
    let file = std::path::Path::new(&dir).join(format!("{id}.json"));
    let doc =
        json!({"secret": secret, "headers": headers, "body": String::from_utf8_lossy(&r.body)});
    std::fs::create_dir_all(&dir).ok();
    std::fs::write(file, doc.to_string()).expect("capture delivery");
}

pub(crate) async fn subscribe(org: &Org<'_>, url: &str, events: &[&str]) -> (String, String) {
    let w = org
        .post(
            "/webhooks",
            json!({"url": url, "events": events, "description": "test"}),
        )
        .await
        .ok(201);
    (w.id().to_owned(), w["secret"].as_str().unwrap().to_owned())
}

const CONTACT_EVENTS: [&str; 3] = [
    "contact.created",
    "contact.updated",
    "contact.stage_changed",
];

#[tokio::test]
async fn each_active_kind_arrives_signed_with_its_data() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let rx = Receiver::start(&app).await;
    let (_, secret) = subscribe(
        &org,
        &rx.url,
        &[&CONTACT_EVENTS[..], &["campaign.finished"]].concat(),
    )
    .await;
    let customer = org.stage("Customer").await;
    let c = org.contact(json!({"fullName": "Ana", "primaryPhone": "+5215500000031", "primaryEmail": "ana@example.com"})).await;
    let id = c.id();
    org.patch(
        &format!("/contacts/{id}"),
        json!({"lifecycleStageId": customer}),
    )
    .await
    .ok(200);
    // campaign.finished is emitted by the campaign engine; the delivery side is the same.
    let data = wm_types::events::CampaignFinishedData {
        organization_id: org.id.parse().unwrap(),
        campaign_id: uuid::Uuid::now_v7(),
        name: "Spring".into(),
        status: "COMPLETED".into(),
        sent: 10,
        failed: 1,
    };
    let org_id = org.id.parse().unwrap();
    wm_server::db::outbox::push(
        &app.state.db.conn,
        org_id,
        wm_types::events::EventKind::CampaignFinished,
        &data,
        app.state.now_ms(),
    )
    .await
    .unwrap();

    let out = app.deliver().await;
    assert_eq!((out.fanned_out, out.attempted, out.delivered), (4, 4, 4));
    let mut bodies = rx.verified(&secret);
    bodies.sort_by_key(|b| b["event"].as_str().unwrap().to_owned());
    let kinds: Vec<&str> = bodies
        .iter()
        .map(|b| b["event"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        vec![
            "campaign.finished",
            "contact.created",
            "contact.stage_changed",
            "contact.updated"
        ]
    );
    assert_eq!(bodies[0]["data"]["name"], "Spring");
    assert_eq!(bodies[0]["data"]["sent"], 10);
    assert_eq!(
        bodies[1]["data"],
        json!({"organizationId": org.id, "contactId": id, "fullName": "Ana", "primaryPhone": "+5215500000031",
               "primaryEmail": "ana@example.com", "lifecycleStage": null})
    );
    assert_eq!(bodies[2]["data"]["previousStage"], json!(null));
    assert_eq!(bodies[2]["data"]["lifecycleStage"], "Customer");
    assert_eq!(
        bodies[3]["data"]["changedFields"],
        json!(["lifecycleStageId"])
    );
    // Delivered once: a second pass sends nothing.
    assert_eq!(app.deliver().await.attempted, 0);
    assert_eq!(rx.got().len(), 4);
}

#[tokio::test]
async fn only_subscribed_kinds_and_only_the_own_organisation() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let other = app.org().await;
    let rx = Receiver::start(&app).await;
    let rx_other = Receiver::start(&app).await;
    let (_, secret) = subscribe(&org, &rx.url, &["contact.stage_changed", "bot.handoff"]).await;
    subscribe(&other, &rx_other.url, &CONTACT_EVENTS).await;
    let c = org.contact(json!({"fullName": "A"})).await;
    let id = c.id();
    org.patch(
        &format!("/contacts/{id}"),
        json!({"lifecycleStageId": org.stage("Lead").await}),
    )
    .await
    .ok(200);
    app.deliver().await;
    let got = rx.verified(&secret);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0]["event"], "contact.stage_changed");
    assert!(
        rx_other.got().is_empty(),
        "another organisation's events never arrive"
    );
}

#[tokio::test]
async fn a_webhook_receives_the_events_that_occur_while_it_is_active_and_subscribed() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let rx = Receiver::start(&app).await;
    // Before any webhook: nothing is kept for one created later, even before a pass runs.
    org.contact(json!({"fullName": "Before"})).await;
    let (hook, secret) = subscribe(&org, &rx.url, &["contact.created"]).await;
    let during = org.contact(json!({"fullName": "During"})).await;
    // A kind it does not take, then a contact made while it is paused.
    org.patch(
        &format!("/contacts/{}", during.id()),
        json!({"company": "Acme"}),
    )
    .await
    .ok(200);
    org.patch(&format!("/webhooks/{hook}"), json!({"status": "PAUSED"}))
        .await
        .ok(200);
    org.contact(json!({"fullName": "Paused"})).await;
    org.patch(&format!("/webhooks/{hook}"), json!({"status": "ACTIVE"}))
        .await
        .ok(200);
    org.contact(json!({"fullName": "After"})).await;

    let out = app.deliver().await;
    assert_eq!((out.attempted, out.delivered), (2, 2));
    let mut names: Vec<String> = rx
        .verified(&secret)
        .iter()
        .map(|b| {
            assert_eq!(b["event"], "contact.created");
            b["data"]["fullName"].as_str().unwrap().to_owned()
        })
        .collect();
    names.sort();
    assert_eq!(names, ["After", "During"]);
}

#[tokio::test]
async fn a_failing_receiver_gets_the_retries_on_schedule() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let rx = Receiver::start(&app).await;
    let (hook, secret) = subscribe(&org, &rx.url, &["contact.created"]).await;
    rx.answer(&[500, 503]);
    org.contact(json!({"fullName": "Retry"})).await;
    assert_eq!(app.deliver().await.delivered, 0);
    assert_eq!(app.deliver().await.attempted, 0, "the retry waits a minute");
    app.clock.advance(Duration::seconds(61));
    assert_eq!(app.deliver().await.delivered, 0);
    app.clock.advance(Duration::minutes(4));
    assert_eq!(
        app.deliver().await.attempted,
        0,
        "the second retry waits five minutes"
    );
    app.clock.advance(Duration::seconds(61));
    assert_eq!(app.deliver().await.delivered, 1);
    let bodies = rx.verified(&secret);
    assert_eq!(bodies.len(), 3);
    assert!(
        bodies.iter().all(|b| b["id"] == bodies[0]["id"]),
        "a retry keeps the delivery id"
    );
    let log = org
        .get(&format!("/webhooks/{hook}/deliveries"))
        .await
        .ok(200);
    let d = &log["data"][0];
    assert_eq!(d["status"], "DELIVERED");
    assert_eq!(d["attempts"], 3);
    assert_eq!(d["id"], bodies[0]["id"]);
    let codes: Vec<u64> = d["attemptLog"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["statusCode"].as_u64().unwrap())
        .collect();
    assert_eq!(codes, vec![500, 503, 200]);
    assert_eq!(
        d["attemptLog"][0]["responseBody"].as_str().unwrap().len(),
        1024,
        "first 1 KiB kept"
    );
    assert_eq!(d["attemptLog"][2]["responseBody"], "ok");
    assert!(d["attemptLog"][0]["durationMs"].is_u64());
    let w = org.get(&format!("/webhooks/{hook}")).await.ok(200);
    assert_eq!(w["consecutiveFailures"], 0);
}

#[tokio::test]
async fn ten_exhausted_deliveries_pause_the_webhook_and_a_success_resets() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let rx = Receiver::start(&app).await;
    let (hook, _) = subscribe(&org, &rx.url, &["contact.created"]).await;
    rx.answer(&[500; 60]);
    for i in 0..10 {
        org.contact(json!({"fullName": format!("F{i}")})).await;
    }
    for _ in 0..6 {
        app.deliver().await;
        app.clock.advance(Duration::hours(13));
    }
    assert_eq!(rx.got().len(), 60, "1 attempt + 5 retries each");
    let w = org.get(&format!("/webhooks/{hook}")).await.ok(200);
    assert_eq!(w["status"], "PAUSED");
    assert_eq!(w["consecutiveFailures"], 10);
    assert!(w["pausedAt"].is_string());
    let log = org
        .get(&format!("/webhooks/{hook}/deliveries?pageSize=100"))
        .await
        .ok(200);
    assert_eq!(log["meta"]["total"], 10);
    assert!(
        log["data"]
            .as_array()
            .unwrap()
            .iter()
            .all(|d| d["status"] == "FAILED" && d["attempts"] == 6)
    );

    // Paused: new events are not delivered to it.
    org.contact(json!({"fullName": "While paused"})).await;
    assert_eq!(app.deliver().await.attempted, 0);

    // Reactivated, the next exhausted delivery would pause it again; a success resets it.
    let w = org
        .patch(&format!("/webhooks/{hook}"), json!({"status": "ACTIVE"}))
        .await
        .ok(200);
    assert_eq!(w["status"], "ACTIVE");
    assert_eq!(w["pausedAt"], json!(null));
    org.contact(json!({"fullName": "After"})).await;
    assert_eq!(app.deliver().await.delivered, 1);
    assert_eq!(
        org.get(&format!("/webhooks/{hook}")).await.ok(200)["consecutiveFailures"],
        0
    );
}

#[tokio::test]
async fn a_restart_during_a_retry_loses_nothing_and_repeats_nothing() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let rx = Receiver::start(&app).await;
    let (_, secret) = subscribe(&org, &rx.url, &["contact.created"]).await;
    rx.answer(&[500]);
    org.contact(json!({"fullName": "Crash"})).await;
    app.deliver().await; // first attempt fails, retry due in a minute
    app.clock.advance(Duration::seconds(61));
    // A worker claims the retry and dies before answering (its lease stays).
    let dying = wm_server::worker::webhooks::WebhookWorker::new(app.state.clone()).unwrap();
    let claimed = dying.claim().await.unwrap();
    assert_eq!(claimed.len(), 1);
    drop((dying, claimed));
    // The restarted server leaves the leased delivery alone until the lease expires...
    assert_eq!(app.deliver().await.attempted, 0);
    app.clock.advance(Duration::seconds(61));
    // ...then delivers it exactly once.
    assert_eq!(app.deliver().await.delivered, 1);
    app.clock.advance(Duration::hours(24));
    assert_eq!(app.deliver().await.attempted, 0);
    assert_eq!(rx.verified(&secret).len(), 2);
}

#[tokio::test]
async fn manual_retry_and_seven_day_retention() {
    let app = TestApp::with_settings(|s| {
        s.webhook_retry_schedule = vec![std::time::Duration::from_secs(30)]
    })
    .await;
    let org = app.org().await;
    let rx = Receiver::start(&app).await;
    let (hook, _) = subscribe(&org, &rx.url, &["contact.created"]).await;
    rx.answer(&[500, 500]);
    org.contact(json!({"fullName": "M"})).await;
    app.deliver().await;
    app.clock.advance(Duration::seconds(31));
    app.deliver().await;
    let log = org
        .get(&format!("/webhooks/{hook}/deliveries"))
        .await
        .ok(200);
    let d = log["data"][0].clone();
    assert_eq!(
        (d["status"].as_str(), d["attempts"].as_u64()),
        (Some("FAILED"), Some(2))
    );
    let did = d.id();
    let r = org
        .post(
            &format!("/webhooks/{hook}/deliveries/{did}/retry"),
            json!({}),
        )
        .await
        .ok(202);
    assert_eq!(r["status"], "PENDING");
    assert_eq!(app.deliver().await.delivered, 1);
    let d = org
        .get(&format!("/webhooks/{hook}/deliveries"))
        .await
        .ok(200)["data"][0]
        .clone();
    assert_eq!(
        (d["status"].as_str(), d["attempts"].as_u64()),
        (Some("DELIVERED"), Some(3))
    );
    org.post(
        &format!("/webhooks/{hook}/deliveries/{did}/retry"),
        json!({}),
    )
    .await
    .assert_error(400, None);
    // Kept 7 days.
    app.clock.advance(Duration::days(6));
    let worker = wm_server::worker::webhooks::WebhookWorker::new(app.state.clone()).unwrap();
    assert_eq!(worker.purge().await.unwrap(), 0);
    app.clock.advance(Duration::days(2));
    assert_eq!(worker.purge().await.unwrap(), 1);
    assert_eq!(
        org.get(&format!("/webhooks/{hook}/deliveries"))
            .await
            .ok(200)["meta"]["total"],
        0
    );
}
