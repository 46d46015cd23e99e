//! Managing webhooks: create, update and delete, their limits (ten per organisation, a
//! non-empty event list), scopes, tenancy and the operator's view.

use axum::http::Method;
use serde_json::json;

use crate::support::{IdOf, TestApp};

#[tokio::test]
async fn management_limits_scopes_and_tenancy() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let created = org
        .post("/webhooks", json!({"url": "https://hooks.example.com/wm", "events": ["contact.created", "bot.message"]}))
        .await
        .ok(201);
    let secret = created["secret"].as_str().unwrap();
    assert!(secret.starts_with("whsec_"));
    use base64::Engine;
    assert_eq!(
        base64::engine::general_purpose::STANDARD
            .decode(&secret[6..])
            .unwrap()
            .len(),
        32
    );
    assert_eq!(created["status"], "ACTIVE");
    assert_eq!(created["events"], json!(["contact.created", "bot.message"]));
    let id = created.id();
    let got = org.get(&format!("/webhooks/{id}")).await.ok(200);
    assert!(got.get("secret").is_none());
    let list = org.get("/webhooks").await.ok(200);
    assert_eq!(list["data"].as_array().unwrap().len(), 1);
    assert!(list["data"][0].get("secret").is_none());
    let p = org
        .patch(
            &format!("/webhooks/{id}"),
            json!({"events": ["contact.updated"], "description": null, "status": "PAUSED"}),
        )
        .await
        .ok(200);
    assert_eq!(p["events"], json!(["contact.updated"]));
    assert_eq!(p["status"], "PAUSED");
    // Validation.
    let r = org
        .post(
            "/webhooks",
            json!({"url": "https://x.example.com", "events": ["contact.deleted"]}),
        )
        .await;
    assert!(
        r.messages()[0].starts_with(
            "each value in events must be one of the following values: contact.created"
        )
    );
    org.post(
        "/webhooks",
        json!({"url": "https://x.example.com", "events": []}),
    )
    .await
    .assert_invalid("events must contain at least 1 elements");
    org.post("/webhooks", json!({"events": ["contact.created"]}))
        .await
        .assert_invalid("url must be a string");
    // At most 10 per organisation.
    for i in 1..10 {
        org.post(
            "/webhooks",
            json!({"url": format!("https://h{i}.example.com"), "events": ["contact.created"]}),
        )
        .await
        .ok(201);
    }
    org.post(
        "/webhooks",
        json!({"url": "https://h11.example.com", "events": ["contact.created"]}),
    )
    .await
    .assert_error(400, None);
    // Scopes: read cannot write, contacts scopes cannot read webhooks.
    let read = org.key_with(&["webhooks:read"]).await;
    let r = app
        .call(
            Method::POST,
            "/webhooks",
            Some(&read),
            Some(json!({"url": "https://a.example.com", "events": ["contact.created"]})),
        )
        .await;
    r.assert_scope_missing("webhooks:write");
    let contacts_only = org.key_with(&["contacts:read"]).await;
    app.call(Method::GET, "/webhooks", Some(&contacts_only), None)
        .await
        .assert_error(403, Some("API_KEY_SCOPE_MISSING"));
    // Another organisation sees none of it.
    let other = app.org().await;
    other
        .get(&format!("/webhooks/{id}"))
        .await
        .assert_error(404, None);
    other
        .patch(&format!("/webhooks/{id}"), json!({"status": "ACTIVE"}))
        .await
        .assert_error(404, None);
    other
        .delete(&format!("/webhooks/{id}"))
        .await
        .assert_error(404, None);
    other
        .get(&format!("/webhooks/{id}/deliveries"))
        .await
        .assert_error(404, None);
    assert_eq!(other.get("/webhooks").await.ok(200)["data"], json!([]));
    // The operator sees and manages it too.
    let admin_list = org.admin(Method::GET, "/webhooks", None).await.ok(200);
    assert_eq!(admin_list["data"].as_array().unwrap().len(), 10);
    assert_eq!(
        org.admin(Method::DELETE, &format!("/webhooks/{id}"), None)
            .await
            .ok(200),
        json!({"deleted": true})
    );
    org.get(&format!("/webhooks/{id}"))
        .await
        .assert_error(404, None);
}
