//! DELETE /contacts/{id}.

use axum::http::Method;
use serde_json::json;

use crate::support::{IdOf, TestApp};

#[tokio::test]
async fn delete_removes_the_contact_with_its_notes_and_identities() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let c = org
        .contact(json!({"fullName": "Gone", "primaryPhone": "+5215500000009", "note": "hi"}))
        .await;
    let id = c.id();
    assert_eq!(
        org.delete(&format!("/contacts/{id}")).await.ok(200),
        json!({"deleted": true})
    );
    org.get(&format!("/contacts/{id}"))
        .await
        .assert_error(404, None);
    org.get(&format!("/contacts/{id}/notes"))
        .await
        .assert_error(404, None);
    org.delete(&format!("/contacts/{id}"))
        .await
        .assert_error(404, None);
    // Its phone and identity are free again.
    let again = org.contact(json!({"primaryPhone": "+5215500000009"})).await;
    assert_eq!(again["identities"][0]["externalId"], "5215500000009");
}

#[tokio::test]
async fn a_contact_with_an_open_deal_has_history() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let id = org.contact(json!({"fullName": "Buyer"})).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let deal = org
        .admin(
            Method::POST,
            "/deals",
            Some(json!({"contactId": id, "title": "Order", "value": 10})),
        )
        .await
        .ok(201);
    org.delete(&format!("/contacts/{id}"))
        .await
        .assert_error(409, Some("CONTACT_HAS_HISTORY"));
    assert_eq!(org.get(&format!("/contacts/{id}")).await.status, 200);
    let deal_id = deal.id();
    org.admin(
        Method::PATCH,
        &format!("/deals/{deal_id}"),
        Some(json!({"status": "LOST"})),
    )
    .await
    .ok(200);
    org.delete(&format!("/contacts/{id}")).await.ok(200);
}

#[tokio::test]
async fn a_contact_an_automation_wrote_to_has_history() {
    use crate::automations::{automation, welcome_kit};
    let app = TestApp::new().await;
    let org = app.org().await;
    welcome_kit(&org).await;
    org.admin(Method::POST, "/wallet/top-ups", Some(json!({"amount": 1})))
        .await
        .ok(201);
    let customer = org.stage("Customer").await;
    automation(
        &org,
        json!({
            "name": "Welcome", "status": "ACTIVE", "triggerType": "LIFECYCLE_STAGE_ENTERED",
            "triggerConfig": {"stage": "Customer"}, "templateKey": "welcome",
            "createdByUserId": org.user_id,
            "steps": [{"type": "ACTION", "config": {"kind": "SEND_TEMPLATE", "value": "welcome"}}]
        }),
    )
    .await;
    let ana = org
        .contact(json!({"fullName": "Ana", "primaryPhone": "+5215512340001", "consent": {"given": true}}))
        .await;
    let id = ana.id();
    org.patch(
        &format!("/contacts/{id}"),
        json!({"lifecycleStageId": customer}),
    )
    .await
    .ok(200);
    assert_eq!(app.automation_pass().await.runs, 1);
    // The paid template waits for the conversation Ana's next message opens: no
    // conversation, no campaign, no deal, and still history.
    assert_eq!(org.get("/conversations").await.ok(200)["meta"]["total"], 0);
    org.delete(&format!("/contacts/{id}"))
        .await
        .assert_error(409, Some("CONTACT_HAS_HISTORY"));
    assert_eq!(org.get(&format!("/contacts/{id}")).await.status, 200);
}
