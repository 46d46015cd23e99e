//! POST /contacts and GET /contacts/{id}.

use axum::http::Method;
use serde_json::{Value, json};

use crate::support::{IdOf, TestApp};

#[tokio::test]
async fn create_returns_the_full_contact_with_its_phone_identity() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let stage = org.stage("Qualified").await;
    let c = org
        .post(
            "/contacts",
            json!({
                "fullName": " Ana Pérez ", "primaryPhone": "+52 (55) 1234-5678",
                "primaryEmail": "ana@example.com", "company": "Acme", "country": "mx",
                "source": "WEBSITE_FORM", "lifecycleStageId": stage, "ownerId": org.user_id,
                "optedOut": false, "consent": {"given": true, "at": "2026-11-01", "how": "WEBSITE_FORM"},
                "tags": ["VIP", "vip", " Lead "], "note": "Met at the fair"
            }),
        )
        .await
        .ok(201);
    assert_eq!(c["organizationId"], org.id);
    assert_eq!(c["fullName"], "Ana Pérez");
    assert_eq!(c["primaryPhone"], "+525512345678");
    assert_eq!(c["country"], "MX");
    assert_eq!(c["source"], "WEBSITE_FORM");
    assert_eq!(c["lifecycleStage"]["name"], "Qualified");
    assert_eq!(c["lifecycleStage"]["order"], 2);
    assert_eq!(c["owner"]["fullName"], "Tess Tester");
    assert_eq!(c["owner"]["email"], "tess@example.com");
    assert_eq!(
        c["consent"],
        json!({"given": true, "at": "2026-11-01T00:00:00.000Z", "how": "WEBSITE_FORM"})
    );
    assert_eq!(c["tags"], json!(["VIP", "Lead"]));
    assert_eq!(c["identities"].as_array().unwrap().len(), 1);
    assert_eq!(c["identities"][0]["channelType"], "MESSAGING_APP_A");
    assert_eq!(c["identities"][0]["externalId"], "525512345678");
    assert_eq!(c["openDeals"], json!([]));
    assert!(
        c.get("lastConversation").is_none(),
        "detail has no lastConversation"
    );
    let created = c["createdAt"].as_str().unwrap();
    assert!(created.ends_with('Z') && created.len() == 24, "{created}");

    let id = c.id();
    let got = org.get(&format!("/contacts/{id}")).await.ok(200);
    assert_eq!(got, c);
}

#[tokio::test]
async fn no_field_is_required() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let c = org.contact(json!({})).await;
    assert_eq!(c["fullName"], json!(null));
    assert_eq!(c["source"], "MANUAL");
    assert_eq!(c["consent"]["given"], false);
    assert_eq!(c["identities"], json!([]));
    assert_eq!(c["tags"], json!([]));
    // null counts as absent on create
    let c = org
        .contact(json!({"company": null, "lifecycleStageId": null}))
        .await;
    assert_eq!(c["company"], json!(null));
}

#[tokio::test]
async fn a_phone_in_use_is_409_with_the_holder() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let first = org
        .contact(json!({"fullName": "Ana", "primaryPhone": "+525512345678"}))
        .await;
    let r = org
        .post(
            "/contacts",
            json!({"fullName": "Other", "primaryPhone": "+52 55 1234 5678"}),
        )
        .await;
    r.assert_error(409, Some("CONTACT_PHONE_EXISTS"));
    assert_eq!(r.body["contactId"], first["id"]);
    assert_eq!(r.body["fullName"], "Ana");
    // Another organisation may hold the same phone.
    let other = app.org().await;
    other
        .contact(json!({"primaryPhone": "+525512345678"}))
        .await;
}

#[tokio::test]
async fn a_phone_linked_as_identity_elsewhere_is_409() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let holder = org.contact(json!({"fullName": "Holder"})).await;
    let id = holder.id();
    org.post(
        &format!("/contacts/{id}/identities"),
        json!({"channelType": "MESSAGING_APP_A", "externalId": "14155550100"}),
    )
    .await
    .ok(201);
    let r = org
        .post("/contacts", json!({"primaryPhone": "+1 415 555 0100"}))
        .await;
    r.assert_error(409, Some("CONTACT_PHONE_EXISTS"));
    assert_eq!(r.body["contactId"], holder["id"]);
}

#[tokio::test]
async fn concurrent_creates_of_one_phone_make_exactly_one_contact() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let body = json!({"fullName": "Race", "primaryPhone": "+5215599990000"});
    let calls = (0..8).map(|_| org.post("/contacts", body.clone()));
    let results = futures::future::join_all(calls).await;
    let created = results.iter().filter(|r| r.status == 201).count();
    let conflicts = results.iter().filter(|r| r.status == 409).count();
    assert_eq!(
        (created, conflicts),
        (1, 7),
        "{:?}",
        results.iter().map(|r| r.status).collect::<Vec<_>>()
    );
    let list = org.get("/contacts?q=race").await.ok(200);
    assert_eq!(list["meta"]["total"], 1);
}

#[tokio::test]
async fn creates_sent_together_are_each_answered_for_themselves() {
    // On SQLite creates that arrive together share a transaction; one that cannot be written
    // must fail alone, and every answer must be its own request's contact.
    let app = TestApp::new().await;
    let org = app.org().await;
    let other = app.org().await;
    let holder = org
        .contact(json!({"fullName": "Holder", "primaryPhone": "+5215511110000"}))
        .await;
    let foreign_stage = other.stage("Lead").await;
    let mut bodies: Vec<Value> = (0..24)
        .map(|n| json!({"fullName": format!("Batch {n}"), "primaryPhone": format!("+52155222{n:05}"), "tags": [format!("t{n}")]}))
        .collect();
    bodies.push(json!({"fullName": "Taken", "primaryPhone": "+5215511110000"}));
    bodies.push(json!({"fullName": "Foreign", "lifecycleStageId": foreign_stage}));
    bodies.push(json!({"fullName": "Twin A", "primaryPhone": "+5215533330000"}));
    bodies.push(json!({"fullName": "Twin B", "primaryPhone": "+5215533330000"}));
    let results =
        futures::future::join_all(bodies.iter().map(|b| org.post("/contacts", b.clone()))).await;
    for (n, r) in results.iter().take(24).enumerate() {
        assert_eq!(r.status, 201, "{n}: {:?}", r.body);
        assert_eq!(r.body["fullName"], format!("Batch {n}"));
        assert_eq!(r.body["tags"], json!([format!("t{n}")]));
        let got = org.get(&format!("/contacts/{}", r.body.id())).await.ok(200);
        assert_eq!(got["fullName"], format!("Batch {n}"));
    }
    results[24].assert_error(409, Some("CONTACT_PHONE_EXISTS"));
    assert_eq!(results[24].body["contactId"], holder["id"]);
    results[25].assert_invalid("lifecycleStageId must be a lifecycle stage of this organization");
    let twins: Vec<u16> = results[26..].iter().map(|r| r.status.as_u16()).collect();
    twins
        .iter()
        .for_each(|s| assert!(*s == 201 || *s == 409, "{twins:?}"));
    assert_eq!(twins.iter().filter(|s| **s == 201).count(), 1, "{twins:?}");
    let list = org.get("/contacts?pageSize=100").await.ok(200);
    assert_eq!(
        list["meta"]["total"],
        1 + 24 + 1,
        "holder, the batch, one twin"
    );
}

#[tokio::test]
async fn stage_and_owner_must_be_the_organisations() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let other = app.org().await;
    let foreign_stage = other.stage("Lead").await;
    let r = org
        .post(
            "/contacts",
            json!({"lifecycleStageId": foreign_stage, "ownerId": other.user_id}),
        )
        .await;
    r.assert_invalid("lifecycleStageId must be a lifecycle stage of this organization");
    r.assert_invalid("ownerId must be a user of this organization");
}

#[tokio::test]
async fn open_deals_show_on_the_detail() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let c = org.contact(json!({"fullName": "Buyer"})).await;
    let id = c.id();
    let deal = org
        .admin(
            Method::POST,
            "/deals",
            Some(json!({"contactId": id, "title": "Big order", "value": 1250.5})),
        )
        .await
        .ok(201);
    let got = org.get(&format!("/contacts/{id}")).await.ok(200);
    assert_eq!(got["openDeals"][0]["id"], deal["id"]);
    assert_eq!(got["openDeals"][0]["title"], "Big order");
    assert_eq!(got["openDeals"][0]["value"], 1250.5);
    let deal_id = deal.id();
    org.admin(
        Method::PATCH,
        &format!("/deals/{deal_id}"),
        Some(json!({"status": "WON"})),
    )
    .await
    .ok(200);
    assert_eq!(
        org.get(&format!("/contacts/{id}")).await.ok(200)["openDeals"],
        json!([])
    );
}

#[tokio::test]
async fn unknown_or_foreign_or_malformed_ids_are_404() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let other = app.org().await;
    let theirs = other.contact(json!({"fullName": "Theirs"})).await;
    let id = theirs.id();
    for path in [
        format!("/contacts/{id}"),
        "/contacts/00000000-0000-0000-0000-000000000000".to_owned(),
        "/contacts/not-a-uuid".to_owned(),
        format!("/contacts/{id}/timeline"),
        format!("/contacts/{id}/notes"),
    ] {
        org.get(&path).await.assert_error(404, None);
    }
    org.patch(&format!("/contacts/{id}"), json!({"fullName": "x"}))
        .await
        .assert_error(404, None);
    org.delete(&format!("/contacts/{id}"))
        .await
        .assert_error(404, None);
    org.post(&format!("/contacts/{id}/notes"), json!({"body": "x"}))
        .await
        .assert_error(404, None);
    org.post(
        &format!("/contacts/{id}/identities"),
        json!({"channelType": "MESSAGING_APP_A", "externalId": "5215500000001"}),
    )
    .await
    .assert_error(404, None);
    // Unchanged for its owner.
    assert_eq!(
        other.get(&format!("/contacts/{id}")).await.ok(200)["fullName"],
        "Theirs"
    );
    // Unknown routes are 404 too.
    org.get("/nothing-here").await.assert_error(404, None);
}
