//! The real server (`wm_server::run`) over TCP with its background workers: a campaign sent
//! through the API completes by itself and its `campaign.finished` webhook arrives, signed;
//! and the real binary refuses an address it cannot listen on, naming it and its setting.

use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::{HeaderMap, Method};
use serde_json::{Value, json};

use crate::support::{IdOf, TestApp};

async fn eventually(mut check: impl AsyncFnMut() -> bool) -> bool {
    // Bounded wait for the workers (200 ms poll), not a timing assertion.
    for _ in 0..150 {
        if check().await {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    false
}

#[tokio::test]
async fn a_campaign_sent_through_the_server_completes_and_its_webhook_arrives() {
    let app = TestApp::with_settings(|s| s.limits.shutdown_delay = std::time::Duration::ZERO).await;
    let org = app.org().await;
    // A receiver for the webhook.
    let got: Arc<Mutex<Vec<(HeaderMap, Bytes)>>> = Arc::default();
    let sink = got.clone();
    let receiver = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |h: HeaderMap, b: Bytes| {
            let sink = sink.clone();
            async move {
                sink.lock().unwrap().push((h, b));
                "ok"
            }
        }),
    );
    let rl = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hook_url = format!("http://{}/hook", rl.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(rl, receiver).await.ok() });
    let secret = org
        .post(
            "/webhooks",
            json!({"url": hook_url, "events": ["campaign.finished"]}),
        )
        .await
        .ok(201)["secret"]
        .as_str()
        .unwrap()
        .to_owned();
    // The server, with its workers.
    let served = app.serve().await;
    let base = served.base.clone();
    let http = reqwest::Client::new();
    let call = |method: Method, path: &str, body: Value| {
        http.request(method, format!("{base}{path}"))
            .bearer_auth(&org.key)
            .json(&body)
            .send()
    };
    let admin = |path: &str, body: Value| {
        http.post(format!("{base}/admin/organizations/{}{path}", org.id))
            .bearer_auth(crate::support::ADMIN)
            .json(&body)
            .send()
    };
    let number: Value = admin(
        "/phone-numbers",
        json!({"numberE164": "+525500000009", "displayName": "Ventas"}),
    )
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    let template: Value = admin(
        "/templates",
        json!({"name": "hola", "category": "MARKETING", "language": "es", "bodyText": "Hola"}),
    )
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    admin("/wallet/top-ups", json!({"amount": 5}))
        .await
        .unwrap();
    for i in 0..3 {
        call(Method::POST, "/contacts", json!({"primaryPhone": format!("+5215510000{i}1"), "consent": {"given": true}, "tags": ["t"]}))
            .await
            .unwrap();
    }
    let c: Value = call(
        Method::POST,
        "/campaigns",
        json!({"name": "Live", "phoneNumberId": number["id"], "templateId": template["id"]}),
    )
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    let id = c.id().to_owned();
    call(
        Method::POST,
        &format!("/campaigns/{id}/recipients"),
        json!({"tag": "t"}),
    )
    .await
    .unwrap();
    let sent = call(Method::POST, &format!("/campaigns/{id}/send"), json!({}))
        .await
        .unwrap();
    assert_eq!(sent.status(), 200);
    let done = eventually(async || {
        let c: Value = call(Method::GET, &format!("/campaigns/{id}"), Value::Null)
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        c["status"] == "COMPLETED" && c["stats"]["delivered"] == 3
    })
    .await;
    let last: Value = call(Method::GET, &format!("/campaigns/{id}"), Value::Null)
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        done,
        "the workers completed the campaign: {} {}",
        last["status"], last["stats"]
    );
    let arrived = eventually(async || !got.lock().unwrap().is_empty()).await;
    assert!(arrived, "campaign.finished was delivered");
    let (headers, body) = got.lock().unwrap()[0].clone();
    let sig = headers["x-wm-signature"].to_str().unwrap();
    let t: i64 = sig
        .split(',')
        .next()
        .unwrap()
        .trim_start_matches("t=")
        .parse()
        .unwrap();
    wm_webhook::verify(&secret, sig, &body, t).unwrap();
    let event: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(event["event"], "campaign.finished");
    assert_eq!(event["data"]["campaignId"], id.as_str());
    assert_eq!(event["data"]["sent"], 3);
    served.shut_down().await;
}

/// Replicas starting together on an empty database all start: the migrations run once,
/// under an advisory lock on PostgreSQL.
#[tokio::test]
async fn replicas_migrating_at_once_all_succeed() {
    let Ok(url) = std::env::var("WM_TEST_DATABASE_URL") else {
        return; // SQLite: one process owns the file; nothing to race
    };
    if url.is_empty() {
        return;
    }
    let pg = crate::pg::PgDatabase::empty(&url).await;
    let target = pg.url.clone();
    let mut replicas = Vec::new();
    for _ in 0..3 {
        let target = target.clone();
        replicas.push(tokio::spawn(async move {
            let db = wm_server::db::Db::connect(&target).await?;
            db.migrate().await
        }));
    }
    for r in replicas {
        r.await.unwrap().expect("every replica migrates");
    }
}

/// A second server on the same host: each listener that cannot bind names its address and
/// the setting that moves it.
#[tokio::test]
async fn a_listener_that_cannot_bind_names_its_address_and_setting() {
    use crate::replicas_harness::{free_port, run_to_exit};
    let dir = std::env::temp_dir().join(format!("wm-bind-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let taken_addr = taken.local_addr().unwrap().to_string();
    let free = format!("127.0.0.1:{}", free_port());
    for (listen, metrics, setting) in [
        (taken_addr.as_str(), "", "WM_LISTEN"),
        (free.as_str(), taken_addr.as_str(), "WM_METRICS_LISTEN"),
    ] {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_wm-server"));
        command
            .arg("serve")
            .env(
                "WM_DATABASE_URL",
                format!("sqlite://{}?mode=rwc", dir.join("t.db").display()),
            )
            .env("WM_LISTEN", listen)
            .env("WM_METRICS_LISTEN", metrics)
            .env("WM_ADMIN_TOKEN", "bind-admin")
            .env("RUST_LOG", "warn");
        let (status, stderr) = run_to_exit(command).await;
        assert!(!status.success(), "{stderr}");
        assert!(
            stderr.contains(&format!("cannot listen on {taken_addr}")),
            "{stderr}"
        );
        assert!(stderr.contains(setting), "{setting}: {stderr}");
        assert!(stderr.contains("in use"), "{stderr}");
    }
    drop(taken);
    let _ = std::fs::remove_dir_all(&dir);
}
