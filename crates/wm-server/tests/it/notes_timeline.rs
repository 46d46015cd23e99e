//! Notes and the timeline.

use chrono::Duration;
use serde_json::json;

use crate::support::TestApp;

#[tokio::test]
async fn notes_are_authored_by_the_keys_user_newest_first() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let id = org.contact(json!({"note": "first"})).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    app.clock.advance(Duration::seconds(1));
    let n = org
        .post(&format!("/contacts/{id}/notes"), json!({"body": "second"}))
        .await
        .ok(201);
    assert_eq!(n["contactId"], id);
    assert_eq!(n["authorId"], org.user_id);
    assert_eq!(
        n["author"],
        json!({"id": org.user_id, "fullName": "Tess Tester"})
    );
    assert_eq!(n["body"], "second");
    let list = org.get(&format!("/contacts/{id}/notes")).await.ok(200);
    let bodies: Vec<&str> = list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["body"].as_str().unwrap())
        .collect();
    assert_eq!(bodies, vec!["second", "first"]);
    assert_eq!(
        list["meta"],
        json!({"page": 1, "pageSize": 20, "total": 2, "totalPages": 1})
    );
    let p2 = org
        .get(&format!("/contacts/{id}/notes?pageSize=1&page=2"))
        .await
        .ok(200);
    assert_eq!(p2["data"][0]["body"], "first");
}

#[tokio::test]
async fn note_body_must_not_be_empty() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let id = org.contact(json!({})).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    org.post(&format!("/contacts/{id}/notes"), json!({"body": ""}))
        .await
        .assert_invalid("body must be longer than or equal to 1 characters");
    org.post(&format!("/contacts/{id}/notes"), json!({"body": "   "}))
        .await
        .assert_invalid("body should not be empty");
    org.post(&format!("/contacts/{id}/notes"), json!({}))
        .await
        .assert_invalid("body must be a string");
    org.post(&format!("/contacts/{id}/notes"), json!({"body": "x"}))
        .await
        .ok(201);
}

#[tokio::test]
async fn timeline_lists_entries_newest_first_with_a_type_filter() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let lead = org.stage("Lead").await;
    let id = org.contact(json!({"source": "REFERRAL"})).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    app.clock.advance(Duration::seconds(1));
    org.post(&format!("/contacts/{id}/notes"), json!({"body": "called"}))
        .await
        .ok(201);
    app.clock.advance(Duration::seconds(1));
    org.patch(
        &format!("/contacts/{id}"),
        json!({"lifecycleStageId": lead}),
    )
    .await
    .ok(200);
    let t = org.get(&format!("/contacts/{id}/timeline")).await.ok(200);
    let types: Vec<&str> = t["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(types, vec!["stage", "note", "created"]);
    assert_eq!(t["data"][1]["author"], "Tess Tester");
    assert_eq!(t["data"][1]["body"], "called");
    assert_eq!(t["data"][2]["source"], "REFERRAL");
    for e in t["data"].as_array().unwrap() {
        assert!(e["id"].is_string() && e["at"].is_string());
    }
    let notes = org
        .get(&format!("/contacts/{id}/timeline?type=notes"))
        .await
        .ok(200);
    assert_eq!(notes["meta"]["total"], 1);
    assert_eq!(notes["data"][0]["type"], "note");
    for empty in ["campaigns", "conversations"] {
        let r = org
            .get(&format!("/contacts/{id}/timeline?type={empty}"))
            .await
            .ok(200);
        assert_eq!(r["meta"]["total"], 0);
    }
    org.get(&format!("/contacts/{id}/timeline?type=calls"))
        .await
        .assert_invalid(
            "type must be one of the following values: all, conversations, campaigns, notes",
        );
    let p = org
        .get(&format!("/contacts/{id}/timeline?pageSize=1&page=2"))
        .await
        .ok(200);
    assert_eq!(p["data"][0]["type"], "note");
    assert_eq!(p["meta"]["totalPages"], 3);
}
