//! Campaigns end to end: creation, audience, preview, every send mode, pause/resume, the
//! wallet and its ledger, receipts and replies, concurrency and crash safety.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::http::Method;
use chrono::Duration;
use serde_json::{Value, json};
use wm_core::provider::{MessagingProvider, OutboundMessage, SendError};

use crate::support::{Org, TestApp};

const SPAIN: &str = "Saldo insuficiente en la wallet.";
const INVALID: &str = "La campaña ya fue enviada o está en un estado inválido.";
const EMPTY: &str = "La campaña no tiene destinatarios.";

pub(crate) struct Setup {
    pub number: String,
    pub plain: String,
    pub with_vars: String,
    pub utility: String,
}

pub(crate) async fn setup(org: &Org<'_>) -> Setup {
    let number = org
        .admin(
            Method::POST,
            "/phone-numbers",
            Some(json!({"numberE164": "+525500000001", "displayName": "Ventas"})),
        )
        .await
        .ok(201)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let tpl = |name: &str, category: &str, body: &str| {
        let body =
            json!({"name": name, "category": category, "language": "es_MX", "bodyText": body});
        async move {
            org.admin(Method::POST, "/templates", Some(body))
                .await
                .ok(201)["id"]
                .as_str()
                .unwrap()
                .to_owned()
        }
    };
    Setup {
        plain: tpl("promo", "MARKETING", "Promo de temporada").await,
        with_vars: tpl(
            "pedido",
            "MARKETING",
            "Hola {{1}}, tu pedido {{2}} va en camino",
        )
        .await,
        utility: tpl("recordatorio", "UTILITY", "Tu cita es mañana").await,
        number,
    }
}

pub(crate) async fn top_up(org: &Org<'_>, amount: f64) -> Value {
    org.admin(
        Method::POST,
        "/wallet/top-ups",
        Some(json!({"amount": amount})),
    )
    .await
    .ok(201)
}

pub(crate) async fn balance(org: &Org<'_>) -> f64 {
    org.get("/wallet").await.ok(200)["balance"]
        .as_f64()
        .unwrap()
}

/// `n` consenting contacts in Mexico; returns their ids.
pub(crate) async fn contacts(org: &Org<'_>, n: usize, tag: &str) -> Vec<String> {
    let mut ids = Vec::new();
    for i in 0..n {
        let c = org
            .contact(json!({"fullName": format!("Ana {i}"), "primaryPhone": format!("+5215512{:06}", i + 1), "consent": {"given": true}, "tags": [tag]}))
            .await;
        ids.push(c["id"].as_str().unwrap().to_owned());
    }
    ids
}

pub(crate) async fn campaign(org: &Org<'_>, s: &Setup, template: &str) -> String {
    org.post(
        "/campaigns",
        json!({"name": "Spring", "phoneNumberId": s.number, "templateId": template}),
    )
    .await
    .ok(201)["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// A campaign on `template` whose audience is `ids`.
pub(crate) async fn campaign_to(
    org: &Org<'_>,
    s: &Setup,
    template: &str,
    ids: &[String],
) -> String {
    let id = campaign(org, s, template).await;
    org.post(
        &format!("/campaigns/{id}/recipients"),
        json!({"contactIds": ids}),
    )
    .await
    .ok(200);
    id
}

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
    let preview = org
        .get(&format!("/campaigns/{id}/preview-cost"))
        .await
        .ok(200);
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
    let price = org
        .get(&format!("/campaigns/{id}/preview-cost"))
        .await
        .ok(200)["byMarket"][0]["totalCost"]
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

#[tokio::test]
async fn two_concurrent_sends_of_one_campaign_one_wins() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let s = setup(&org).await;
    let ids = contacts(&org, 3, "t").await;
    let id = campaign_to(&org, &s, &s.plain, &ids).await;
    top_up(&org, 10.0).await;
    let path = format!("/campaigns/{id}/send");
    let (a, b) = tokio::join!(org.post(&path, json!({})), org.post(&path, json!({})));
    let mut statuses = [a.status.as_u16(), b.status.as_u16()];
    statuses.sort_unstable();
    assert_eq!(statuses, [200, 400]);
    let w = org.get("/wallet").await.ok(200);
    assert_eq!(
        w["recentEntries"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["kind"] == "CHARGE")
            .count(),
        1
    );
}

#[tokio::test]
async fn concurrent_sends_never_take_the_wallet_below_zero() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let s = setup(&org).await;
    let ids = contacts(&org, 4, "t").await;
    let mut campaigns = Vec::new();
    for _ in 0..6 {
        let id = campaign_to(&org, &s, &s.plain, &ids).await;
        campaigns.push(id);
    }
    let cost = org
        .get(&format!("/campaigns/{}/preview-cost", campaigns[0]))
        .await
        .ok(200)["estimatedTotal"]
        .as_f64()
        .unwrap();
    top_up(&org, cost * 2.5).await;
    let paths: Vec<String> = campaigns
        .iter()
        .map(|id| format!("/campaigns/{id}/send"))
        .collect();
    let sends = paths
        .iter()
        .map(|p| org.post(p, json!({})))
        .collect::<Vec<_>>();
    let results = futures::future::join_all(sends).await;
    let won = results.iter().filter(|r| r.status == 200).count();
    assert_eq!(
        won,
        2,
        "{:?}",
        results.iter().map(|r| r.status).collect::<Vec<_>>()
    );
    assert!(
        results
            .iter()
            .filter(|r| r.status != 200)
            .all(|r| r.body["message"] == SPAIN)
    );
    let w = org.get("/wallet").await.ok(200);
    let left = w["balance"].as_f64().unwrap();
    assert!(left >= 0.0 && (left - cost * 0.5).abs() < 1e-6, "{left}");
}

/// A platform that hangs after `n` accepted messages (the accepted ones are already on the
/// platform when the "crash" happens).
struct HangsAfter {
    inner: wm_server::provider::simulated::SimulatedProvider,
    n: usize,
    seen: AtomicUsize,
}

#[async_trait::async_trait]
impl MessagingProvider for HangsAfter {
    fn name(&self) -> &'static str {
        "hangs-after"
    }

    async fn send(&self, m: &OutboundMessage) -> Result<String, SendError> {
        let r = self.inner.send(m).await;
        if self.seen.fetch_add(1, Ordering::SeqCst) + 1 >= self.n {
            std::future::pending::<()>().await;
        }
        r
    }
}

#[tokio::test]
async fn a_restart_mid_send_sends_and_charges_each_recipient_exactly_once() {
    use sea_orm::EntityTrait;
    let app = TestApp::new().await;
    let org = app.org().await;
    let s = setup(&org).await;
    let ids = contacts(&org, 30, "t").await;
    let id = campaign_to(&org, &s, &s.plain, &ids).await;
    let cost = org
        .get(&format!("/campaigns/{id}/preview-cost"))
        .await
        .ok(200)["estimatedTotal"]
        .as_f64()
        .unwrap();
    top_up(&org, 20.0).await;
    org.post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .ok(200);
    // The server dies in the middle: the 7th message reached the platform, its result never
    // got recorded.
    let hanging = Arc::new(HangsAfter {
        inner: wm_server::provider::simulated::SimulatedProvider::new(
            app.state.db.clone(),
            app.state.clock.clone(),
        ),
        n: 7,
        seen: AtomicUsize::new(0),
    });
    let crashed = app.restart(Some(hanging));
    let worker = wm_server::worker::campaigns::CampaignWorker::new(crashed);
    let run = tokio::time::timeout(std::time::Duration::from_millis(500), worker.run_once()).await;
    assert!(run.is_err(), "the pass hung, as a crash would leave it");
    drop(worker);
    // Restarted: the lease expires and the rest goes out.
    app.clock.advance(Duration::minutes(2));
    app.send_pass().await;
    app.send_pass().await;
    let c = org.get(&format!("/campaigns/{id}")).await.ok(200);
    assert_eq!(c["status"], "COMPLETED");
    assert_eq!(c["stats"]["sent"], 30);
    // The simulated platform keeps every send (no de-duplication): 30 rows, one per
    // recipient, including those whose answers the crash lost (their receipts settled them).
    use wm_server::db::entities::simulated_send;
    let sends = simulated_send::Entity::find()
        .all(&app.state.db.conn)
        .await
        .unwrap();
    assert_eq!(
        sends.len(),
        30,
        "each recipient reached the platform exactly once"
    );
    let mut correlations: Vec<&str> = sends.iter().map(|s| s.correlation_id.as_str()).collect();
    correlations.sort_unstable();
    correlations.dedup();
    assert_eq!(correlations.len(), 30);
    assert_eq!(c["stats"]["delivered"], 30, "no receipt lost");
    let w = org.get("/wallet").await.ok(200);
    let charges: Vec<&Value> = w["recentEntries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "CHARGE")
        .collect();
    assert_eq!(charges.len(), 1);
    assert!(
        (20.0 - w["balance"].as_f64().unwrap() - cost).abs() < 1e-9,
        "charged exactly once"
    );
}

#[tokio::test]
async fn receipts_replies_duplicate_and_the_list() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let s = setup(&org).await;
    let ids = contacts(&org, 3, "t").await;
    let id = campaign_to(&org, &s, &s.utility, &ids).await;
    let p = org
        .get(&format!("/campaigns/{id}/preview-cost"))
        .await
        .ok(200);
    assert_eq!(p["includedUtilityRemaining"], 0);
    top_up(&org, 5.0).await;
    org.post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .ok(200);
    app.send_pass().await;
    let recipients = org
        .get(&format!("/campaigns/{id}/recipients"))
        .await
        .ok(200);
    // A read receipt and a reply.
    let first_contact = recipients["data"][0]["contact"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let row = {
        use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
        wm_server::db::entities::recipient::Entity::find()
            .filter(
                wm_server::db::entities::recipient::Column::ContactId
                    .eq(first_contact.parse::<uuid::Uuid>().unwrap()),
            )
            .one(&app.state.db.conn)
            .await
            .unwrap()
            .unwrap()
    };
    let pid = row.provider_message_id.unwrap();
    let r = org
        .admin(
            Method::POST,
            "/provider-events",
            Some(json!({"providerMessageId": pid, "status": "READ"})),
        )
        .await
        .ok(200);
    assert_eq!(r["applied"], true);
    let phone = recipients["data"][0]["contact"]["primaryPhone"]
        .as_str()
        .unwrap()
        .trim_start_matches('+')
        .to_owned();
    let r = org
        .admin(
            Method::POST,
            "/inbound",
            Some(json!({"channelType": "MESSAGING_APP_A", "externalId": phone})),
        )
        .await
        .ok(200);
    assert_eq!(
        (r["created"].as_bool(), r["repliedCampaign"].as_bool()),
        (Some(false), Some(true))
    );
    let stranger = org.admin(Method::POST, "/inbound", Some(json!({"channelType": "MESSAGING_APP_A", "externalId": "5215577776666", "fullName": "New"}))).await.ok(200);
    assert_eq!(stranger["created"], true);
    let c = org.get(&format!("/campaigns/{id}")).await.ok(200);
    assert_eq!(c["stats"]["replied"], 1);
    assert_eq!(c["stats"]["read"], 1);
    assert_eq!(c["lastReplies"][0]["contact"]["id"], first_contact);
    assert_eq!(
        org.get(&format!("/campaigns/{id}/recipients?filter=replied"))
            .await
            .ok(200)["meta"]["total"],
        1
    );
    // Duplicate.
    let d = org
        .post(&format!("/campaigns/{id}/duplicate"), json!({}))
        .await
        .ok(201);
    assert_eq!(
        (d["status"].as_str(), d["sourceCampaignId"].as_str()),
        (Some("DRAFT"), Some(id.as_str()))
    );
    assert_eq!(d["stats"]["total"], 0);
    // The list.
    let l = org.get("/campaigns").await.ok(200);
    assert_eq!(l["tabs"]["all"], 2);
    assert_eq!(l["tabs"]["drafts"], 1);
    assert_eq!(l["data"][0]["id"], d["id"], "newest first");
    assert!(
        l["data"][0].get("realCost").is_none(),
        "detail-only fields are not in list items"
    );
    assert_eq!(l["summary"]["campaigns"], 2);
    assert_eq!(l["summary"]["sent"], 3);
    assert_eq!(l["summary"]["replies"], 1);
    assert_eq!(
        org.get("/campaigns?tab=drafts").await.ok(200)["meta"]["total"],
        1
    );
    assert_eq!(
        org.get("/campaigns?category=UTILITY").await.ok(200)["meta"]["total"],
        2
    );
    assert_eq!(
        org.get("/campaigns?category=MARKETING").await.ok(200)["meta"]["total"],
        0
    );
    assert_eq!(
        org.get("/campaigns?q=COPY").await.ok(200)["meta"]["total"],
        1
    );
    org.get("/campaigns?days=366")
        .await
        .assert_invalid("days must not be greater than 365");
    // Another organisation sees none of it.
    let other = app.org().await;
    other
        .get(&format!("/campaigns/{id}"))
        .await
        .assert_error(404, None);
    other
        .post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .assert_error(404, None);
    other
        .get(&format!("/campaigns/{id}/recipients"))
        .await
        .assert_error(404, None);
}

#[tokio::test]
async fn an_organisation_can_override_the_rate_card() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let s = setup(&org).await;
    let ids = contacts(&org, 2, "t").await;
    let id = campaign_to(&org, &s, &s.plain, &ids).await;
    let shipped = org
        .get(&format!("/campaigns/{id}/preview-cost"))
        .await
        .ok(200)["byMarket"][0]["totalCost"]
        .as_f64()
        .unwrap();
    let body = json!({"markets": [{"market": "MX", "label": "Mexico (contract)", "marketing": 0.01, "utility": 0.002,
                                    "authentication": 0.003, "effectiveFrom": "2026-11-01"}]});
    org.admin(Method::PUT, "/rates", Some(body.clone()))
        .await
        .ok(200);
    assert_eq!(org.admin(Method::GET, "/rates", None).await.ok(200), body);
    let p = org
        .get(&format!("/campaigns/{id}/preview-cost"))
        .await
        .ok(200);
    assert_eq!(p["byMarket"][0]["label"], "Mexico (contract)");
    assert_eq!(p["byMarket"][0]["totalCost"], 0.01);
    assert_eq!(p["byMarket"][0]["rateEffectiveFrom"], "2026-11-01");
    assert_eq!(p["estimatedTotal"], 0.02);
    top_up(&org, 1.0).await;
    org.post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .ok(200);
    assert!(
        (balance(&org).await - 0.98).abs() < 1e-9,
        "charged at the organisation's price"
    );
    org.admin(Method::PUT, "/rates", Some(json!({"markets": [{"market": "MX", "label": "x", "marketing": 1, "utility": 1, "authentication": 1, "effectiveFrom": "soon"}]})))
        .await
        .assert_invalid("markets.0.effectiveFrom must be a date (YYYY-MM-DD)");
    org.admin(Method::PUT, "/rates", Some(json!({"markets": []})))
        .await
        .ok(200);
    let id2 = campaign_to(&org, &s, &s.plain, &ids_of(&org).await).await;
    let back = org
        .get(&format!("/campaigns/{id2}/preview-cost"))
        .await
        .ok(200)["byMarket"][0]["totalCost"]
        .as_f64()
        .unwrap();
    assert_eq!(back, shipped);
}

async fn ids_of(org: &Org<'_>) -> Vec<String> {
    crate::support::ids(&org.get("/contacts?tag=t").await.ok(200))
}

#[tokio::test]
async fn the_monthly_utility_allowance_is_used_first() {
    let app = TestApp::new().await;
    let o = app
        .admin(
            Method::POST,
            "/organizations",
            Some(json!({"name": "Allowance", "includedUtilityMessages": 2})),
        )
        .await
        .ok(201);
    let org_id = o["id"].as_str().unwrap().to_owned();
    let user = app
        .admin(
            Method::POST,
            &format!("/organizations/{org_id}/users"),
            Some(json!({"fullName": "U", "email": "u@example.com"})),
        )
        .await
        .ok(201);
    let mut org = Org {
        app: &app,
        id: org_id,
        user_id: user["id"].as_str().unwrap().to_owned(),
        key: String::new(),
    };
    org.key = org.key_with(crate::support::ALL_SCOPES).await;
    let s = setup(&org).await;
    let ids = contacts(&org, 3, "t").await;
    assert_eq!(
        org.get("/wallet").await.ok(200)["includedUtilityRemaining"],
        2
    );
    let id = campaign_to(&org, &s, &s.utility, &ids).await;
    let p = org
        .get(&format!("/campaigns/{id}/preview-cost"))
        .await
        .ok(200);
    assert_eq!(p["includedUtilityRemaining"], 2);
    let price = p["byMarket"][0]["totalCost"].as_f64().unwrap();
    assert!(
        (p["estimatedTotal"].as_f64().unwrap() - price).abs() < 1e-9,
        "two of three are covered"
    );
    top_up(&org, 1.0).await;
    org.post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .ok(200);
    app.send_pass().await;
    let r = org
        .get(&format!("/campaigns/{id}/recipients"))
        .await
        .ok(200);
    let covered = r["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["coveredByAllowance"] == true && x["totalCost"] == 0.0)
        .count();
    assert_eq!(covered, 2);
    let w = org.get("/wallet").await.ok(200);
    assert_eq!(w["includedUtilityRemaining"], 0);
    assert!((w["balance"].as_f64().unwrap() - (1.0 - price)).abs() < 1e-9);
}
