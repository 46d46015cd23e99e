//! `kill -9` of a real `wm-server` right after a keyed request committed and before it
//! answered (the process holds its answers back with `WM_TEST_HOLD_KEYED_ANSWERS`): the
//! retry with the same key on the process started after it finds what the first attempt
//! did instead of doing it again. A reply, whose answer commits with it, is answered again
//! as it was and reaches the platform once; an operator top-up, whose answer is not kept
//! with it, is refused as completed (`IDEMPOTENCY_KEY_ANSWER_LOST`) and credited once. On
//! PostgreSQL when `WM_TEST_DATABASE_URL` is set, else on a SQLite file.

use std::path::Path;
use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};
use wm_fake_graph::{InboundKind, InboundMessage, NumberSpec};

use crate::replicas_harness::{
    ADMIN, Replica, call, free_port, healthy, organisation, platform, process_database,
};
use crate::support::WA_SECRET;
use crate::whatsapp_kit::{NUMBER, PNID, TOKEN, WABA};

const PERSON: &str = "5215512000002";

fn replica(db: &str, graph: &str, port: u16, dir: &Path, hold: bool) -> Replica {
    let mut env = vec![("WM_MEDIA_DIR", dir.join("media").display().to_string())];
    if hold {
        env.push(("WM_TEST_HOLD_KEYED_ANSWERS", "60s".into()));
    }
    Replica::start(
        Path::new(env!("CARGO_BIN_EXE_wm-server")),
        db,
        graph,
        WA_SECRET,
        port,
        dir.join(format!("replica-{port}.log")),
        &env,
    )
}

/// A keyed POST; (status, replayed, body), status 0 when no answer came (the connection
/// dropped).
async fn keyed(
    http: &reqwest::Client,
    url: String,
    token: &str,
    key: &str,
    body: Value,
) -> (u16, bool, Value) {
    let sent = http
        .post(url)
        .bearer_auth(token)
        .header("idempotency-key", key)
        .json(&body)
        .send()
        .await;
    let Ok(r) = sent else {
        return (0, false, Value::Null);
    };
    let replayed = r.headers().get("idempotent-replayed").is_some();
    (
        r.status().as_u16(),
        replayed,
        r.json().await.unwrap_or(Value::Null),
    )
}

/// Polls `read` until it gives something.
async fn eventually<T, F, Fut>(what: &str, mut read: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    for _ in 0..200 {
        if let Some(v) = read().await {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{what} never happened");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_after_a_kill_between_commit_and_answer_finds_the_first_attempt() {
    let dir = std::env::temp_dir().join(format!("wm-idem-kill-{}", uuid::Uuid::now_v7()));
    std::fs::create_dir_all(&dir).unwrap();
    let (db, _) = process_database("WM_TEST_DATABASE_URL", &dir).await;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::new();
    let (port_a, port_b) = (free_port(), free_port());
    let lb = crate::replicas_harness::balancer(http.clone(), vec![port_a, port_b]).await;
    let fake = platform(&lb, WA_SECRET, WABA).await;
    fake.register_number(NumberSpec {
        phone_number_id: PNID.into(),
        waba_id: WABA.into(),
        display_phone_number: NUMBER.trim_start_matches('+').into(),
        access_token: TOKEN.into(),
    });
    let a = replica(&db, &fake.url(), port_a, &dir, true);
    let base = a.base();
    healthy(&http, &base).await;
    let (org, user) = organisation(&http, &base, "Kill").await;
    let admin = |base: &str, path: &str| format!("{base}/admin/organizations/{org}{path}");
    let (s, _) = call(
        &http,
        Method::POST,
        admin(&base, "/phone-numbers"),
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
        admin(&base, "/api-keys"),
        ADMIN,
        Some(json!({"name": "k", "userId": user,
                    "scopes": ["conversations:read", "conversations:write", "campaigns:read"]})),
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
    let c = eventually("the customer's conversation", || async {
        let (_, list) = call(
            &http,
            Method::GET,
            format!("{base}/conversations"),
            &key,
            None,
        )
        .await;
        list["data"][0]["id"].as_str().map(str::to_owned)
    })
    .await;

    // Both requests commit, then hold their answers; the process is killed meanwhile.
    let reply = tokio::spawn({
        let (http, url, key) = (
            http.clone(),
            format!("{base}/conversations/{c}/messages"),
            key.clone(),
        );
        async move {
            let body = json!({"type": "TEXT", "text": {"body": "Enseguida le ayudo"}});
            keyed(&http, url, &key, "reply-1", body).await
        }
    });
    let top_up = tokio::spawn({
        let (http, url) = (http.clone(), admin(&base, "/wallet/top-ups"));
        async move { keyed(&http, url, ADMIN, "top-up-1", json!({"amount": 25.0})).await }
    });
    let sent = eventually("the reply committed", || async {
        let (_, page) = call(
            &http,
            Method::GET,
            format!("{base}/conversations/{c}/messages"),
            &key,
            None,
        )
        .await;
        page["data"]
            .as_array()?
            .iter()
            .find(|m| m["direction"] == "OUTBOUND")
            .map(|m| m["id"].as_str().unwrap_or_default().to_owned())
    })
    .await;
    eventually("the top-up committed", || async {
        let (_, w) = call(&http, Method::GET, format!("{base}/wallet"), &key, None).await;
        (w["balance"].as_f64() == Some(25.0)).then_some(())
    })
    .await;
    let mut a = a;
    a.child.kill().unwrap(); // SIGKILL, before either answer left
    a.child.wait().unwrap();
    let (reply, top_up) = (reply.await.unwrap(), top_up.await.unwrap());
    assert_eq!(
        reply.0, 0,
        "the reply's first answer never arrived: {reply:?}"
    );
    assert_eq!(
        top_up.0, 0,
        "the top-up's first answer never arrived: {top_up:?}"
    );

    // Another process on the same database: each retry finds what the first attempt did.
    let b = replica(&db, &fake.url(), port_b, &dir, false);
    let base = b.base();
    healthy(&http, &base).await;
    let body = json!({"type": "TEXT", "text": {"body": "Enseguida le ayudo"}});
    let (status, replayed, again) = keyed(
        &http,
        format!("{base}/conversations/{c}/messages"),
        &key,
        "reply-1",
        body,
    )
    .await;
    assert_eq!(status, 201, "{again}");
    assert!(replayed, "the first attempt's answer, again");
    assert_eq!(again["id"], sent.as_str(), "{again}");
    // A request that committed holds its key a few seconds to answer (in use meanwhile),
    // then the key says it completed.
    let (status, lost) = eventually("the top-up's key released", || async {
        let (status, _, lost) = keyed(
            &http,
            admin(&base, "/wallet/top-ups"),
            ADMIN,
            "top-up-1",
            json!({"amount": 25.0}),
        )
        .await;
        (lost["code"] != "IDEMPOTENCY_KEY_IN_USE").then_some((status, lost))
    })
    .await;
    assert_eq!(status, 409, "{lost}");
    assert_eq!(lost["code"], "IDEMPOTENCY_KEY_ANSWER_LOST", "{lost}");
    let (_, w) = call(&http, Method::GET, format!("{base}/wallet"), &key, None).await;
    assert_eq!(w["balance"], 25.0, "credited once");

    // One reply in the thread, and one call at the platform for it.
    eventually("the reply reached the platform", || async {
        (fake.accepted_count() >= 1).then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(fake.accepted_count(), 1, "sent once");
    let (_, page) = call(
        &http,
        Method::GET,
        format!("{base}/conversations/{c}/messages"),
        &key,
        None,
    )
    .await;
    let outbound = page["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["direction"] == "OUTBOUND")
        .count();
    assert_eq!(outbound, 1, "{page}");
    drop(b);
    fake.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}
