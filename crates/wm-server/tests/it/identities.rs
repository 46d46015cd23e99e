//! POST /contacts/{id}/identities.

use axum::http::Method;
use serde_json::json;

use crate::support::TestApp;

#[tokio::test]
async fn linking_an_identity() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let a = org.contact(json!({"fullName": "A"})).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let b = org.contact(json!({"fullName": "B"})).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let body = json!({"channelType": "MESSAGING_APP_A", "externalId": "+52 155 1234 0000"});
    let created = org
        .post(&format!("/contacts/{a}/identities"), body.clone())
        .await
        .ok(201);
    assert_eq!(created["contactId"], a);
    assert_eq!(created["externalId"], "5215512340000");
    assert_eq!(created["channel"]["type"], "MESSAGING_APP_A");
    assert_eq!(created["channel"]["id"], created["channelId"]);
    // Same identity on the same contact: 200 with it.
    let again = org
        .post(&format!("/contacts/{a}/identities"), body.clone())
        .await
        .ok(200);
    assert_eq!(again["id"], created["id"]);
    // On another contact: 409, message only.
    org.post(&format!("/contacts/{b}/identities"), body)
        .await
        .assert_error(409, None);
    let detail = org.get(&format!("/contacts/{a}")).await.ok(200);
    assert_eq!(detail["identities"][0]["id"], created["id"]);
}

#[tokio::test]
async fn the_channel_must_be_active_and_the_id_fit_it() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let a = org.contact(json!({})).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    org.post(
        &format!("/contacts/{a}/identities"),
        json!({"channelType": "EMAIL", "externalId": "a@b.com"}),
    )
    .await
    .assert_invalid("channelType EMAIL is not active in this organization");
    org.admin(Method::POST, "/channels", Some(json!({"type": "EMAIL"})))
        .await
        .ok(201);
    org.admin(
        Method::POST,
        "/channels",
        Some(json!({"type": "SOCIAL_APP_A"})),
    )
    .await
    .ok(201);
    org.post(
        &format!("/contacts/{a}/identities"),
        json!({"channelType": "EMAIL", "externalId": "not-an-address"}),
    )
    .await
    .assert_invalid("externalId must be an email");
    let e = org
        .post(
            &format!("/contacts/{a}/identities"),
            json!({"channelType": "EMAIL", "externalId": "Ana@Example.com"}),
        )
        .await
        .ok(201);
    assert_eq!(e["externalId"], "ana@example.com");
    org.post(
        &format!("/contacts/{a}/identities"),
        json!({"channelType": "MESSAGING_APP_A", "externalId": "abc"}),
    )
    .await
    .assert_invalid("externalId must be 6 to 15 digits for MESSAGING_APP_A");
    org.post(
        &format!("/contacts/{a}/identities"),
        json!({"channelType": "SOCIAL_APP_A", "externalId": "ana.g"}),
    )
    .await
    .ok(201);
    let r = org
        .post(
            &format!("/contacts/{a}/identities"),
            json!({"channelType": "FAX"}),
        )
        .await;
    assert!(r.messages().iter().any(|m| {
        m.starts_with("channelType must be one of the following values: MESSAGING_APP_A")
    }));
    r.assert_invalid("externalId must be a string");
}
