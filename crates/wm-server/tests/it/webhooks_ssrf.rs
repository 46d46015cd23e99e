//! IPv6 forms that wrap a refused IPv4 address (IPv4-compatible, NAT64, 6to4) and
//! site-local addresses are refused as webhook targets, at creation and at URL change (the
//! connection-time resolver applies the same `is_forbidden_ip`).

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
