//! `kill -9` of a real `wm-server` process right after it accepted a reply and made the
//! platform call: the reply is sent at most once. The replica started after it does not
//! send it again; the reconciliation window fails it "outcome unknown" and refunds it. On
//! PostgreSQL when `WM_TEST_DATABASE_URL` is set, else on a SQLite file (one process at a
//! time).

use std::path::Path;
use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};
use wm_fake_graph::{InboundKind, InboundMessage, NumberSpec};

use crate::replicas_harness::{
    ADMIN, Replica, balancer, call, free_port, healthy, organisation, platform, process_database,
};
use crate::support::WA_SECRET;
use crate::whatsapp_kit::{NUMBER, PNID, TOKEN, WABA};

const PERSON: &str = "5215512000001";

fn replica(db: &str, graph: &str, port: u16, dir: &Path) -> Replica {
    Replica::start(
        Path::new(env!("CARGO_BIN_EXE_wm-server")),
        db,
        graph,
        WA_SECRET,
        port,
        dir.join(format!("replica-{port}.log")),
        &[
            ("WM_WHATSAPP_RECONCILE_AFTER", "3s".into()),
            ("WM_MEDIA_DIR", dir.join("media").display().to_string()),
        ],
    )
}

async fn thread(http: &reqwest::Client, base: &str, key: &str, c: &str) -> Vec<Value> {
    let (_, page) = call(
        http,
        Method::GET,
        format!("{base}/conversations/{c}/messages"),
        key,
        None,
    )
    .await;
    page["data"].as_array().cloned().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_is_sent_at_most_once_across_a_kill_9() {
    let dir = std::env::temp_dir().join(format!("wm-replies-kill-{}", uuid::Uuid::now_v7()));
    std::fs::create_dir_all(&dir).unwrap();
    let (db, _) = process_database("WM_TEST_DATABASE_URL", &dir).await;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::new();
    let (port_a, port_b) = (free_port(), free_port());
    let lb = balancer(http.clone(), vec![port_a, port_b]).await;
    let fake = platform(&lb, WA_SECRET, WABA).await;
    fake.register_number(NumberSpec {
        phone_number_id: PNID.into(),
        waba_id: WABA.into(),
        display_phone_number: NUMBER.trim_start_matches('+').into(),
        access_token: TOKEN.into(),
    });
    let mut a = replica(&db, &fake.url(), port_a, &dir);
    let base = a.base();
    healthy(&http, &base).await;
    let (org, user) = organisation(&http, &base, "Kill").await;
    let admin = |path: &str| format!("{base}/admin/organizations/{org}{path}");
    let (s, _) = call(
        &http,
        Method::POST,
        admin("/phone-numbers"),
        ADMIN,
        Some(
            json!({"numberE164": NUMBER, "displayName": "Ventas", "platformPhoneNumberId": PNID,
                    "wabaId": WABA, "accessToken": TOKEN}),
        ),
    )
    .await;
    assert_eq!(s, 201);
    let (_, key) = call(
        &http,
        Method::POST,
        admin("/api-keys"),
        ADMIN,
        Some(json!({"name": "k", "userId": user, "scopes": ["conversations:read", "conversations:write"]})),
    )
    .await;
    let key = key["key"].as_str().unwrap().to_owned();
    fake.post_inbound(InboundMessage {
        phone_number_id: PNID.into(),
        from: PERSON.into(),
        profile_name: Some("Ana".into()),
        kind: InboundKind::Text {
            body: "Hola".into(),
        },
        context: None,
    })
    .await
    .unwrap();
    let mut conversation = None;
    for _ in 0..100 {
        let (_, list) = call(
            &http,
            Method::GET,
            format!("{base}/conversations"),
            &key,
            None,
        )
        .await;
        if let Some(id) = list["data"][0]["id"].as_str() {
            conversation = Some(id.to_owned());
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let c = conversation.expect("the customer's message opened a conversation");

    // The platform takes the reply, never answers and posts no status for it; the sender is
    // killed mid-call.
    fake.configure_webhook(Some(wm_fake_graph::WebhookConfig {
        url: format!("{lb}/platform"),
        app_secret: WA_SECRET.to_owned(),
        statuses: wm_fake_graph::StatusOptions {
            enabled: false,
            ..Default::default()
        },
        retry: Default::default(),
    }));
    fake.hang_next_response(PERSON);
    let (s, reply) = call(
        &http,
        Method::POST,
        format!("{base}/conversations/{c}/messages"),
        &key,
        Some(json!({"type": "text", "text": {"body": "Enseguida le ayudo"}})),
    )
    .await;
    assert_eq!(s, 201, "{reply}");
    let id = reply["id"].as_str().unwrap().to_owned();
    for _ in 0..100 {
        if fake.accepted_count() == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(fake.accepted_count(), 1, "the call reached the platform");
    a.child.kill().unwrap(); // SIGKILL
    a.child.wait().unwrap();

    // Another process takes over the same database: it never sends the reply again, and
    // fails it once the reconciliation window (3 s here) has passed.
    let mut b = replica(&db, &fake.url(), port_b, &dir);
    let base = b.base();
    healthy(&http, &base).await;
    let mut settled = None;
    for _ in 0..100 {
        let m = thread(&http, &base, &key, &c)
            .await
            .into_iter()
            .find(|m| m["id"] == id.as_str());
        if m.as_ref().is_some_and(|m| m["status"] != "PENDING") {
            settled = m;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let m = settled.expect("the reply was settled");
    assert_eq!(m["status"], "FAILED", "{m}");
    let why = m["errorMessage"].as_str().unwrap_or_default();
    assert!(why.starts_with("Outcome unknown"), "{m}");
    assert_eq!(fake.accepted_count(), 1, "sent at most once");
    b.child.kill().ok();
    b.child.wait().ok();
    fake.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}
