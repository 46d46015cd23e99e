//! What an automation run announces and leaves in the contact's thread: `automation.run`
//! when a run ends, and its template message (`message.sent`, `sentBy` AUTOMATION) kept in
//! the thread the contact's next message opens.

use axum::http::Method;
use chrono::Duration;
use serde_json::json;

use crate::automations::{automation, welcome_flow, welcome_kit};
use crate::support::{IdOf, TestApp};

#[tokio::test]
async fn a_finished_run_is_announced_and_its_message_joins_the_thread() {
    let app = TestApp::new().await;
    let org = app.org().await;
    welcome_kit(&org).await;
    org.post(
        "/webhooks",
        json!({"url": "https://hooks.example.com/wm", "events": ["automation.run", "message.sent"]}),
    )
    .await
    .ok(201);
    org.admin(Method::POST, "/wallet/top-ups", Some(json!({"amount": 1})))
        .await
        .ok(201);
    let id = automation(&org, welcome_flow(&org)).await;
    let customer = org.stage("Customer").await;
    let c = org
        .contact(json!({"fullName": "Ana", "primaryPhone": "+5215512340001", "consent": {"given": true}}))
        .await;
    let cid = c.id().to_owned();
    org.patch(
        &format!("/contacts/{cid}"),
        json!({"lifecycleStageId": customer}),
    )
    .await
    .ok(200);
    app.automation_pass().await;
    assert!(org.events().await.is_empty(), "a waiting run has not ended");
    app.clock.advance(Duration::minutes(31));
    app.automation_pass().await;

    let events = org.events().await;
    let kinds: Vec<&str> = events.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(kinds, ["message.sent", "automation.run"]);
    let run = &events[1].1;
    let logs = org
        .get(&format!("/automations/{id}/logs?result=completed"))
        .await
        .ok(200);
    assert_eq!(
        *run,
        json!({"organizationId": org.id, "automationId": id, "automationName": "Welcome customers",
               "runId": logs["data"][0]["id"], "contactId": cid, "result": "completed", "error": null})
    );
    let sent = &events[0].1["message"];
    assert_eq!(sent["type"], "TEMPLATE");
    assert_eq!(sent["text"], "Bienvenido");
    assert_eq!(sent["template"]["name"], "welcome");
    assert_eq!(sent["sentBy"], json!({"kind": "AUTOMATION", "id": id}));
    assert_eq!(
        sent["conversationId"],
        json!(null),
        "Ana has not written yet"
    );
    assert!(sent["cost"].as_f64().unwrap() > 0.0);

    // Ana answers: her conversation opens with the welcome above her answer.
    let r = org
        .admin(
            Method::POST,
            "/inbound",
            Some(json!({"channelType": "MESSAGING_APP_A", "externalId": "5215512340001", "text": "¡Gracias!"})),
        )
        .await
        .ok(200);
    let conversation = r["conversationId"].as_str().unwrap();
    let thread = org
        .get(&format!("/conversations/{conversation}/messages"))
        .await
        .ok(200);
    let texts: Vec<&str> = thread["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["¡Gracias!", "Bienvenido"]);
    assert_eq!(thread["data"][1]["id"], sent["id"]);
}
