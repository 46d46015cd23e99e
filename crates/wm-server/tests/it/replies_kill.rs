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

/// A scratch folder, the database both processes share, a client and two ports.
async fn ground() -> (std::path::PathBuf, String, reqwest::Client, u16, u16) {
    let dir = std::env::temp_dir().join(format!("wm-replies-kill-{}", uuid::Uuid::now_v7()));
    std::fs::create_dir_all(&dir).unwrap();
    let (db, _) = process_database("WM_TEST_DATABASE_URL", &dir).await;
    let _ = rustls::crypto::ring::default_provider().install_default();
    (dir, db, reqwest::Client::new(), free_port(), free_port())
}

/// An API key of `user` that reads and answers conversations.
async fn agent_key(http: &reqwest::Client, url: &str, user: &str) -> String {
    let (_, key) = call(
        http,
        Method::POST,
        url.to_owned(),
        ADMIN,
        Some(json!({"name": "k", "userId": user, "scopes": ["conversations:read", "conversations:write"]})),
    )
    .await;
    key["key"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_is_sent_at_most_once_across_a_kill_9() {
    let (dir, db, http, port_a, port_b) = ground().await;
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
    let key = agent_key(&http, &admin("/api-keys"), &user).await;
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
    let c = first_conversation(&http, &base, &key).await;

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
    let b = replica(&db, &fake.url(), port_b, &dir);
    settles_unknown_once(&http, b, &key, &c, &id, || fake.accepted_count()).await;
    fake.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// On the replica that took over from a killed one: the reply `id` of conversation `c` is
/// failed "Outcome unknown" once the reconciliation window passes, and the platform saw one
/// call (`calls`), never a second.
async fn settles_unknown_once(
    http: &reqwest::Client,
    mut b: Replica,
    key: &str,
    c: &str,
    id: &str,
    calls: impl Fn() -> usize,
) {
    let base = b.base();
    healthy(http, &base).await;
    let mut settled = None;
    for _ in 0..100 {
        let m = thread(http, &base, key, c)
            .await
            .into_iter()
            .find(|m| m["id"] == id);
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
    assert_eq!(calls(), 1, "sent at most once");
    b.child.kill().ok();
    b.child.wait().ok();
}

/// The same on Messenger: the Page's Send API takes the reply and never answers; the
/// sender is killed mid-call; the next replica sends nothing again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_messenger_reply_is_sent_at_most_once_across_a_kill_9() {
    use crate::meta_kit::{PAGE, PAGE_TOKEN, PSID};
    use wm_fake_graph::{FakeGraph, FakeGraphOptions, PageSpec, WebhookConfig, Write};

    let (dir, db, http, port_a, port_b) = ground().await;
    let fake = FakeGraph::start(FakeGraphOptions::default())
        .await
        .expect("fake graph");
    fake.register_page(PageSpec {
        page_id: PAGE.into(),
        access_token: PAGE_TOKEN.into(),
        name: "Tienda".into(),
        instagram_id: None,
        human_agent: false,
    });
    // No echo either: nothing but the reconciliation window may settle the reply.
    fake.set_echoes(PAGE, false);
    let mut a = replica(&db, &fake.url(), port_a, &dir);
    let base = a.base();
    healthy(&http, &base).await;
    fake.configure_messenger_webhook(Some(WebhookConfig {
        url: format!("{base}/platform/messenger/webhook"),
        app_secret: WA_SECRET.to_owned(),
        statuses: Default::default(),
        retry: Default::default(),
    }));
    let (org, user) = organisation(&http, &base, "Kill").await;
    let admin = |path: &str| format!("{base}/admin/organizations/{org}{path}");
    let (s, page) = call(
        &http,
        Method::POST,
        admin("/channels/messenger"),
        ADMIN,
        Some(json!({"pageId": PAGE, "name": "Tienda", "accessToken": PAGE_TOKEN})),
    )
    .await;
    assert_eq!(s, 201, "{page}");
    let key = agent_key(&http, &admin("/api-keys"), &user).await;
    fake.messenger_write(Write::text(PAGE, PSID, "Hola"))
        .await
        .unwrap();
    let c = first_conversation(&http, &base, &key).await;

    fake.hang_next_messenger_response(PSID);
    let (s, reply) = call(
        &http,
        Method::POST,
        format!("{base}/conversations/{c}/messages"),
        &key,
        Some(json!({"type": "TEXT", "text": {"body": "Enseguida le ayudo"}})),
    )
    .await;
    assert_eq!(s, 201, "{reply}");
    let id = reply["id"].as_str().unwrap().to_owned();
    let sent = || {
        fake.messenger_sends()
            .iter()
            .filter(|m| m.recipient == PSID)
            .count()
    };
    for _ in 0..100 {
        if sent() == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(sent(), 1, "the call reached the Page's Send API");
    a.child.kill().unwrap(); // SIGKILL
    a.child.wait().unwrap();

    let b = replica(&db, &fake.url(), port_b, &dir);
    settles_unknown_once(&http, b, &key, &c, &id, sent).await;
    fake.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// The first conversation the key sees, once the customer's message has opened it.
async fn first_conversation(http: &reqwest::Client, base: &str, key: &str) -> String {
    for _ in 0..100 {
        let (_, list) = call(
            http,
            Method::GET,
            format!("{base}/conversations"),
            key,
            None,
        )
        .await;
        if let Some(id) = list["data"][0]["id"].as_str() {
            return id.to_owned();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the customer's message opened no conversation");
}
