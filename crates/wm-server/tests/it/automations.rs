//! Automations end to end: defined by the operator, triggered by what happens, run step by
//! step by the worker (with waits on the injected clock), logged, and paused after five
//! consecutive failures.

use axum::http::Method;
use chrono::Duration;
use serde_json::{Value, json};

use crate::kit::{self, balance};
use crate::support::{IdOf, Org, TestApp};

/// A sender number and the `welcome` template the flows send.
pub(crate) async fn welcome_kit(org: &Org<'_>) {
    kit::number(org, "+525500000001").await;
    kit::template(org, "welcome", "MARKETING", "es", "Bienvenido").await;
}

pub(crate) async fn automation(org: &Org<'_>, body: Value) -> String {
    org.admin(Method::POST, "/automations", Some(body))
        .await
        .ok(201)["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Every contact of `org` enters Customer under an ACTIVE automation that tags those with a
/// `channel` identity (`CHANNEL_IS`); once its runs are done (this pass or the server's own
/// worker), each contact's first identity's channel type and whether it was tagged.
pub(crate) async fn tag_customers_on(
    app: &TestApp,
    org: &Org<'_>,
    channel: &str,
) -> Vec<(String, bool)> {
    automation(
        org,
        json!({
            "name": format!("Tag {channel} customers"), "status": "ACTIVE",
            "triggerType": "LIFECYCLE_STAGE_ENTERED", "triggerConfig": {"stage": "Customer"},
            "createdByUserId": org.user_id,
            "steps": [
                {"type": "CONDITION", "config": {"kind": "CHANNEL_IS", "value": channel}},
                {"type": "ACTION", "config": {"kind": "ADD_TAG", "value": "tagged"}}
            ]
        }),
    )
    .await;
    let customer = org.stage("Customer").await;
    let contacts = || async {
        org.get("/contacts").await.ok(200)["data"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    };
    let everyone = contacts().await;
    for p in &everyone {
        org.patch(
            &format!("/contacts/{}", p.id()),
            json!({"lifecycleStageId": customer}),
        )
        .await
        .ok(200);
    }
    let mut seen = Vec::new();
    for _ in 0..50 {
        app.automation_pass().await;
        seen = contacts()
            .await
            .iter()
            .map(|p| {
                let tagged = p["tags"]
                    .as_array()
                    .is_some_and(|t| t.iter().any(|t| t == "tagged"));
                (
                    p["identities"][0]["channelType"]
                        .as_str()
                        .unwrap_or("")
                        .to_owned(),
                    tagged,
                )
            })
            .collect();
        if seen.iter().any(|(_, tagged)| *tagged) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    seen.sort();
    seen
}

pub(crate) fn welcome_flow(org: &Org<'_>) -> Value {
    json!({
        "name": "Welcome customers", "status": "ACTIVE", "triggerType": "LIFECYCLE_STAGE_ENTERED",
        "triggerConfig": {"stage": "Customer"}, "templateKey": "welcome", "createdByUserId": org.user_id,
        "steps": [
            {"type": "WAIT", "config": {"kind": "MINUTES", "value": 30}},
            {"type": "CONDITION", "config": {"kind": "CHANNEL_IS", "value": "MESSAGING_APP_A"}},
            {"type": "ACTION", "config": {"kind": "SEND_TEMPLATE", "value": "welcome"}},
            {"type": "ACTION", "config": {"kind": "ADD_TAG", "value": "welcomed"}}
        ]
    })
}

#[tokio::test]
async fn a_stage_change_waits_checks_the_channel_and_sends_a_template() {
    let app = TestApp::new().await;
    let org = app.org().await;
    welcome_kit(&org).await;
    org.admin(Method::POST, "/wallet/top-ups", Some(json!({"amount": 1})))
        .await
        .ok(201);
    let id = automation(&org, welcome_flow(&org)).await;
    let customer = org.stage("Customer").await;
    let c = org.contact(json!({"fullName": "Ana", "primaryPhone": "+5215512340001", "consent": {"given": true}})).await;
    let cid = c.id();
    // No phone identity on this one: the condition stops it.
    let no_app = org.contact(json!({"fullName": "Email only", "primaryEmail": "e@example.com", "consent": {"given": true}})).await;
    org.patch(
        &format!("/contacts/{cid}"),
        json!({"lifecycleStageId": customer}),
    )
    .await
    .ok(200);
    org.patch(
        &format!("/contacts/{}", no_app.id()),
        json!({"lifecycleStageId": customer}),
    )
    .await
    .ok(200);
    let out = app.automation_pass().await;
    assert_eq!(out.runs, 2, "both runs start and reach the wait");
    let logs = org
        .get(&format!("/automations/{id}/logs?result=waiting"))
        .await
        .ok(200);
    assert_eq!(logs["meta"]["total"], 2);
    assert_eq!(
        app.automation_pass().await.runs,
        0,
        "the wait is 30 minutes"
    );
    assert_eq!(balance(&org).await, 1.0);
    app.clock.advance(Duration::minutes(31));
    assert_eq!(app.automation_pass().await.runs, 2);
    let completed = org
        .get(&format!("/automations/{id}/logs?result=completed"))
        .await
        .ok(200);
    assert_eq!(completed["meta"]["total"], 1);
    let run = &completed["data"][0];
    assert_eq!(run["contact"]["id"], cid);
    let outcomes: Vec<&str> = run["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(
        outcomes,
        vec!["waiting", "passed", "charged", "sent", "done"]
    );
    assert!(run["finishedAt"].is_string());
    let stopped = org
        .get(&format!("/automations/{id}/logs?result=condition"))
        .await
        .ok(200);
    assert_eq!(stopped["meta"]["total"], 1);
    assert_eq!(stopped["data"][0]["contact"]["fullName"], "Email only");
    // The wallet paid for exactly one message, and the ledger says why.
    let w = org.get("/wallet").await.ok(200);
    let charge = w["recentEntries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "CHARGE")
        .unwrap()
        .clone();
    assert!(
        charge["description"]
            .as_str()
            .unwrap()
            .contains("Welcome customers")
    );
    assert!((balance(&org).await - (1.0 + charge["amount"].as_f64().unwrap())).abs() < 1e-9);
    // The tag action recorded the change like any other.
    assert_eq!(
        org.get(&format!("/contacts/{cid}")).await.ok(200)["tags"],
        json!(["welcomed"])
    );
    // The API view.
    let a = org.get(&format!("/automations/{id}")).await.ok(200);
    assert_eq!(
        a["triggerLabel"],
        "When a contact enters the stage Customer"
    );
    assert_eq!(
        a["stepsSummary"],
        json!([
            "Wait 30 minutes",
            "If the channel is MESSAGING_APP_A",
            "Send the template welcome",
            "Add the tag welcomed"
        ])
    );
    assert_eq!(a["runs7d"], 2);
    assert_eq!(a["failureCount"], 0);
    assert!(a["lastRunAt"].is_string());
    let list = org.get("/automations").await.ok(200);
    assert_eq!(list["summary"]["active"], 1);
    assert_eq!(list["summary"]["runs7d"], 2);
    assert_eq!(list["summary"]["templatesSent7d"], 1);
    assert_eq!(
        list["summary"]["templatesCost7d"],
        -charge["amount"].as_f64().unwrap()
    );
    assert_eq!(list["summary"]["currency"], "USD");
}

#[tokio::test]
async fn five_consecutive_failures_pause_the_automation() {
    let app = TestApp::new().await;
    let org = app.org().await;
    welcome_kit(&org).await;
    // No money: every SEND_TEMPLATE fails.
    let mut flow = welcome_flow(&org);
    flow["steps"] =
        json!([{"type": "ACTION", "config": {"kind": "SEND_TEMPLATE", "value": "welcome"}}]);
    let id = automation(&org, flow).await;
    let customer = org.stage("Customer").await;
    for i in 0..6 {
        let c = org
            .contact(
                json!({"primaryPhone": format!("+52155123400{i}1"), "consent": {"given": true}}),
            )
            .await;
        org.patch(
            &format!("/contacts/{}", c.id()),
            json!({"lifecycleStageId": customer}),
        )
        .await
        .ok(200);
    }
    let out = app.automation_pass().await;
    assert_eq!(
        out.failed, 5,
        "the sixth run is skipped once the automation is paused"
    );
    let a = org.get(&format!("/automations/{id}")).await.ok(200);
    assert_eq!(a["status"], "PAUSED_BY_FAILURE");
    assert_eq!(a["failureCount"], 5);
    assert!(
        a["pausedReason"]
            .as_str()
            .unwrap()
            .contains("Saldo insuficiente")
    );
    let logs = org.get(&format!("/automations/{id}/logs")).await.ok(200);
    assert_eq!(logs["meta"]["total"], 6);
    assert_eq!(
        org.get(&format!("/automations/{id}/logs?result=failed"))
            .await
            .ok(200)["meta"]["total"],
        5
    );
    assert_eq!(
        org.get(&format!("/automations/{id}/logs?result=skipped"))
            .await
            .ok(200)["meta"]["total"],
        1
    );
    let list = org.get("/automations?tab=paused").await.ok(200);
    assert_eq!(list["data"].as_array().unwrap().len(), 1);
    assert_eq!(list["summary"]["pausedByFailure"], 1);
    assert_eq!(list["summary"]["failures7d"], 5);
    assert_eq!(
        list["summary"]["failureExample"],
        "Saldo insuficiente en la wallet."
    );
    // Reactivated by the operator: the count starts again.
    let r = org
        .admin(
            Method::PATCH,
            &format!("/automations/{id}"),
            Some(json!({"status": "ACTIVE"})),
        )
        .await
        .ok(200);
    assert_eq!(
        (r["status"].as_str(), r["failureCount"].as_u64()),
        (Some("ACTIVE"), Some(0))
    );
    assert_eq!(r["pausedReason"], Value::Null);
}

#[tokio::test]
async fn reply_wallet_and_no_response_triggers() {
    let app = TestApp::new().await;
    let org = app.org().await;
    welcome_kit(&org).await;
    let tag = |name: &str, trigger: &str, config: Value| {
        json!({"name": name, "status": "ACTIVE", "triggerType": trigger, "triggerConfig": config,
               "createdByUserId": org.user_id, "steps": [{"type": "ACTION", "config": {"kind": "ADD_TAG", "value": name}}]})
    };
    let replied = automation(&org, tag("replied", "CAMPAIGN_REPLIED", json!({}))).await;
    let silent = automation(&org, tag("silent", "NO_RESPONSE_DAYS", json!({"days": 3}))).await;
    let low = automation(
        &org,
        json!({"name": "low", "status": "ACTIVE", "triggerType": "WALLET_LOW_BALANCE", "triggerConfig": {"threshold": 0.95},
               "createdByUserId": org.user_id, "steps": [{"type": "WAIT", "config": {"kind": "MINUTES", "value": 1}}]}),
    )
    .await;
    // A campaign to two contacts.
    let number = org.get("/phone-numbers").await.ok(200)["data"][0]["id"].clone();
    let template = org.get("/templates").await.ok(200)["data"][0]["id"].clone();
    let a = org
        .contact(json!({"primaryPhone": "+5215512345001", "consent": {"given": true}}))
        .await;
    let b = org
        .contact(json!({"primaryPhone": "+5215512345002", "consent": {"given": true}}))
        .await;
    let c = org
        .post(
            "/campaigns",
            json!({"name": "C1", "phoneNumberId": number, "templateId": template}),
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
    org.admin(Method::POST, "/wallet/top-ups", Some(json!({"amount": 1})))
        .await
        .ok(201);
    org.post(&format!("/campaigns/{cid}/send"), json!({}))
        .await
        .ok(200);
    app.send_pass().await;
    // The charge took the wallet under 0.95: one low-balance run.
    // A replies; B stays silent for 3 days.
    org.admin(
        Method::POST,
        "/inbound",
        Some(json!({"channelType": "MESSAGING_APP_A", "externalId": "5215512345001"})),
    )
    .await
    .ok(200);
    app.automation_pass().await;
    app.clock.advance(Duration::days(3) + Duration::minutes(1));
    app.automation_pass().await;
    app.automation_pass().await;
    let total = |id: &str| {
        let org = &org;
        let path = format!("/automations/{id}/logs");
        async move {
            org.get(&path).await.ok(200)["meta"]["total"]
                .as_u64()
                .unwrap()
        }
    };
    assert_eq!(total(&replied).await, 1);
    assert_eq!(
        total(&silent).await,
        1,
        "only the contact that did not reply, once"
    );
    assert_eq!(
        total(&low).await,
        1,
        "crossing the threshold once fires once"
    );
    assert_eq!(
        org.get(&format!("/contacts/{}", a.id())).await.ok(200)["tags"],
        json!(["replied"])
    );
    assert_eq!(
        org.get(&format!("/contacts/{}", b.id())).await.ok(200)["tags"],
        json!(["silent"])
    );
}

#[tokio::test]
async fn definitions_are_validated_and_lists_filtered() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let r = org
        .admin(
            Method::POST,
            "/automations",
            Some(json!({"name": "x", "triggerType": "NO_RESPONSE_DAYS", "createdByUserId": org.user_id,
                        "steps": [{"type": "CONDITION", "config": {"kind": "SEND_TEMPLATE", "value": "x"}}]})),
        )
        .await;
    r.assert_invalid("triggerConfig.days must be an integer from 1 to 365");
    r.assert_invalid("steps.0.config.kind SEND_TEMPLATE does not fit a CONDITION step");
    org.admin(Method::POST, "/automations", Some(json!({"name": "x", "triggerType": "CAMPAIGN_REPLIED", "createdByUserId": org.user_id, "steps": []})))
        .await
        .assert_invalid("steps must contain at least 1 elements");
    let draft = automation(&org, {
        let mut f = welcome_flow(&org);
        f["status"] = json!("DRAFT");
        f["name"] = json!("Draft flow");
        f
    })
    .await;
    let archived = automation(&org, {
        let mut f = welcome_flow(&org);
        f["status"] = json!("ARCHIVED");
        f
    })
    .await;
    let ids = |v: &Value| {
        v["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.id().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        ids(&org.get("/automations").await.ok(200)),
        vec![draft.clone()]
    );
    assert_eq!(
        ids(&org.get("/automations?includeArchived=true").await.ok(200)).len(),
        2
    );
    assert_eq!(
        ids(&org.get("/automations?tab=drafts").await.ok(200)),
        vec![draft.clone()]
    );
    assert_eq!(
        ids(&org.get("/automations?q=DRAFT").await.ok(200)),
        vec![draft.clone()]
    );
    assert_eq!(
        ids(&org
            .get("/automations?trigger=CAMPAIGN_REPLIED")
            .await
            .ok(200))
        .len(),
        0
    );
    org.get("/automations?includeArchived=yes")
        .await
        .assert_invalid("includeArchived must be one of the following values: true, false");
    org.get(&format!("/automations/{draft}/logs?result=lost"))
        .await
        .assert_invalid("result must be one of the following values: all, completed, waiting, condition, skipped, failed");
    // A DRAFT never runs.
    let customer = org.stage("Customer").await;
    let c = org.contact(json!({"primaryPhone": "+5215512349991"})).await;
    org.patch(
        &format!("/contacts/{}", c.id()),
        json!({"lifecycleStageId": customer}),
    )
    .await
    .ok(200);
    assert_eq!(app.automation_pass().await.runs, 0);
    // Scope and tenancy.
    let no_scope = org.key_with(&["contacts:read"]).await;
    app.call(Method::GET, "/automations", Some(&no_scope), None)
        .await
        .assert_error(403, Some("API_KEY_SCOPE_MISSING"));
    let other = app.org().await;
    other
        .get(&format!("/automations/{draft}"))
        .await
        .assert_error(404, None);
    other
        .get(&format!("/automations/{archived}/logs"))
        .await
        .assert_error(404, None);
}
