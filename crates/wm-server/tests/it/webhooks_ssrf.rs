//! Webhook targets refused unless insecure targets are allowed: plain http, private,
//! loopback and link-local addresses, unresolvable hosts, and the IPv6 forms that wrap a
//! refused IPv4 address (IPv4-compatible, NAT64, 6to4) and site-local addresses, at creation
//! and at URL change (the connection-time resolver applies the same `is_forbidden_ip`).

use serde_json::json;

use crate::support::TestApp;

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
    let id = hook["id"].as_str().unwrap();
    for url in WRAPPED {
        org.patch(&format!("/webhooks/{id}"), json!({"url": url}))
            .await
            .assert_invalid(REFUSED);
    }
    let kept = org.get(&format!("/webhooks/{id}")).await.ok(200);
    assert_eq!(kept["url"], "https://93.184.216.34/hook");
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
