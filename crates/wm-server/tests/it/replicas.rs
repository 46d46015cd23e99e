//! Several replicas on one database: the rate limit, key revocation, lookups and each sender
//! number's pace hold across them, and a replica that shuts down hands its campaign back.
//! Each "replica" here is a server state of its own (caches, limiter, pacer) on the test's
//! database; the multi-process run with real binaries is `replicas_processes.rs`.

use std::time::{Duration, Instant};

use axum::http::Method;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use serde_json::json;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;
use wm_server::db::entities::{campaign, simulated_send};
use wm_server::provider::Pacer;

use crate::kit::{campaign_to, contacts, setup, top_up};
use crate::support::{IdOf, TestApp};

/// Another replica that hears the others' changes (listening until the guard is dropped).
async fn listening_replica(app: &TestApp) -> (TestApp, tokio_util::sync::DropGuard) {
    let other = app.replica();
    let stop = CancellationToken::new();
    tokio::spawn(wm_server::changes::listen(
        other.state.clone(),
        stop.clone(),
    ));
    let started = Instant::now();
    while !other.state.health.is_listening() {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "never listened"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    (other, stop.drop_guard())
}

#[tokio::test]
async fn one_key_gets_its_limit_once_whatever_replica_answers() {
    let app = TestApp::with_limit(10).await;
    if !app.on_postgres() {
        return; // SQLite: one process, whose limiter the rate-limit tests cover
    }
    let replicas = [app.replica(), app.replica(), app.replica()];
    let org = app.org().await;
    let mut admitted = 0;
    let mut remaining = Vec::new();
    for i in 0..30 {
        let r = replicas[i % 3]
            .call(Method::GET, "/contacts", Some(&org.key), None)
            .await;
        if r.status == 200 {
            admitted += 1;
            remaining.push(
                r.headers["ratelimit-remaining"]
                    .to_str()
                    .unwrap()
                    .to_owned(),
            );
        } else {
            r.assert_error(429, Some("API_KEY_RATE_LIMITED"));
            assert!(r.headers.contains_key("retry-after"));
        }
    }
    assert_eq!(admitted, 10, "10 per minute over three replicas");
    // The headers count the key's requests on every replica, not one replica's share.
    let expected: Vec<String> = (0..10).rev().map(|n| n.to_string()).collect();
    assert_eq!(remaining, expected);
}

#[tokio::test]
async fn a_revoked_key_is_refused_by_every_replica_within_a_second() {
    let app = TestApp::new().await;
    if !app.on_postgres() {
        return; // SQLite: one process, which forgets the key at once
    }
    let (other, _listening) = listening_replica(&app).await;
    let org = app.org().await;
    let created = org
        .admin(
            Method::POST,
            "/api-keys",
            Some(json!({"name": "k", "userId": org.user_id, "scopes": ["contacts:read"]})),
        )
        .await
        .ok(201);
    let key = created["key"].as_str().unwrap().to_owned();
    let key_id = created.id().to_owned();
    // The other replica has the key in its cache.
    other
        .call(Method::GET, "/contacts", Some(&key), None)
        .await
        .ok(200);
    org.admin(Method::POST, &format!("/api-keys/{key_id}/revoke"), None)
        .await
        .ok(200);
    let revoked = Instant::now();
    loop {
        let r = other.call(Method::GET, "/contacts", Some(&key), None).await;
        if r.status == 401 {
            r.assert_error(401, Some("API_KEY_INVALID"));
            break;
        }
        // The cache would keep it 5 s; the announcement must beat that by far.
        assert!(
            revoked.elapsed() < Duration::from_secs(1),
            "the other replica still admits the revoked key"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_stage_added_on_one_replica_counts_in_another_replicas_tabs_at_once() {
    let app = TestApp::new().await;
    if !app.on_postgres() {
        return;
    }
    let (other, _listening) = listening_replica(&app).await;
    let org = app.org().await;
    let customers = |list: &serde_json::Value| list["tabs"]["customers"].as_u64().unwrap();
    // The other replica has the organisation's stages in its cache.
    let before = other
        .call(Method::GET, "/contacts", Some(&org.key), None)
        .await
        .ok(200);
    let won = org
        .admin(
            Method::POST,
            "/lifecycle-stages",
            Some(json!({"name": "Won", "order": 99, "category": "CUSTOMER"})),
        )
        .await
        .ok(201);
    org.contact(json!({"fullName": "Ana", "lifecycleStageId": won["id"]}))
        .await;
    let added = Instant::now();
    loop {
        let list = other
            .call(Method::GET, "/contacts", Some(&org.key), None)
            .await
            .ok(200);
        if customers(&list) == customers(&before) + 1 {
            break;
        }
        // A stale copy would not know "Won" is a customer stage for 5 s.
        assert!(added.elapsed() < Duration::from_secs(1), "{}", list["tabs"]);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn two_replicas_sending_for_one_number_keep_its_pace_together() {
    let app = TestApp::new().await;
    let mps = 20;
    let (a, b) = (
        Pacer::new(app.state.db.clone(), mps),
        Pacer::new(app.state.db.clone(), mps),
    );
    let sender = Uuid::now_v7();
    let started = Instant::now();
    let run = |p: Pacer| async move {
        let mut at = Vec::new();
        for _ in 0..20 {
            p.wait(sender, None).await.unwrap();
            at.push(started.elapsed());
        }
        at
    };
    let (x, y) = tokio::join!(run(a), run(b));
    let mut all: Vec<Duration> = x.into_iter().chain(y).collect();
    all.sort();
    // 40 slots 50 ms apart span 39 intervals, whoever took them.
    let span = all[39] - all[0];
    assert!(
        span >= Duration::from_millis(39 * 50 - 20),
        "{span:?}: {all:?}"
    );
    // No one-second window holds more than the pace (one more at a window's edge, where a
    // slot's timer fired a little late).
    let busiest = all
        .iter()
        .map(|t| {
            all.iter()
                .filter(|u| **u >= *t && **u < *t + Duration::from_secs(1))
                .count()
        })
        .max()
        .unwrap();
    assert!(
        busiest <= mps as usize + 1,
        "{busiest} in one second: {all:?}"
    );
}

#[tokio::test]
async fn a_replica_shutting_down_hands_its_campaign_to_another_at_once() {
    // 3 messages a second: the sending replica is stopped mid-campaign.
    let app = TestApp::with_settings(|s| s.provider_mps = 3).await;
    let org = app.org().await;
    let s = setup(&org).await;
    let ids = contacts(&org, 12, "r").await;
    let id = campaign_to(&org, &s, &s.plain, &ids).await;
    top_up(&org, 100.0).await;
    org.post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .ok(200);
    let first = app.replica();
    let worker = tokio::spawn({
        let state = first.state.clone();
        async move {
            wm_server::worker::campaigns::CampaignWorker::new(state)
                .run_once()
                .await
        }
    });
    let campaign_id: Uuid = id.parse().unwrap();
    let sends = || async {
        simulated_send::Entity::find()
            .all(&app.state.db.conn)
            .await
            .unwrap()
    };
    while sends().await.len() < 2 {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    first.state.stop.cancel();
    worker.await.unwrap().unwrap();
    let sent_by_first = sends().await.len();
    assert!(
        sent_by_first < 12,
        "it stopped mid-way ({sent_by_first} sent)"
    );
    let c = campaign::Entity::find()
        .filter(campaign::Column::Id.eq(campaign_id))
        .one(&app.state.db.conn)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        c.locked_until, None,
        "the lease is handed back, not left to expire"
    );
    // Another replica takes over at once and finishes; nobody is messaged twice.
    let second = app.replica();
    while sends().await.len() < 12 {
        second.send_pass().await;
    }
    second.send_pass().await;
    let all = sends().await;
    let mut people: Vec<&str> = all.iter().map(|s| s.correlation_id.as_str()).collect();
    people.sort_unstable();
    people.dedup();
    assert_eq!((all.len(), people.len()), (12, 12));
    let c = org.get(&format!("/campaigns/{id}")).await.ok(200);
    assert_eq!(c["status"], "COMPLETED");
    assert_eq!(c["stats"]["delivered"], 12);
}
