//! Keys, scopes, the operator token and the rate limit.

use axum::http::Method;
use chrono::Duration;
use serde_json::json;

use crate::support::{ADMIN, IdOf, TestApp};

#[tokio::test]
async fn missing_unknown_and_malformed_keys_are_401_invalid() {
    let app = TestApp::new().await;
    let org = app.org().await;
    app.call(Method::GET, "/contacts", None, None)
        .await
        .assert_error(401, Some("API_KEY_INVALID"));
    app.call(
        Method::GET,
        "/contacts",
        Some("wm_live_00000000000000000000000000000000"),
        None,
    )
    .await
    .assert_error(401, Some("API_KEY_INVALID"));
    let mistyped = format!("{}x", org.key);
    app.call(Method::GET, "/contacts", Some(&mistyped), None)
        .await
        .assert_error(401, Some("API_KEY_INVALID"));
    // A valid key works.
    assert_eq!(org.get("/contacts").await.status, 200);
}

#[tokio::test]
async fn a_revoked_key_is_refused_at_once() {
    let app = TestApp::new().await;
    let org = app.org().await;
    assert_eq!(org.get("/contacts").await.status, 200);
    let keys = org.admin(Method::GET, "/api-keys", None).await.ok(200);
    let id = keys["data"][0].id().to_owned();
    assert!(
        keys["data"][0].get("key").is_none(),
        "the list never shows the secret"
    );
    let revoked = org
        .admin(Method::POST, &format!("/api-keys/{id}/revoke"), None)
        .await
        .ok(200);
    assert!(revoked["revokedAt"].is_string());
    org.get("/contacts")
        .await
        .assert_error(401, Some("API_KEY_INVALID"));
}

#[tokio::test]
async fn an_expired_key_is_401_expired() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let expires = (app.clock_now() + Duration::hours(1)).to_rfc3339();
    let key = org
        .admin(
            Method::POST,
            "/api-keys",
            Some(json!({"name": "short", "userId": org.user_id, "scopes": ["contacts:read"], "expiresAt": expires})),
        )
        .await
        .ok(201)["key"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        app.call(Method::GET, "/contacts", Some(&key), None)
            .await
            .status,
        200
    );
    app.clock.advance(Duration::hours(2));
    app.call(Method::GET, "/contacts", Some(&key), None)
        .await
        .assert_error(401, Some("API_KEY_EXPIRED"));
}

#[tokio::test]
async fn a_missing_scope_is_403_naming_the_scope() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let read_only = org.key_with(&["contacts:read"]).await;
    let r = app
        .call(
            Method::POST,
            "/contacts",
            Some(&read_only),
            Some(json!({"fullName": "A"})),
        )
        .await;
    r.assert_scope_missing("contacts:write");
    let campaigns_only = org.key_with(&["campaigns:read"]).await;
    for path in ["/contacts", "/users", "/lifecycle-stages"] {
        let r = app
            .call(Method::GET, path, Some(&campaigns_only), None)
            .await;
        r.assert_scope_missing("contacts:read");
    }
    // Write does not imply read.
    let write_only = org.key_with(&["contacts:write"]).await;
    app.call(Method::GET, "/contacts", Some(&write_only), None)
        .await
        .assert_error(403, Some("API_KEY_SCOPE_MISSING"));
}

#[tokio::test]
async fn scope_is_checked_before_validation() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let read_only = org.key_with(&["contacts:read"]).await;
    let r = app
        .call(
            Method::POST,
            "/contacts",
            Some(&read_only),
            Some(json!({"foo": 1})),
        )
        .await;
    r.assert_error(403, Some("API_KEY_SCOPE_MISSING"));
}

#[tokio::test]
async fn operator_routes_refuse_api_keys_and_bad_tokens() {
    let app = TestApp::new().await;
    let org = app.org().await;
    app.call(Method::GET, "/admin/organizations", Some(&org.key), None)
        .await
        .assert_error(403, Some("API_KEY_NOT_ALLOWED_HERE"));
    assert_eq!(
        app.call(Method::GET, "/admin/organizations", None, None)
            .await
            .status,
        401
    );
    assert_eq!(
        app.call(Method::GET, "/admin/organizations", Some("wrong"), None)
            .await
            .status,
        401
    );
    assert_eq!(
        app.call(Method::GET, "/admin/organizations", Some(ADMIN), None)
            .await
            .status,
        200
    );
}

#[tokio::test]
async fn the_601st_request_in_a_minute_is_429_with_headers() {
    let app = TestApp::new().await;
    let org = app.org().await;
    for i in 0..600 {
        let r = org.get("/users").await;
        assert_eq!(r.status, 200, "request {i}");
        assert_eq!(r.headers["ratelimit-limit"], "600");
        assert_eq!(
            r.headers["ratelimit-remaining"],
            (599 - i).to_string().as_str()
        );
    }
    let r = org.get("/users").await;
    r.assert_error(429, Some("API_KEY_RATE_LIMITED"));
    assert_eq!(r.headers["ratelimit-remaining"], "0");
    let retry: u64 = r.headers["retry-after"].to_str().unwrap().parse().unwrap();
    // 60 s. On PostgreSQL the shared window stamps a replica's outstanding grant with its
    // expiry (at most 5 s ahead, see `rate_limit::shared`), which may then be the oldest entry.
    assert!((1..=65).contains(&retry), "Retry-After {retry}");
    // Another key of the same organisation has its own window.
    let other = org.key_with(&["contacts:read"]).await;
    assert_eq!(
        app.call(Method::GET, "/users", Some(&other), None)
            .await
            .status,
        200
    );
    // Half a minute later the window still holds 600: refused. A minute later: admitted.
    app.clock.advance(Duration::seconds(30));
    assert_eq!(org.get("/users").await.status, 429);
    app.clock.advance(Duration::seconds(31));
    assert_eq!(org.get("/users").await.status, 200);
}

#[tokio::test]
async fn errors_also_carry_rate_limit_headers() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let r = org
        .get("/contacts/00000000-0000-0000-0000-000000000000")
        .await;
    assert_eq!(r.status, 404);
    assert!(r.headers.contains_key("ratelimit-remaining"));
    assert!(r.headers.contains_key("ratelimit-reset"));
}

impl TestApp {
    pub fn clock_now(&self) -> chrono::DateTime<chrono::Utc> {
        use wm_core::time::Clock;
        self.clock.now()
    }
}
