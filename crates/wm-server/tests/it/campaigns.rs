//! Campaigns end to end: creation, audience, preview, every send mode, pause/resume, the
//! wallet and its ledger. Receipts, replies and the list are in `campaigns_receipts`,
//! concurrency and crash safety in `campaigns_concurrency`.

use axum::http::Method;
use chrono::Duration;
use serde_json::{Value, json};

use crate::kit::{balance, campaign, campaign_to, contacts, setup, top_up};
use crate::support::TestApp;

const SPAIN: &str = "Saldo insuficiente en la wallet.";
const INVALID: &str = "La campaña ya fue enviada o está en un estado inválido.";
const EMPTY: &str = "La campaña no tiene destinatarios.";

#[tokio::test]
async fn create_validates_number_template_and_variables() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let s = setup(&org).await;
    let c = org
        .post(
            "/campaigns",
            json!({"name": "Pedidos", "phoneNumberId": s.number, "templateId": s.with_vars,
                                   "variables": {"1": "{{firstName}}", "2": "A-100"}}),
        )
        .await
        .ok(201);
    assert_eq!(c["status"], "DRAFT");
    assert_eq!(
        c["template"]["bodyText"],
        "Hola {{1}}, tu pedido {{2}} va en camino"
    );
    assert_eq!(c["template"]["status"], "APPROVED");
    assert_eq!(c["phoneNumber"]["numberE164"], "+525500000001");
    assert_eq!(c["phoneNumber"]["qualityRating"], "GREEN");
    assert_eq!(c["stats"]["total"], 0);
    assert_eq!(c["realCost"], 0.0);
    assert_eq!(c["estimatedCost"], Value::Null);
    assert_eq!(c["variables"], json!({"1": "{{firstName}}", "2": "A-100"}));
    let other = app.org().await;
    let theirs = setup(&other).await;
    org.post(
        "/campaigns",
        json!({"name": "X1", "phoneNumberId": theirs.number, "templateId": s.plain}),
    )
    .await
    .assert_error(409, Some("PHONE_NUMBER_NOT_OWNED"));
    org.post(
        "/campaigns",
        json!({"name": "X1", "phoneNumberId": s.number, "templateId": theirs.plain}),
    )
    .await
    .assert_invalid("templateId must be an APPROVED template of this organization");
    org.post(
        "/campaigns",
        json!({"name": "X", "phoneNumberId": s.number, "templateId": s.plain}),
    )
    .await
    .assert_invalid("name must be longer than or equal to 2 characters");
    let r = org
        .post("/campaigns", json!({"name": "X1", "phoneNumberId": s.number, "templateId": s.with_vars, "variables": {"3": "x"}}))
        .await;
    assert_eq!(r.status, 400);
    // Lookups.
    assert_eq!(
        org.get("/templates").await.ok(200)["data"][1]["variables"],
        json!(["1", "2"])
    );
    assert_eq!(
        org.get("/phone-numbers").await.ok(200)["data"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let no_scope = org.key_with(&["contacts:read"]).await;
    app.call(Method::GET, "/campaigns", Some(&no_scope), None)
        .await
        .assert_error(403, Some("API_KEY_SCOPE_MISSING"));
}

#[tokio::test]
async fn audience_counts_each_kind_of_contact() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let s = setup(&org).await;
    let ok = contacts(&org, 3, "vip").await;
    org.contact(json!({"fullName": "Out", "primaryPhone": "+5215599000001", "optedOut": true, "consent": {"given": true}, "tags": ["vip"]})).await;
    org.contact(
        json!({"fullName": "NoConsent", "primaryPhone": "+5215599000002", "tags": ["vip"]}),
    )
    .await;
    org.contact(json!({"fullName": "NoPhone", "consent": {"given": true}, "tags": ["vip"]}))
        .await;
    org.contact(json!({"fullName": "Nowhere", "primaryPhone": "+9991234567", "consent": {"given": true}, "tags": ["vip"]})).await;
    let id = campaign(&org, &s, &s.plain).await;
    let r = org
        .post(
            &format!("/campaigns/{id}/recipients"),
            json!({"tag": "VIP"}),
        )
        .await
        .ok(200);
    assert_eq!(
        r,
        json!({"total": 7, "optedOut": 2, "withoutPhone": 1, "unpriceable": 1, "eligible": 4, "added": 4, "alreadyIn": 0, "totalRecipients": 4})
    );
    let again = org
        .post(
            &format!("/campaigns/{id}/recipients"),
            json!({"contactIds": ok}),
        )
        .await
        .ok(200);
    assert_eq!(
        (
            again["added"].as_u64(),
            again["alreadyIn"].as_u64(),
            again["totalRecipients"].as_u64()
        ),
        (Some(0), Some(3), Some(4))
    );
    org.post(
        &format!("/campaigns/{id}/recipients"),
        json!({"tag": "vip", "all": true}),
    )
    .await
    .assert_invalid("exactly one of contactIds, lifecycleStageId, tag or all must be given");
    let many: Vec<String> = (0..20_001)
        .map(|_| uuid::Uuid::new_v4().to_string())
        .collect();
    org.post(
        &format!("/campaigns/{id}/recipients"),
        json!({"contactIds": many}),
    )
    .await
    .assert_invalid("contactIds must contain no more than 20000 elements");
    let all = org
        .post(&format!("/campaigns/{id}/recipients"), json!({"all": true}))
        .await
        .ok(200);
    assert_eq!(all["totalRecipients"], 4);
}

#[tokio::test]
async fn send_now_charges_sends_refunds_and_completes() {
    let app = TestApp::new().await;
    let org = app.org().await;
    crate::events::subscribe_all(&org).await;
    let s = setup(&org).await;
    contacts(&org, 3, "t").await;
    org.contact(json!({"fullName": "Not on the app", "primaryPhone": "+5215588880000", "consent": {"given": true}, "tags": ["t"]})).await;
    org.contact(json!({"fullName": "Nowhere", "primaryPhone": "+9991234567", "consent": {"given": true}, "tags": ["t"]})).await;
    let id = campaign(&org, &s, &s.plain).await;
    // No recipients yet.
    let r = org.post(&format!("/campaigns/{id}/send"), json!({})).await;
    r.assert_error(400, None);
    assert_eq!(r.body["message"], EMPTY);
    org.post(&format!("/campaigns/{id}/recipients"), json!({"tag": "t"}))
        .await
        .ok(200);
    let preview = org.preview_cost(&id).await;
    assert_eq!(preview["recipientCount"], 5);
    assert_eq!(preview["priceableCount"], 4);
    assert_eq!(preview["unpriceableCount"], 1);
    assert_eq!(preview["byMarket"][0]["market"], "MX");
    assert_eq!(preview["byMarket"][0]["recipientCount"], 4);
    assert_eq!(preview["includedUtilityRemaining"], Value::Null);
    let price = preview["byMarket"][0]["totalCost"].as_f64().unwrap();
    let total = preview["estimatedTotal"].as_f64().unwrap();
    assert!((total - 4.0 * price).abs() < 1e-9);
    assert_eq!(preview["wallet"]["sufficient"], false);
    // Insufficient balance: 400, campaign and wallet unchanged.
    let r = org
        .post(&format!("/campaigns/{id}/send"), json!({"when": "now"}))
        .await;
    r.assert_error(400, None);
    assert_eq!(r.body["message"], SPAIN);
    assert_eq!(
        org.get(&format!("/campaigns/{id}")).await.ok(200)["status"],
        "DRAFT"
    );
    assert_eq!(balance(&org).await, 0.0);
    top_up(&org, 10.0).await;
    let c = org
        .post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .ok(200);
    assert_eq!(c["status"], "SENDING");
    assert!(c["startedAt"].is_string());
    let charged = 10.0 - balance(&org).await;
    assert!(
        (charged - total).abs() < 1e-9,
        "the batch is charged before the platform is called"
    );
    let r = org.post(&format!("/campaigns/{id}/send"), json!({})).await;
    assert_eq!(r.body["message"], INVALID);
    // The worker calls the platform, applies the receipts and completes.
    let out = app.send_pass().await;
    assert_eq!((out.sent, out.rejected), (3, 1));
    app.send_pass().await;
    let c = org.get(&format!("/campaigns/{id}")).await.ok(200);
    assert_eq!(c["status"], "COMPLETED");
    assert!(c["completedAt"].is_string());
    assert_eq!(
        c["stats"],
        json!({"total": 5, "pending": 0, "sent": 3, "delivered": 3, "read": 0, "replied": 0, "failed": 2, "progressPct": 100.0})
    );
    let reasons: Vec<&str> = c["errorsByReason"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["reason"].as_str().unwrap())
        .collect();
    assert!(reasons.contains(&"Recipient is not a messaging account"));
    assert_eq!(reasons.len(), 2);
    assert!(
        (c["realCost"].as_f64().unwrap() - 3.0 * price).abs() < 1e-9,
        "the rejected message was refunded"
    );
    // The ledger explains the balance.
    let w = org.get("/wallet").await.ok(200);
    let kinds: Vec<&str> = w["recentEntries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, vec!["REFUND", "CHARGE", "TOP_UP"]);
    let sum: f64 = w["recentEntries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["amount"].as_f64().unwrap())
        .sum();
    assert!((sum - w["balance"].as_f64().unwrap()).abs() < 1e-9);
    assert!((w["balance"].as_f64().unwrap() - (10.0 - 3.0 * price)).abs() < 1e-9);
    // Recipients and their filters.
    let failed = org
        .get(&format!("/campaigns/{id}/recipients?filter=failed"))
        .await
        .ok(200);
    assert_eq!(failed["meta"]["total"], 2);
    let delivered = org
        .get(&format!("/campaigns/{id}/recipients?filter=delivered"))
        .await
        .ok(200);
    assert_eq!(delivered["meta"]["total"], 3);
    assert_eq!(delivered["data"][0]["market"], "MX");
    assert!((delivered["data"][0]["totalCost"].as_f64().unwrap() - price).abs() < 1e-9);
    // The contact's timeline shows the message with its current status; the contact now
    // has history.
    let contact = delivered["data"][0]["contact"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let t = org
        .get(&format!("/contacts/{contact}/timeline?type=campaigns"))
        .await
        .ok(200);
    assert_eq!(t["meta"]["total"], 1);
    assert_eq!(t["data"][0]["type"], "campaign");
    assert_eq!(
        t["data"][0]["campaign"],
        json!({"id": id, "name": "Spring"})
    );
    assert_eq!(t["data"][0]["status"], "DELIVERED");
    assert!(t["data"][0]["sentAt"].is_string() && t["data"][0]["deliveredAt"].is_string());
    let all = org
        .get(&format!("/contacts/{contact}/timeline"))
        .await
        .ok(200);
    let types: Vec<&str> = all["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(types, vec!["campaign", "created"]);
    assert_eq!(
        org.get(&format!("/contacts/{contact}/timeline?type=notes"))
            .await
            .ok(200)["meta"]["total"],
        0
    );
    org.delete(&format!("/contacts/{contact}"))
        .await
        .assert_error(409, Some("CONTACT_HAS_HISTORY"));
    // campaign.finished is in the outbox.
    let ev = org.events().await;
    let finished = ev
        .iter()
        .find(|(k, _)| k == "campaign.finished")
        .expect("campaign.finished");
    assert_eq!(finished.1["sent"], 3);
    assert_eq!(finished.1["failed"], 2);
    assert_eq!(finished.1["status"], "COMPLETED");
}

#[tokio::test]
async fn variables_are_required_when_the_template_has_them() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let s = setup(&org).await;
    let ids = contacts(&org, 1, "t").await;
    let id = campaign_to(&org, &s, &s.with_vars, &ids).await;
    top_up(&org, 5.0).await;
    org.post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .assert_error(400, Some("CAMPAIGN_VARIABLES_REQUIRED"));
    assert_eq!(
        org.get(&format!("/campaigns/{id}")).await.ok(200)["status"],
        "DRAFT"
    );
}

#[tokio::test]
async fn scheduled_sends_start_on_time() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let s = setup(&org).await;
    let ids = contacts(&org, 2, "t").await;
    let id = campaign_to(&org, &s, &s.plain, &ids).await;
    top_up(&org, 5.0).await;
    let soon = (app.clock_now() + Duration::seconds(30)).to_rfc3339();
    let r = org
        .post(
            &format!("/campaigns/{id}/send"),
            json!({"when": "scheduled", "scheduledAt": soon}),
        )
        .await;
    r.assert_error(400, None);
    org.post(
        &format!("/campaigns/{id}/send"),
        json!({"when": "scheduled"}),
    )
    .await
    .assert_error(400, None);
    let at = (app.clock_now() + Duration::hours(1)).to_rfc3339();
    let c = org
        .post(
            &format!("/campaigns/{id}/send"),
            json!({"when": "scheduled", "scheduledAt": at}),
        )
        .await
        .ok(200);
    assert_eq!(c["status"], "SCHEDULED");
    assert!(c["scheduledAt"].is_string());
    assert_eq!(
        balance(&org).await,
        5.0,
        "nothing is charged before the start"
    );
    assert_eq!(app.send_pass().await.started, 0);
    app.clock.advance(Duration::minutes(61));
    let out = app.send_pass().await;
    assert_eq!((out.started, out.sent), (1, 2));
    app.send_pass().await;
    assert_eq!(
        org.get(&format!("/campaigns/{id}")).await.ok(200)["status"],
        "COMPLETED"
    );
}

#[tokio::test]
async fn staggered_batches_pause_for_balance_and_resume_after_a_top_up() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let s = setup(&org).await;
    let ids = contacts(&org, 25, "t").await;
    let id = campaign_to(&org, &s, &s.plain, &ids).await;
    let price = org.preview_cost(&id).await["byMarket"][0]["totalCost"]
        .as_f64()
        .unwrap();
    org.post(
        &format!("/campaigns/{id}/send"),
        json!({"when": "staggered", "batchSize": 9, "batchIntervalMin": 5}),
    )
    .await
    .assert_invalid("batchSize must not be less than 10");
    org.post(
        &format!("/campaigns/{id}/send"),
        json!({"when": "staggered", "batchSize": 10, "batchIntervalMin": 1441}),
    )
    .await
    .assert_invalid("batchIntervalMin must not be greater than 1440");
    top_up(&org, price * 15.0).await;
    let c = org
        .post(
            &format!("/campaigns/{id}/send"),
            json!({"when": "staggered", "batchSize": 10, "batchIntervalMin": 5}),
        )
        .await
        .ok(200);
    assert_eq!(
        (
            c["status"].as_str(),
            c["batchSize"].as_u64(),
            c["batchIntervalMin"].as_u64()
        ),
        (Some("SENDING"), Some(10), Some(5))
    );
    assert_eq!(app.send_pass().await.sent, 10);
    assert_eq!(
        app.send_pass().await.batches,
        0,
        "the next batch waits its interval"
    );
    app.clock.advance(Duration::minutes(5));
    let out = app.send_pass().await;
    assert_eq!(out.paused, 1, "the second batch cannot be paid");
    let c = org.get(&format!("/campaigns/{id}")).await.ok(200);
    assert_eq!(
        (c["status"].as_str(), c["stopReason"].as_str()),
        (Some("PAUSED"), Some("INSUFFICIENT_BALANCE"))
    );
    assert_eq!(c["stats"]["sent"], 10);
    // Resume with too little: 400, still paused.
    let r = org
        .post(&format!("/campaigns/{id}/resume"), json!({}))
        .await;
    assert_eq!(r.body["message"], SPAIN);
    assert_eq!(
        org.get(&format!("/campaigns/{id}")).await.ok(200)["status"],
        "PAUSED"
    );
    top_up(&org, price * 20.0).await;
    let c = org
        .post(&format!("/campaigns/{id}/resume"), json!({}))
        .await
        .ok(200);
    assert_eq!(
        (c["status"].as_str(), c["stopReason"].as_str()),
        (Some("SENDING"), None)
    );
    assert_eq!(app.send_pass().await.sent, 10);
    app.clock.advance(Duration::minutes(5));
    assert_eq!(app.send_pass().await.sent, 5);
    app.send_pass().await;
    let c = org.get(&format!("/campaigns/{id}")).await.ok(200);
    assert_eq!(c["status"], "COMPLETED");
    assert_eq!(c["stats"]["sent"], 25);
    assert!((c["realCost"].as_f64().unwrap() - 25.0 * price).abs() < 1e-6);
}

#[tokio::test]
async fn a_user_pause_stops_the_rest_and_keeps_stop_reason_null() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let s = setup(&org).await;
    let ids = contacts(&org, 12, "t").await;
    let id = campaign_to(&org, &s, &s.plain, &ids).await;
    top_up(&org, 10.0).await;
    org.post(&format!("/campaigns/{id}/pause"), json!({}))
        .await
        .assert_error(400, None);
    org.post(
        &format!("/campaigns/{id}/send"),
        json!({"when": "staggered", "batchSize": 10, "batchIntervalMin": 1}),
    )
    .await
    .ok(200);
    let c = org
        .post(&format!("/campaigns/{id}/pause"), json!({}))
        .await
        .ok(200);
    assert_eq!(
        (c["status"].as_str(), c["stopReason"].as_str()),
        (Some("PAUSED"), None)
    );
    assert!(c["pausedAt"].is_string());
    assert_eq!(app.send_pass().await.sent, 0, "paused: nothing goes out");
    org.post(&format!("/campaigns/{id}/resume"), json!({}))
        .await
        .ok(200);
    assert_eq!(app.send_pass().await.sent, 10);
    org.post(&format!("/campaigns/{id}/resume"), json!({}))
        .await
        .assert_error(400, None);
}
