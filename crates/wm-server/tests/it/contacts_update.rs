//! PATCH /contacts/{id}.

use serde_json::json;

use crate::support::{IdOf, TestApp};

#[tokio::test]
async fn only_sent_fields_change_and_null_clears() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let c = org
        .contact(
            json!({"fullName": "Ana", "company": "Acme", "ownerId": org.user_id, "tags": ["a"]}),
        )
        .await;
    let id = c.id();
    let u = org
        .patch(
            &format!("/contacts/{id}"),
            json!({"fullName": "Ana María", "ownerId": null, "optedOut": true}),
        )
        .await
        .ok(200);
    assert_eq!(u["fullName"], "Ana María");
    assert_eq!(u["company"], "Acme");
    assert_eq!(u["ownerId"], json!(null));
    assert_eq!(u["owner"], json!(null));
    assert_eq!(u["optedOut"], true);
    assert_eq!(u["tags"], json!(["a"]));
    assert_eq!(u["organizationId"], org.id);
    assert_eq!(org.get(&format!("/contacts/{id}")).await.ok(200), u);
}

#[tokio::test]
async fn changing_the_phone_adds_its_identity_and_refuses_a_taken_one() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let a = org
        .contact(json!({"fullName": "A", "primaryPhone": "+5215500000001"}))
        .await;
    let b = org
        .contact(json!({"fullName": "B", "primaryPhone": "+5215500000002"}))
        .await;
    let bid = b.id();
    let r = org
        .patch(
            &format!("/contacts/{bid}"),
            json!({"primaryPhone": "+52 155 0000 0001"}),
        )
        .await;
    r.assert_error(409, Some("CONTACT_PHONE_EXISTS"));
    assert_eq!(r.body["contactId"], a["id"]);
    let u = org
        .patch(
            &format!("/contacts/{bid}"),
            json!({"primaryPhone": "+5215500000003"}),
        )
        .await
        .ok(200);
    assert_eq!(u["primaryPhone"], "+5215500000003");
    let ext: Vec<&str> = u["identities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["externalId"].as_str().unwrap())
        .collect();
    assert_eq!(ext, vec!["5215500000002", "5215500000003"]);
    // Its own phone again is fine.
    org.patch(
        &format!("/contacts/{bid}"),
        json!({"primaryPhone": "+5215500000003"}),
    )
    .await
    .ok(200);
}

#[tokio::test]
async fn stage_changes_are_recorded_on_the_timeline() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let lead = org.stage("Lead").await;
    let customer = org.stage("Customer").await;
    let c = org
        .contact(json!({"fullName": "Ana", "lifecycleStageId": lead}))
        .await;
    let id = c.id();
    let u = org
        .patch(
            &format!("/contacts/{id}"),
            json!({"lifecycleStageId": customer}),
        )
        .await
        .ok(200);
    assert_eq!(u["lifecycleStage"]["name"], "Customer");
    let t = org.get(&format!("/contacts/{id}/timeline")).await.ok(200);
    let entry = &t["data"][0];
    assert_eq!(entry["type"], "stage");
    assert_eq!(entry["by"], "Tess Tester");
    assert_eq!(entry["from"], "Lead");
    assert_eq!(entry["to"], "Customer");
    assert_eq!(entry["bulk"], false);
    // Removing the stage records a move to nothing.
    org.patch(
        &format!("/contacts/{id}"),
        json!({"lifecycleStageId": null}),
    )
    .await
    .ok(200);
    let t = org.get(&format!("/contacts/{id}/timeline")).await.ok(200);
    assert_eq!(t["data"][0]["from"], "Customer");
    assert_eq!(t["data"][0]["to"], json!(null));
}

#[tokio::test]
async fn foreign_stage_or_owner_is_400_and_nothing_changes() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let other = app.org().await;
    let c = org.contact(json!({"fullName": "Ana"})).await;
    let id = c.id();
    let r = org
        .patch(
            &format!("/contacts/{id}"),
            json!({"fullName": "Changed", "lifecycleStageId": other.stage("Lead").await}),
        )
        .await;
    r.assert_invalid("lifecycleStageId must be a lifecycle stage of this organization");
    assert_eq!(
        org.get(&format!("/contacts/{id}")).await.ok(200)["fullName"],
        "Ana"
    );
}

#[tokio::test]
async fn patch_validation() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let id = org.contact(json!({})).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let r = org
        .patch(
            &format!("/contacts/{id}"),
            json!({"note": "x", "optedOut": null, "tags": "a"}),
        )
        .await;
    r.assert_invalid("property note should not exist");
    r.assert_invalid("optedOut must be a boolean value");
    r.assert_invalid("tags must be an array");
}
