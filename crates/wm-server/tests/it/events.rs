//! Events written to the outbox with the change that causes them.

use serde_json::json;

use crate::support::{IdOf, Org, TestApp};

/// Subscribes a webhook to every active kind: the outbox holds only the events some
/// webhook takes.
pub(crate) async fn subscribe_all(org: &Org<'_>) {
    org.post(
        "/webhooks",
        json!({"url": "https://hooks.example.com/wm", "events": [
            "contact.created", "contact.updated", "contact.stage_changed", "campaign.finished"]}),
    )
    .await
    .ok(201);
}

#[tokio::test]
async fn create_update_and_stage_change_emit_their_events() {
    let app = TestApp::new().await;
    let org = app.org().await;
    subscribe_all(&org).await;
    let lead = org.stage("Lead").await;
    let customer = org.stage("Customer").await;
    let c = org
        .contact(json!({"fullName": "Ana", "primaryPhone": "+5215500000011", "primaryEmail": "ana@example.com", "lifecycleStageId": lead}))
        .await;
    let id = c.id();
    let ev = org.events().await;
    assert_eq!(ev.len(), 1);
    assert_eq!(ev[0].0, "contact.created");
    assert_eq!(
        ev[0].1,
        json!({"organizationId": org.id, "contactId": id, "fullName": "Ana", "primaryPhone": "+5215500000011",
               "primaryEmail": "ana@example.com", "lifecycleStage": "Lead"})
    );

    org.patch(
        &format!("/contacts/{id}"),
        json!({"company": "Acme", "fullName": "Ana"}),
    )
    .await
    .ok(200);
    let ev = org.events().await;
    assert_eq!(ev.len(), 2);
    assert_eq!(ev[1].0, "contact.updated");
    assert_eq!(ev[1].1["changedFields"], json!(["company"]));

    org.patch(
        &format!("/contacts/{id}"),
        json!({"lifecycleStageId": customer, "tags": ["x"]}),
    )
    .await
    .ok(200);
    let ev = org.events().await;
    assert_eq!(ev.len(), 4);
    let stage = ev
        .iter()
        .find(|(k, _)| k == "contact.stage_changed")
        .expect("stage_changed");
    assert_eq!(stage.1["previousStage"], "Lead");
    assert_eq!(stage.1["lifecycleStage"], "Customer");
    assert_eq!(
        stage.1["changedFields"],
        json!(["lifecycleStageId", "tags"])
    );
    let updated = ev
        .iter()
        .rev()
        .find(|(k, _)| k == "contact.updated")
        .unwrap();
    assert_eq!(
        updated.1["changedFields"],
        json!(["lifecycleStageId", "tags"])
    );
    assert!(updated.1.get("previousStage").is_none());
}

#[tokio::test]
async fn nothing_is_emitted_for_a_no_op_or_a_failed_change() {
    let app = TestApp::new().await;
    let org = app.org().await;
    subscribe_all(&org).await;
    let a = org
        .contact(json!({"fullName": "A", "primaryPhone": "+5215500000021"}))
        .await;
    let b = org.contact(json!({"fullName": "B"})).await;
    let before = org.events().await.len();
    let bid = b.id();
    org.patch(&format!("/contacts/{bid}"), json!({"fullName": "B"}))
        .await
        .ok(200);
    org.patch(
        &format!("/contacts/{bid}"),
        json!({"primaryPhone": "+5215500000021"}),
    )
    .await
    .assert_error(409, Some("CONTACT_PHONE_EXISTS"));
    org.post("/contacts", json!({"primaryPhone": "+5215500000021"}))
        .await
        .assert_error(409, Some("CONTACT_PHONE_EXISTS"));
    assert_eq!(org.events().await.len(), before);
    let _ = a;
}

#[tokio::test]
async fn bulk_emits_per_contact_events() {
    let app = TestApp::new().await;
    let org = app.org().await;
    subscribe_all(&org).await;
    let customer = org.stage("Customer").await;
    let a = org.contact(json!({})).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let b = org.contact(json!({})).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    org.post(
        "/contacts/bulk",
        json!({"ids": [a, b], "lifecycleStageId": customer}),
    )
    .await
    .ok(201);
    let ev = org.events().await;
    assert_eq!(
        ev.iter()
            .filter(|(k, _)| k == "contact.stage_changed")
            .count(),
        2
    );
    assert_eq!(ev.iter().filter(|(k, _)| k == "contact.updated").count(), 2);
    assert!(
        ev.iter()
            .filter(|(k, _)| k == "contact.stage_changed")
            .all(|(_, d)| d["previousStage"].is_null())
    );
}
