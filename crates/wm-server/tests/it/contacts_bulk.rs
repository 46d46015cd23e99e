//! POST /contacts/bulk.

use serde_json::json;

use crate::support::{IdOf, TestApp};

#[tokio::test]
async fn bulk_moves_stage_adds_tags_and_counts_skipped() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let other = app.org().await;
    let customer = org.stage("Customer").await;
    let a = org.contact(json!({"fullName": "A", "tags": ["VIP"]})).await;
    let b = org
        .contact(json!({"fullName": "B", "ownerId": org.user_id}))
        .await;
    let foreign = other.contact(json!({"fullName": "X"})).await;
    let (a, b, f) = (a.id(), b.id(), foreign.id());
    let r = org
        .post(
            "/contacts/bulk",
            json!({"ids": [a, b, f, "00000000-0000-0000-0000-000000000000"], "lifecycleStageId": customer,
                   "addTags": ["vip", "promo"], "ownerId": null}),
        )
        .await
        .ok(201);
    assert_eq!(r, json!({"updated": 2, "skipped": 2}));
    let ga = org.get(&format!("/contacts/{a}")).await.ok(200);
    assert_eq!(ga["tags"], json!(["VIP", "promo"]));
    assert_eq!(ga["lifecycleStage"]["name"], "Customer");
    let gb = org.get(&format!("/contacts/{b}")).await.ok(200);
    assert_eq!(gb["owner"], json!(null));
    assert_eq!(gb["tags"], json!(["vip", "promo"]));
    let t = org
        .get(&format!("/contacts/{b}/timeline?type=all"))
        .await
        .ok(200);
    assert_eq!(t["data"][0]["type"], "stage");
    assert_eq!(t["data"][0]["bulk"], true);
    assert_eq!(t["data"][0]["to"], "Customer");
    // The other organisation's contact is untouched.
    let gf = other.get(&format!("/contacts/{f}")).await.ok(200);
    assert_eq!(gf["tags"], json!([]));
    assert_eq!(gf["lifecycleStage"], json!(null));
}

#[tokio::test]
async fn bulk_sets_an_owner() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let a = org.contact(json!({})).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    org.post(
        "/contacts/bulk",
        json!({"ids": [a], "ownerId": org.user_id}),
    )
    .await
    .ok(201);
    assert_eq!(
        org.get(&format!("/contacts/{a}")).await.ok(200)["ownerId"],
        org.user_id
    );
}

#[tokio::test]
async fn bulk_needs_a_change_and_known_refs() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let other = app.org().await;
    let a = org.contact(json!({})).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    org.post("/contacts/bulk", json!({"ids": [a]}))
        .await
        .assert_invalid("at least one of lifecycleStageId, addTags or ownerId must be given");
    org.post(
        "/contacts/bulk",
        json!({"ids": [a], "ownerId": other.user_id}),
    )
    .await
    .assert_invalid("ownerId must be a user of this organization");
    org.post("/contacts/bulk", json!({"addTags": ["x"]}))
        .await
        .assert_invalid("ids must be an array");
}

#[tokio::test]
async fn bulk_limits() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let ids500: Vec<String> = (0..500).map(|_| uuid::Uuid::new_v4().to_string()).collect();
    let r = org
        .post("/contacts/bulk", json!({"ids": ids500, "addTags": ["x"]}))
        .await
        .ok(201);
    assert_eq!(r, json!({"updated": 0, "skipped": 500}));
    let ids501: Vec<String> = (0..501).map(|_| uuid::Uuid::new_v4().to_string()).collect();
    org.post("/contacts/bulk", json!({"ids": ids501, "addTags": ["x"]}))
        .await
        .assert_invalid("ids must contain no more than 500 elements");
    let tags20: Vec<String> = (0..20).map(|i| format!("t{i}")).collect();
    let tags21: Vec<String> = (0..21).map(|i| format!("t{i}")).collect();
    org.post("/contacts/bulk", json!({"ids": [], "addTags": tags20}))
        .await
        .ok(201);
    org.post("/contacts/bulk", json!({"ids": [], "addTags": tags21}))
        .await
        .assert_invalid("addTags must contain no more than 20 elements");
    org.post("/contacts/bulk", json!({"ids": ["nope"], "addTags": ["x"]}))
        .await
        .assert_invalid("each value in ids must be a UUID");
}

#[tokio::test]
async fn bulk_refuses_to_exceed_50_tags_and_changes_nothing() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let tags: Vec<String> = (0..45).map(|i| format!("t{i}")).collect();
    let a = org.contact(json!({"tags": tags})).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let add: Vec<String> = (0..6).map(|i| format!("n{i}")).collect();
    org.post("/contacts/bulk", json!({"ids": [a], "addTags": add}))
        .await
        .assert_invalid("addTags would give a contact more than 50 tags");
    assert_eq!(
        org.get(&format!("/contacts/{a}")).await.ok(200)["tags"]
            .as_array()
            .unwrap()
            .len(),
        45
    );
}
