//! Webhook targets refused unless insecure targets are allowed: plain http, private,
//! loopback and link-local addresses, unresolvable hosts, and the IPv6 forms that wrap a
//! refused IPv4 address (IPv4-compatible, NAT64, 6to4) and site-local addresses, at
//! creation, at URL change, and by the delivery worker when it connects (a URL stored
//! without the API's checks).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use serde_json::json;
use uuid::Uuid;
use wm_server::db::entities::webhook;

use crate::support::{IdOf, TestApp};

const REFUSED: &str = "url must not point to a private, loopback or link-local address";

const WRAPPED: [&str; 6] = [
    "https://[::127.0.0.1]/x",
    "https://[64:ff9b::127.0.0.1]/x",
    "https://[64:ff9b::a9fe:a9fe]/latest",
    "https://[2002:c0a8:101::1]/x",
    "https://[2002:a00:1::]/x",
    "https://[fec0::1]/x",
];

#[tokio::test]
async fn ipv6_wrappers_of_private_addresses_are_refused_at_creation_and_change() {
    let app = TestApp::with_settings(|s| s.allow_insecure_webhooks = false).await;
    let org = app.org().await;
    for url in WRAPPED {
        org.post(
            "/webhooks",
            json!({"url": url, "events": ["contact.created"]}),
        )
        .await
        .assert_invalid(REFUSED);
    }
    let hook = org
        .post(
            "/webhooks",
            json!({"url": "https://93.184.216.34/hook", "events": ["contact.created"]}),
        )
        .await
        .ok(201);
    let id = hook.id();
    for url in WRAPPED {
        org.patch(&format!("/webhooks/{id}"), json!({"url": url}))
            .await
            .assert_invalid(REFUSED);
    }
    let kept = org.get(&format!("/webhooks/{id}")).await.ok(200);
    assert_eq!(kept["url"], "https://93.184.216.34/hook");
}

/// Connections accepted by a loopback listener that never answers.
struct Tripwire {
    port: u16,
    accepted: Arc<AtomicUsize>,
}

impl Tripwire {
    async fn start() -> Tripwire {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = accepted.clone();
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                drop(socket);
            }
        });
        Tripwire { port, accepted }
    }
}

#[tokio::test]
async fn the_worker_refuses_to_connect_to_wrapped_addresses_stored_without_the_checks() {
    let app = TestApp::with_settings(|s| s.allow_insecure_webhooks = false).await;
    let org = app.org().await;
    let trip = Tripwire::start().await;
    let port = trip.port;
    // Targets that reach the loopback listener, or would on a stack that routes them:
    // IPv4-mapped (Linux connects through it), IPv4-compatible, NAT64, 6to4, site-local.
    let targets = [
        format!("https://[::ffff:127.0.0.1]:{port}/x"),
        format!("https://[::127.0.0.1]:{port}/x"),
        format!("https://[64:ff9b::7f00:1]:{port}/x"),
        format!("https://[64:ff9b::a9fe:a9fe]:{port}/latest"),
        format!("https://[2002:7f00:1::]:{port}/x"),
        format!("https://[fec0::1]:{port}/x"),
        format!("https://127.1:{port}/x"),
        format!("https://2130706433:{port}/x"),
    ];
    let mut hooks = Vec::new();
    for url in &targets {
        // Created on a public address, then pointed elsewhere behind the API's back (an old
        // row, a restore, a manual fix): only the connection-time check stands.
        let hook = org
            .post(
                "/webhooks",
                json!({"url": "https://93.184.216.34/hook", "events": ["contact.created"]}),
            )
            .await
            .ok(201);
        let id: Uuid = hook.id().parse().unwrap();
        webhook::Entity::update_many()
            .col_expr(webhook::Column::Url, Expr::val(url.as_str()))
            .filter(webhook::Column::Id.eq(id))
            .exec(&app.state.db.conn)
            .await
            .unwrap();
        hooks.push(id);
    }
    org.contact(json!({"fullName": "Ana"})).await;
    let out = app.deliver().await;
    assert_eq!((out.attempted, out.delivered), (targets.len(), 0));
    for (id, url) in hooks.iter().zip(&targets) {
        let d = org.get(&format!("/webhooks/{id}/deliveries")).await.ok(200);
        let d = &d["data"][0];
        assert_eq!(d["status"], "PENDING", "{url}: retried later");
        assert_eq!(d["attempts"], 1, "{url}");
        let attempt = &d["attemptLog"][0];
        assert_eq!(attempt["error"], REFUSED, "{url}");
        assert!(attempt["statusCode"].is_null(), "{url}");
    }
    assert_eq!(trip.accepted.load(Ordering::SeqCst), 0, "nothing connected");
}

#[tokio::test]
async fn private_and_plain_http_targets_are_refused_unless_allowed() {
    let app = TestApp::with_settings(|s| s.allow_insecure_webhooks = false).await;
    let org = app.org().await;
    for (url, msg) in [
        ("http://hooks.example.com/x", "url must use https"),
        (
            "https://127.0.0.1/x",
            "url must not point to a private, loopback or link-local address",
        ),
        (
            "https://10.0.0.5/x",
            "url must not point to a private, loopback or link-local address",
        ),
        (
            "https://169.254.169.254/latest",
            "url must not point to a private, loopback or link-local address",
        ),
        (
            "https://[::1]/x",
            "url must not point to a private, loopback or link-local address",
        ),
        (
            "https://localhost:8443/x",
            "url must not point to a private, loopback or link-local address",
        ),
        (
            "https://no-such-host.invalid/x",
            "url host could not be resolved",
        ),
    ] {
        org.post(
            "/webhooks",
            json!({"url": url, "events": ["contact.created"]}),
        )
        .await
        .assert_invalid(msg);
    }
}
