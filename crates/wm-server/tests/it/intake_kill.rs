//! `kill -9` of a real `wm-server` process in the middle of applying a batch of a burst of
//! status webhooks: nothing it answered 200 is lost and nothing is applied twice. The replica
//! started after it applies what was left once the dead one's claims lapse; every receipt
//! lands once (statuses, refunds, statuses kept for messages not recorded yet, the
//! `message.sent` announcements). On PostgreSQL when `WM_TEST_DATABASE_URL` is set, else on
//! a SQLite file.

use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, Instant};

use futures::StreamExt;
use reqwest::Method;
use sea_orm::{ColumnTrait, Database, EntityTrait, PaginatorTrait, QueryFilter};
use serde_json::{Value, json};
use wm_fake_graph::{NumberSpec, StatusOptions};
use wm_server::db::entities::{ledger_entry, outbox_event, pending_status, platform_event};

use crate::replicas_harness::{
    ADMIN, Replica, call, free_port, healthy, organisation, platform_with, process_database,
};
use crate::support::WA_SECRET;
use crate::whatsapp_kit::{NUMBER, PNID, TOKEN, WABA};

/// Messages sent; of them, the first `FAILED` fail at the platform and the rest are
/// delivered and read. `UNKNOWN` statuses name messages wm never recorded.
const SENT: usize = 200;
const FAILED: usize = 20;
const UNKNOWN: usize = 200;

fn replica(db: &str, graph: &str, port: u16, dir: &Path) -> Replica {
    Replica::start(
        Path::new(env!("CARGO_BIN_EXE_wm-server")),
        db,
        graph,
        WA_SECRET,
        port,
        dir.join(format!("replica-{port}.log")),
        &[("WM_PROVIDER_MPS", "0".into())],
    )
}

async fn unapplied(db: &sea_orm::DatabaseConnection) -> u64 {
    platform_event::Entity::find()
        .filter(platform_event::Column::ProcessedAt.is_null())
        .count(db)
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kill_9_mid_burst_loses_and_doubles_no_status() {
    let dir = std::env::temp_dir().join(format!("wm-intake-kill-{}", uuid::Uuid::now_v7()));
    std::fs::create_dir_all(&dir).unwrap();
    let (db, _) = process_database("WM_TEST_DATABASE_URL", &dir).await;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::new();
    let (port_a, port_b) = (free_port(), free_port());
    // The platform posts no status by itself: the burst below is posted by the test.
    let webhook = format!("http://127.0.0.1:{port_a}/api/v1/platform/whatsapp/webhook");
    let quiet = StatusOptions {
        enabled: false,
        ..Default::default()
    };
    let fake = platform_with(&webhook, WA_SECRET, WABA, quiet).await;
    fake.register_number(NumberSpec {
        phone_number_id: PNID.into(),
        waba_id: WABA.into(),
        display_phone_number: NUMBER.trim_start_matches('+').into(),
        access_token: TOKEN.into(),
    });
    let mut a = replica(&db, &fake.url(), port_a, &dir);
    let base = a.base();
    healthy(&http, &base).await;

    // A campaign of SENT messages, sent.
    let (org, user) = organisation(&http, &base, "Kill").await;
    let admin = |path: &str| format!("{base}/admin/organizations/{org}{path}");
    let number = json!({"numberE164": NUMBER, "displayName": "Ventas", "platformPhoneNumberId": PNID,
                        "wabaId": WABA, "accessToken": TOKEN});
    let (s, number) = call(
        &http,
        Method::POST,
        admin("/phone-numbers"),
        ADMIN,
        Some(number),
    )
    .await;
    assert_eq!(s, 201, "{number}");
    let scopes = [
        "contacts:write",
        "campaigns:read",
        "campaigns:write",
        "webhooks:write",
    ];
    let (_, key) = call(
        &http,
        Method::POST,
        admin("/api-keys"),
        ADMIN,
        Some(json!({"name": "k", "userId": user, "scopes": scopes})),
    )
    .await;
    let key = key["key"].as_str().unwrap().to_owned();
    call(&http, Method::POST, admin("/templates/sync"), ADMIN, None).await;
    call(
        &http,
        Method::POST,
        admin("/wallet/top-ups"),
        ADMIN,
        Some(json!({"amount": 1000.0})),
    )
    .await;
    let (_, templates) = call(&http, Method::GET, format!("{base}/templates"), &key, None).await;
    let template = templates["data"][0]["id"].as_str().unwrap().to_owned();
    let (s, _) = call(
        &http,
        Method::POST,
        format!("{base}/webhooks"),
        &key,
        Some(json!({"url": "https://hooks.example.com/wm", "events": ["message.sent"]})),
    )
    .await;
    assert_eq!(s, 201);
    let created = futures::stream::iter(0..SENT)
        .map(|i| {
            let body = json!({"fullName": format!("Ana {i}"), "primaryPhone": format!("+52155130{i:05}"),
                              "consent": {"given": true}, "tags": ["kill"]});
            let (http, url, key) = (http.clone(), format!("{base}/contacts"), key.clone());
            async move { call(&http, Method::POST, url, &key, Some(body)).await.0 }
        })
        .buffer_unordered(8)
        .filter(|s| futures::future::ready(*s == 201))
        .count()
        .await;
    assert_eq!(created, SENT);
    let (_, c) = call(
        &http,
        Method::POST,
        format!("{base}/campaigns"),
        &key,
        Some(
            json!({"name": "Kill", "phoneNumberId": number["id"], "templateId": template,
                    "variables": {"1": "{{firstName}}"}}),
        ),
    )
    .await;
    let campaign = c["id"].as_str().unwrap().to_owned();
    call(
        &http,
        Method::POST,
        format!("{base}/campaigns/{campaign}/recipients"),
        &key,
        Some(json!({"tag": "kill"})),
    )
    .await;
    let (s, sent) = call(
        &http,
        Method::POST,
        format!("{base}/campaigns/{campaign}/send"),
        &key,
        Some(json!({})),
    )
    .await;
    assert_eq!(s, 200, "{sent}");
    let stats = |base: String| {
        let (http, key, url) = (
            http.clone(),
            key.clone(),
            format!("{base}/campaigns/{campaign}"),
        );
        async move { call(&http, Method::GET, url, &key, None).await.1["stats"].clone() }
    };
    let started = Instant::now();
    while stats(base.clone()).await["sent"] != json!(SENT) {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the campaign was not sent"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // The burst: a failure for the first FAILED messages, `delivered` then `read` for the
    // others, and statuses of messages never recorded; posted from 16 connections.
    let mut accepted = fake.accepted();
    accepted.sort_by(|x, y| x.to.cmp(&y.to));
    let mut bodies = Vec::new();
    for m in &accepted[..FAILED] {
        bodies.push(fake.status_webhook(&m.wamid, "failed").unwrap());
    }
    for status in ["delivered", "read"] {
        for m in &accepted[FAILED..] {
            bodies.push(fake.status_webhook(&m.wamid, status).unwrap());
        }
    }
    for i in 0..UNKNOWN {
        let body = json!({"object": "whatsapp_business_account", "entry": [{"id": WABA, "changes": [{"field": "messages",
            "value": {"messaging_product": "whatsapp",
                      "metadata": {"display_phone_number": NUMBER.trim_start_matches('+'), "phone_number_id": PNID},
                      "statuses": [{"id": format!("wamid.HBgNNTIxNTUxMzk5OTk5ORUCABEYEj{i:08}AA=="),
                                    "status": "delivered", "timestamp": "1790000000",
                                    "recipient_id": "5215513999999"}]}}]}]})
        .to_string()
        .into_bytes();
        let sig = wm_fake_graph::sign(WA_SECRET, &body);
        bodies.push((body, sig));
    }
    let store = Database::connect(&db).await.unwrap();
    let client = http.clone();
    let post = move |port: u16, (body, sig): (Vec<u8>, String)| {
        let http = client.clone();
        async move {
            let ok = http
                .post(format!(
                    "http://127.0.0.1:{port}/api/v1/platform/whatsapp/webhook"
                ))
                .header("content-type", "application/json")
                .header("x-hub-signature-256", &sig)
                .body(body.clone())
                .send()
                .await
                .is_ok_and(|r| r.status() == 200);
            (ok, body, sig)
        }
    };
    let burst = tokio::spawn({
        let bodies = bodies.clone();
        let post = post.clone();
        async move {
            futures::stream::iter(bodies)
                .map(|b| post(port_a, b))
                .buffer_unordered(16)
                .collect::<Vec<_>>()
                .await
        }
    });
    // Killed mid-batch: once it has applied some webhooks and holds a claimed batch it has
    // not finished.
    let total = bodies.len() as u64;
    let claimed = || async {
        platform_event::Entity::find()
            .filter(platform_event::Column::ProcessedAt.is_null())
            .filter(platform_event::Column::ClaimedUntil.is_not_null())
            .count(&store)
            .await
            .unwrap()
    };
    loop {
        let kept = platform_event::Entity::find().count(&store).await.unwrap();
        let left = unapplied(&store).await;
        if kept > left && claimed().await > 0 {
            break;
        }
        assert!(
            kept < total || left > 0,
            "the burst was applied before it could be killed"
        );
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    a.child.kill().unwrap(); // SIGKILL
    a.child.wait().unwrap();
    let results = burst.await.unwrap();
    let refused: Vec<(Vec<u8>, String)> = results
        .into_iter()
        .filter(|(ok, ..)| !ok)
        .map(|(_, b, s)| (b, s))
        .collect();
    let left = unapplied(&store).await;
    let claimed = claimed().await;
    eprintln!(
        "killed with {left} webhooks kept and not applied ({claimed} of them claimed), {} refused",
        refused.len()
    );
    assert!(claimed > 0, "it died holding a batch it had not applied");

    // Another process on the same database; the platform redelivers what was refused.
    let mut b = replica(&db, &fake.url(), port_b, &dir);
    let base = b.base();
    healthy(&http, &base).await;
    for body in refused {
        assert!(post(port_b, body).await.0);
    }
    let started = Instant::now();
    loop {
        let s = stats(base.clone()).await;
        if s["read"] == json!(SENT - FAILED)
            && s["failed"] == json!(FAILED)
            && unapplied(&store).await == 0
        {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(90),
            "not applied: {s}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // Each receipt once: the statuses kept for later, the refunds, the announcements.
    let kept = pending_status::Entity::find().count(&store).await.unwrap();
    assert_eq!(kept as usize, UNKNOWN);
    let refunds = ledger_entry::Entity::find()
        .filter(ledger_entry::Column::Kind.eq(wm_types::catalog::LedgerKind::Refund))
        .count(&store)
        .await
        .unwrap();
    assert_eq!(refunds as usize, FAILED);
    let mut seen = HashSet::new();
    let mut read = 0;
    for e in outbox_event::Entity::find().all(&store).await.unwrap() {
        let p: Value = serde_json::from_str(&e.payload).unwrap();
        let m = &p["data"]["message"];
        let key = (m["id"].to_string(), m["status"].to_string());
        assert!(seen.insert(key.clone()), "announced twice: {key:?}");
        read += usize::from(m["status"] == "READ");
    }
    assert_eq!(read, SENT - FAILED);
    b.child.kill().ok();
    b.child.wait().ok();
    fake.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}
