//! Reports: every figure checked against data the test created, on the organisation's
//! calendar days.

use axum::http::Method;
use chrono::Duration;
use serde_json::{Value, json};

use crate::kit;
use crate::support::{IdOf, TestApp};

/// An RFC 3339 instant, for the test clock.
fn at(s: &str) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::parse_from_rfc3339(s)
        .unwrap()
        .with_timezone(&chrono::Utc)
}

fn day(v: &Value, date: &str) -> Value {
    v["series"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["date"] == date)
        .cloned()
        .unwrap_or(Value::Null)
}

#[tokio::test]
async fn every_report_adds_up_to_what_happened() {
    let app = TestApp::new().await;
    let org = app.org().await;
    // Day 1: two contacts, one becomes a customer, a deal, a note, a top-up.
    app.clock.set(at("2026-11-10T12:00:00Z"));
    let customer = org.stage("Customer").await;
    let a = org.contact(json!({"fullName": "A", "primaryPhone": "+5215512300001", "consent": {"given": true}, "ownerId": org.user_id})).await;
    let b = org
        .contact(
            json!({"fullName": "B", "primaryPhone": "+5215512300002", "consent": {"given": true}}),
        )
        .await;
    let a_id = a.id();
    org.patch(
        &format!("/contacts/{a_id}"),
        json!({"lifecycleStageId": customer}),
    )
    .await
    .ok(200);
    org.admin(
        Method::POST,
        "/deals",
        Some(json!({"contactId": a_id, "title": "Order", "value": 100})),
    )
    .await
    .ok(201);
    org.post(
        &format!("/contacts/{a_id}/notes"),
        json!({"body": "called"}),
    )
    .await
    .ok(201);
    kit::top_up(&org, 10.0).await;
    // Day 2: a campaign to both, a reply that opens a conversation, resolved by the user.
    app.clock.set(at("2026-11-11T12:00:00Z"));
    let number = kit::number(&org, "+525500000001").await;
    let t = kit::template(&org, "hola", "MARKETING", "es", "Hola").await;
    let c = org
        .post(
            "/campaigns",
            json!({"name": "C1", "phoneNumberId": number, "templateId": t}),
        )
        .await
        .ok(201);
    let cid = c.id();
    org.post(
        &format!("/campaigns/{cid}/recipients"),
        json!({"contactIds": [a["id"], b["id"]]}),
    )
    .await
    .ok(200);
    org.post(&format!("/campaigns/{cid}/send"), json!({}))
        .await
        .ok(200);
    app.send_pass().await;
    app.send_pass().await;
    let inbound = org
        .admin(
            Method::POST,
            "/inbound",
            Some(json!({"channelType": "MESSAGING_APP_A", "externalId": "5215512300001"})),
        )
        .await
        .ok(200);
    let conv = inbound["conversationId"].as_str().unwrap();
    app.clock.advance(Duration::minutes(90));
    org.admin(
        Method::PATCH,
        &format!("/conversations/{conv}"),
        Some(json!({"assignedToUserId": org.user_id, "status": "RESOLVED"})),
    )
    .await
    .ok(200);
    let spend = org.get(&format!("/campaigns/{cid}")).await.ok(200)["realCost"]
        .as_f64()
        .unwrap();
    app.clock.set(at("2026-11-12T12:00:00Z"));
    let q = "?from=2026-11-10&to=2026-11-12";
    let report = |name: &str| {
        let org = &org;
        let path = format!("/reports/{name}{q}");
        async move { org.get(&path).await.ok(200) }
    };

    let r = report("commercial").await;
    assert_eq!(
        r["period"],
        json!({"from": "2026-11-10", "to": "2026-11-12", "timezone": "UTC"})
    );
    assert_eq!(r["series"].as_array().unwrap().len(), 3);
    assert_eq!(r["totals"]["newContacts"], 2);
    assert_eq!(r["totals"]["newCustomers"], 1);
    assert_eq!(r["totals"]["dealsCreated"], 1);
    assert_eq!(r["totals"]["dealsValue"], 100.0);
    assert_eq!(day(&r, "2026-11-10")["newContacts"], 2);
    assert_eq!(day(&r, "2026-11-12")["newContacts"], 0);

    let r = report("lifecycle").await;
    assert_eq!(r["totals"]["stageChanges"], 1);
    let cust = r["totals"]["byStage"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["stage"] == "Customer")
        .unwrap()
        .clone();
    assert_eq!(
        (cust["contacts"].as_u64(), cust["entered"].as_u64()),
        (Some(1), Some(1))
    );
    let none = r["totals"]["byStage"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["stage"] == "No stage")
        .unwrap()
        .clone();
    assert_eq!(none["contacts"], 1);

    let r = report("campaigns").await;
    assert_eq!(r["totals"]["campaigns"], 1);
    assert_eq!(r["totals"]["sent"], 2);
    assert_eq!(r["totals"]["delivered"], 2);
    assert_eq!(r["totals"]["replied"], 1);
    assert_eq!(r["totals"]["failed"], 0);
    assert!((r["totals"]["spend"].as_f64().unwrap() - spend).abs() < 1e-9);
    assert_eq!(day(&r, "2026-11-11")["sent"], 2);

    let r = report("wallet").await;
    assert_eq!(r["totals"]["topUps"], 10.0);
    assert!((r["totals"]["charges"].as_f64().unwrap() - spend).abs() < 1e-9);
    assert!((r["totals"]["balance"].as_f64().unwrap() - (10.0 - spend)).abs() < 1e-9);
    assert_eq!(day(&r, "2026-11-10")["balance"], 10.0);
    assert_eq!(
        day(&r, "2026-11-12")["balance"],
        r["totals"]["balance"],
        "the balance carries over quiet days"
    );

    let r = report("team").await;
    let me = r["totals"]["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["userId"] == org.user_id.as_str())
        .unwrap()
        .clone();
    assert_eq!(me["contactsOwned"], 1);
    assert_eq!(me["notesWritten"], 1);
    assert_eq!(me["conversationsResolved"], 1);
    assert_eq!(me["conversationsAssigned"], 0);
    assert_eq!(day(&r, "2026-11-10")["notesWritten"], 1);

    let r = report("conversations").await;
    assert_eq!(
        r["totals"],
        json!({"opened": 1, "resolved": 1, "openNow": 0, "avgResolutionMinutes": 90})
    );
    assert_eq!(
        day(&r, "2026-11-11"),
        json!({"date": "2026-11-11", "opened": 1, "resolved": 1})
    );

    // Defaults, validation, scope.
    let d = org.get("/reports/wallet").await.ok(200);
    assert_eq!(d["series"].as_array().unwrap().len(), 30);
    assert_eq!(d["period"]["to"], "2026-11-12");
    org.get("/reports/wallet?from=2026-11-12&to=2026-11-01")
        .await
        .assert_invalid("from must not be after to");
    org.get("/reports/wallet?from=yesterday")
        .await
        .assert_invalid("from must be a date (YYYY-MM-DD)");
    org.get("/reports/wallet?since=2026-11-01")
        .await
        .assert_invalid("property since should not exist");
    org.get("/reports/nothing").await.assert_error(404, None);
    let no_scope = org.key_with(&["contacts:read"]).await;
    let r = app
        .call(Method::GET, "/reports/team", Some(&no_scope), None)
        .await;
    r.assert_scope_missing("reports:read");
}

#[tokio::test]
async fn new_contacts_are_counted_on_the_organisations_local_days() {
    let app = TestApp::new().await;
    let org = app
        .org_with(json!({"name": "CDMX", "timezone": "America/Mexico_City"}))
        .await;
    // Mexico City is UTC-6: 05:59Z is still the 10th there, 06:00Z is the 11th.
    for (i, when) in [
        "2026-11-10T06:00:00Z",
        "2026-11-11T05:59:59Z",
        "2026-11-11T06:00:00Z",
        "2026-11-12T23:00:00Z",
    ]
    .iter()
    .enumerate()
    {
        app.clock.set(at(when));
        org.contact(json!({"fullName": format!("C{i}")})).await;
    }
    app.clock.set(at("2026-11-13T12:00:00Z"));
    let r = org
        .get("/reports/commercial?from=2026-11-10&to=2026-11-12")
        .await
        .ok(200);
    assert_eq!(day(&r, "2026-11-10")["newContacts"], 2);
    assert_eq!(day(&r, "2026-11-11")["newContacts"], 1);
    assert_eq!(day(&r, "2026-11-12")["newContacts"], 1);
    assert_eq!(r["totals"]["newContacts"], 4);
}

#[tokio::test]
async fn campaign_sends_are_counted_on_the_organisations_local_days() {
    let app = TestApp::new().await;
    let org = app
        .org_with(json!({"name": "CDMX", "timezone": "America/Mexico_City"}))
        .await;
    app.clock.set(at("2026-11-09T12:00:00Z"));
    kit::top_up(&org, 10.0).await;
    let number = kit::number(&org, "+525500000001").await;
    let t = kit::template(&org, "hola", "MARKETING", "es", "Hola").await;
    // Mexico City is UTC-6: 05:59:59Z is still the 10th there, 06:00Z is the 11th.
    for (i, when) in [
        "2026-11-11T05:59:59Z",
        "2026-11-11T06:00:00Z",
        "2026-11-12T23:30:00Z",
    ]
    .iter()
    .enumerate()
    {
        app.clock.set(at(when));
        let person = org
            .contact(
                json!({"fullName": format!("P{i}"), "primaryPhone": format!("+52155123400{i}"),
                            "consent": {"given": true}}),
            )
            .await;
        let c = org
            .post(
                "/campaigns",
                json!({"name": format!("C{i}"), "phoneNumberId": number, "templateId": t}),
            )
            .await
            .ok(201);
        let cid = c.id();
        org.post(
            &format!("/campaigns/{cid}/recipients"),
            json!({"contactIds": [person["id"]]}),
        )
        .await
        .ok(200);
        org.post(&format!("/campaigns/{cid}/send"), json!({}))
            .await
            .ok(200);
        app.send_pass().await;
        app.send_pass().await;
    }
    app.clock.set(at("2026-11-13T12:00:00Z"));
    let r = org
        .get("/reports/campaigns?from=2026-11-10&to=2026-11-12")
        .await
        .ok(200);
    let sent = |date: &str| day(&r, date)["sent"].clone();
    assert_eq!(
        [sent("2026-11-10"), sent("2026-11-11"), sent("2026-11-12")],
        [json!(1), json!(1), json!(1)],
        "{r}"
    );
    assert_eq!(r["totals"]["sent"], 3);
    assert_eq!(r["totals"]["campaigns"], 3);
    // The simulator delivers at once: each delivery on its send's local day.
    assert_eq!(day(&r, "2026-11-10")["delivered"], 1, "{r}");
    // A period that ends before the last send leaves it out.
    let r = org
        .get("/reports/campaigns?from=2026-11-10&to=2026-11-11")
        .await
        .ok(200);
    assert_eq!(r["totals"]["sent"], 2);
}
