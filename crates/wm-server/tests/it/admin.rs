//! The operator API.

use axum::http::Method;
use serde_json::json;

use crate::support::{IdOf, TestApp};

#[tokio::test]
async fn a_new_organisation_gets_its_defaults() {
    let app = TestApp::new().await;
    let o = app
        .admin(
            Method::POST,
            "/organizations",
            Some(json!({"name": "Acme", "currency": "MXN", "timezone": "America/Mexico_City"})),
        )
        .await
        .ok(201);
    assert_eq!(o["currency"], "MXN");
    assert_eq!(o["timezone"], "America/Mexico_City");
    assert_eq!(o["includedUtilityMessages"], 0);
    let id = o.id();
    let d = app
        .admin(
            Method::POST,
            "/organizations",
            Some(json!({"name": "Defaults"})),
        )
        .await
        .ok(201);
    assert_eq!(d["currency"], "USD");
    assert_eq!(d["timezone"], "UTC");
    let ch = app
        .admin(Method::GET, &format!("/organizations/{id}/channels"), None)
        .await
        .ok(200);
    assert_eq!(ch["data"].as_array().unwrap().len(), 1);
    assert_eq!(ch["data"][0]["type"], "MESSAGING_APP_A");
    assert_eq!(ch["data"][0]["active"], true);
    let st = app
        .admin(
            Method::GET,
            &format!("/organizations/{id}/lifecycle-stages"),
            None,
        )
        .await
        .ok(200);
    assert_eq!(st["data"].as_array().unwrap().len(), 4);
    assert_eq!(
        app.admin(Method::GET, &format!("/organizations/{id}"), None)
            .await
            .ok(200)["name"],
        "Acme"
    );
    app.admin(
        Method::GET,
        "/organizations/00000000-0000-0000-0000-000000000000/users",
        None,
    )
    .await
    .assert_error(404, None);
}

#[tokio::test]
async fn operator_bodies_are_validated() {
    let app = TestApp::new().await;
    let r = app
        .admin(
            Method::POST,
            "/organizations",
            Some(json!({"currency": "usd", "timezone": "+01:00"})),
        )
        .await;
    r.assert_invalid("name must be a string");
    r.assert_invalid("currency must be a 3-letter ISO 4217 code");
    r.assert_invalid("timezone must be an IANA time zone such as UTC or America/Mexico_City");
    let org = app.org().await;
    org.admin(
        Method::POST,
        "/users",
        Some(json!({"fullName": "Dup", "email": "TESS@example.com"})),
    )
    .await
    .assert_error(409, None);
    let r = org
        .admin(
            Method::POST,
            "/api-keys",
            Some(json!({"name": "k", "userId": org.user_id, "scopes": ["admin:all"]})),
        )
        .await;
    assert!(
        r.messages()[0]
            .starts_with("each value in scopes must be one of the following values: contacts:read")
    );
    org.admin(
        Method::POST,
        "/api-keys",
        Some(json!({"name": "k", "userId": org.user_id, "scopes": []})),
    )
    .await
    .assert_invalid("scopes must contain at least 1 elements");
    let other = app.org().await;
    org.admin(
        Method::POST,
        "/api-keys",
        Some(json!({"name": "k", "userId": other.user_id, "scopes": ["contacts:read"]})),
    )
    .await
    .assert_invalid("userId must be a user of this organization");
    org.admin(
        Method::POST,
        "/channels",
        Some(json!({"type": "MESSAGING_APP_A"})),
    )
    .await
    .assert_error(409, None);
}

#[tokio::test]
async fn keys_are_shown_once_and_stored_hashed() {
    use sea_orm::EntityTrait;
    let app = TestApp::new().await;
    let org = app.org().await;
    let r = org
        .admin(
            Method::POST,
            "/api-keys",
            Some(json!({"name": "ci", "userId": org.user_id, "scopes": ["contacts:read"]})),
        )
        .await
        .ok(201);
    let key = r["key"].as_str().unwrap();
    assert!(key.starts_with("wm_live_") && key.len() == 40);
    assert!(key[8..].chars().all(|c| c.is_ascii_alphanumeric()));
    assert_eq!(r["prefix"], &key[..12]);
    assert_eq!(r["scopes"], json!(["contacts:read"]));
    let rows = wm_server::db::entities::api_key::Entity::find()
        .all(&app.state.db.conn)
        .await
        .unwrap();
    assert!(
        rows.iter()
            .all(|row| row.key_hash != key && !row.key_hash.contains(&key[8..]))
    );
    assert!(
        rows.iter()
            .any(|row| row.key_hash == wm_server::keys::hash_key(key))
    );
}
