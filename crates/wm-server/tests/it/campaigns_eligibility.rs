//! A contact who opts out or withdraws consent after joining an audience is neither charged
//! nor sent: at the charge of every batch (now, scheduled start, staggered, resume) and again
//! right before the platform call (refunded then).

use chrono::Duration;
use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter};
use serde_json::{Value, json};
use wm_server::db::entities::simulated_send;

use crate::kit::{balance, campaign_to, contacts, recipients, setup, top_up};
use crate::support::{IdOf, Org, TestApp, ledger};

const OPTED_OUT: &str = "The contact opted out of messaging";
const NO_CONSENT: &str = "The contact has not given consent to be messaged";

async fn phone_of(org: &Org<'_>, contact: &str) -> String {
    org.get(&format!("/contacts/{contact}")).await.ok(200)["primaryPhone"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn platform_messages_to(app: &TestApp, phone: &str) -> u64 {
    simulated_send::Entity::find()
        .filter(simulated_send::Column::Recipient.eq(phone))
        .count(&app.state.db.conn)
        .await
        .unwrap()
}

fn reasons(c: &Value) -> Vec<(String, u64)> {
    c["errorsByReason"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["reason"].as_str().unwrap().to_owned(),
                e["count"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[tokio::test]
async fn opted_out_or_unconsenting_after_the_audience_is_neither_charged_nor_sent() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let s = setup(&org).await;
    let ids = contacts(&org, 3, "t").await;
    let id = campaign_to(&org, &s, &s.plain, &ids).await;
    let price = org.price_of_one(&id).await;
    top_up(&org, 10.0).await;
    org.patch(&format!("/contacts/{}", ids[1]), json!({"optedOut": true}))
        .await
        .ok(200);
    org.patch(
        &format!("/contacts/{}", ids[2]),
        json!({"consent": {"given": false}}),
    )
    .await
    .ok(200);
    let preview = org.preview_cost(&id).await;
    assert!((preview["estimatedTotal"].as_f64().unwrap() - price).abs() < 1e-9);

    org.post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .ok(200);
    assert!(
        (10.0 - balance(&org).await - price).abs() < 1e-9,
        "only the one eligible recipient is charged"
    );
    app.send_pass().await;
    app.send_pass().await;
    let c = org.get(&format!("/campaigns/{id}")).await.ok(200);
    assert_eq!(c["status"], "COMPLETED");
    assert_eq!(c["stats"]["delivered"], 1);
    assert_eq!(c["stats"]["failed"], 2);
    let mut r = reasons(&c);
    r.sort();
    assert_eq!(
        r,
        vec![(NO_CONSENT.to_owned(), 1), (OPTED_OUT.to_owned(), 1)]
    );
    let failed = org
        .get(&format!("/campaigns/{id}/recipients?filter=failed"))
        .await
        .ok(200);
    for rec in failed["data"].as_array().unwrap() {
        assert_eq!(rec["totalCost"], 0.0);
        assert!(rec["failedAt"].is_string());
        assert!(rec["sentAt"].is_null());
    }
    for contact in &ids[1..] {
        let phone = phone_of(&org, contact).await;
        assert_eq!(platform_messages_to(&app, &phone).await, 0);
    }
    let w = org.get("/wallet").await.ok(200);
    assert_eq!(ledger(&w, "CHARGE").len(), 1);
    assert!(ledger(&w, "REFUND").is_empty());
}

/// Twenty consenting contacts, a campaign to them sent staggered in two batches of ten
/// with 100.00 in the wallet, and its first batch sent: its id and the price of one message.
async fn staggered_first_batch_sent(app: &TestApp, org: &Org<'_>) -> (String, f64) {
    let s = setup(org).await;
    let ids = contacts(org, 20, "t").await;
    let id = campaign_to(org, &s, &s.plain, &ids).await;
    let price = org.price_of_one(&id).await;
    top_up(org, 100.0).await;
    org.post(
        &format!("/campaigns/{id}/send"),
        json!({"when": "staggered", "batchSize": 10, "batchIntervalMin": 5}),
    )
    .await
    .ok(200);
    assert_eq!(app.send_pass().await.sent, 10);
    (id, price)
}

#[tokio::test]
async fn each_staggered_batch_re_checks_its_recipients() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let (id, price) = staggered_first_batch_sent(&app, &org).await;
    // The second batch is the ten newest recipients; one of them opts out meanwhile.
    let recipients = org
        .get(&format!(
            "/campaigns/{id}/recipients?filter=pending&pageSize=100"
        ))
        .await
        .ok(200);
    let waiting = recipients["data"][0]["contact"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    org.patch(&format!("/contacts/{waiting}"), json!({"optedOut": true}))
        .await
        .ok(200);
    app.clock.advance(Duration::minutes(5));
    let out = app.send_pass().await;
    assert_eq!((out.batches, out.sent), (1, 9));
    let w = org.get("/wallet").await.ok(200);
    let mut charges = ledger(&w, "CHARGE");
    charges.sort_by(f64::total_cmp);
    assert!((charges[0] + 10.0 * price).abs() < 1e-9, "{charges:?}");
    assert!((charges[1] + 9.0 * price).abs() < 1e-9, "{charges:?}");
    app.send_pass().await;
    let c = org.get(&format!("/campaigns/{id}")).await.ok(200);
    assert_eq!(c["status"], "COMPLETED");
    assert_eq!(reasons(&c), vec![(OPTED_OUT.to_owned(), 1)]);
    let phone = phone_of(&org, &waiting).await;
    assert_eq!(platform_messages_to(&app, &phone).await, 0);
}

#[tokio::test]
async fn an_opt_out_between_the_charge_and_the_platform_call_is_refunded() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let s = setup(&org).await;
    let ids = contacts(&org, 2, "t").await;
    let id = campaign_to(&org, &s, &s.plain, &ids).await;
    let price = org.price_of_one(&id).await;
    top_up(&org, 10.0).await;
    org.post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .ok(200);
    // Charged for both; one opts out before the worker calls the platform.
    org.patch(&format!("/contacts/{}", ids[0]), json!({"optedOut": true}))
        .await
        .ok(200);
    let out = app.send_pass().await;
    assert_eq!((out.sent, out.rejected), (1, 1));
    let w = org.get("/wallet").await.ok(200);
    assert_eq!(ledger(&w, "REFUND").len(), 1);
    assert!((10.0 - w["balance"].as_f64().unwrap() - price).abs() < 1e-9);
    let phone = phone_of(&org, &ids[0]).await;
    assert_eq!(platform_messages_to(&app, &phone).await, 0);
    app.send_pass().await;
    let c = org.get(&format!("/campaigns/{id}")).await.ok(200);
    assert_eq!(reasons(&c), vec![(OPTED_OUT.to_owned(), 1)]);
}

/// The campaign's failed recipients: (contact id, errorMessage), each uncharged and never
/// sent.
async fn failed_uncharged(org: &Org<'_>, campaign: &str) -> Vec<(String, String)> {
    let failed = org
        .get(&format!(
            "/campaigns/{campaign}/recipients?filter=failed&pageSize=100"
        ))
        .await
        .ok(200);
    let mut out = Vec::new();
    for rec in failed["data"].as_array().unwrap() {
        assert_eq!(rec["status"], "FAILED", "{rec}");
        assert_eq!(rec["totalCost"], 0.0, "{rec}");
        assert!(rec["sentAt"].is_null(), "{rec}");
        out.push((
            rec["contact"].id().to_owned(),
            rec["errorMessage"].as_str().unwrap().to_owned(),
        ));
    }
    out.sort();
    out
}

#[tokio::test]
async fn a_scheduled_start_re_checks_its_recipients() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let s = setup(&org).await;
    let ids = contacts(&org, 3, "t").await;
    let id = campaign_to(&org, &s, &s.plain, &ids).await;
    let price = org.price_of_one(&id).await;
    top_up(&org, 10.0).await;
    let at = (app.clock_now() + Duration::hours(1)).to_rfc3339();
    let c = org
        .post(
            &format!("/campaigns/{id}/send"),
            json!({"when": "scheduled", "scheduledAt": at}),
        )
        .await
        .ok(200);
    assert_eq!(c["status"], "SCHEDULED");
    // After scheduling, one opts out and another withdraws consent.
    org.patch(&format!("/contacts/{}", ids[1]), json!({"optedOut": true}))
        .await
        .ok(200);
    org.patch(
        &format!("/contacts/{}", ids[2]),
        json!({"consent": {"given": false}}),
    )
    .await
    .ok(200);
    app.clock.advance(Duration::minutes(61));
    let out = app.send_pass().await;
    assert_eq!((out.started, out.sent, out.rejected), (1, 1, 0));
    let w = org.get("/wallet").await.ok(200);
    let charges = ledger(&w, "CHARGE");
    assert_eq!(charges.len(), 1, "{charges:?}");
    assert!((charges[0] + price).abs() < 1e-9, "one recipient charged");
    assert!(ledger(&w, "REFUND").is_empty(), "nothing charged to refund");
    app.send_pass().await;
    let c = org.get(&format!("/campaigns/{id}")).await.ok(200);
    assert_eq!(c["status"], "COMPLETED");
    assert_eq!(c["stats"]["delivered"], 1);
    assert_eq!(c["stats"]["failed"], 2);
    let mut r = reasons(&c);
    r.sort();
    assert_eq!(
        r,
        vec![(NO_CONSENT.to_owned(), 1), (OPTED_OUT.to_owned(), 1)]
    );
    let mut want = vec![
        (ids[1].clone(), OPTED_OUT.to_owned()),
        (ids[2].clone(), NO_CONSENT.to_owned()),
    ];
    want.sort();
    assert_eq!(failed_uncharged(&org, &id).await, want);
    for contact in &ids[1..] {
        let phone = phone_of(&org, contact).await;
        assert_eq!(platform_messages_to(&app, &phone).await, 0);
    }
}

#[tokio::test]
async fn a_resume_re_checks_the_batch_it_charges() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let (id, price) = staggered_first_batch_sent(&app, &org).await;
    let c = org
        .post(&format!("/campaigns/{id}/pause"), json!({}))
        .await
        .ok(200);
    assert_eq!(c["status"], "PAUSED");
    // While paused, two of the ten still waiting stop being messageable.
    let waiting: Vec<String> = recipients(&org, &id, "filter=pending")
        .await
        .iter()
        .map(|r| r["contact"].id().to_owned())
        .collect();
    assert_eq!(waiting.len(), 10);
    let (opted, unconsenting) = (waiting[0].clone(), waiting[1].clone());
    org.patch(&format!("/contacts/{opted}"), json!({"optedOut": true}))
        .await
        .ok(200);
    org.patch(
        &format!("/contacts/{unconsenting}"),
        json!({"consent": {"given": false}}),
    )
    .await
    .ok(200);
    // The resume charges the next batch: eight, not ten.
    let c = org
        .post(&format!("/campaigns/{id}/resume"), json!({}))
        .await
        .ok(200);
    assert_eq!(c["status"], "SENDING");
    let w = org.get("/wallet").await.ok(200);
    let mut charges = ledger(&w, "CHARGE");
    charges.sort_by(f64::total_cmp);
    assert_eq!(charges.len(), 2, "{charges:?}");
    assert!((charges[0] + 10.0 * price).abs() < 1e-9, "{charges:?}");
    assert!((charges[1] + 8.0 * price).abs() < 1e-9, "{charges:?}");
    let out = app.send_pass().await;
    assert_eq!((out.sent, out.rejected), (8, 0));
    assert!(ledger(&org.get("/wallet").await.ok(200), "REFUND").is_empty());
    app.send_pass().await;
    let c = org.get(&format!("/campaigns/{id}")).await.ok(200);
    assert_eq!(c["status"], "COMPLETED");
    assert_eq!(c["stats"]["delivered"], 18);
    assert_eq!(c["stats"]["failed"], 2);
    let mut r = reasons(&c);
    r.sort();
    assert_eq!(
        r,
        vec![(NO_CONSENT.to_owned(), 1), (OPTED_OUT.to_owned(), 1)]
    );
    let mut want = vec![
        (opted.clone(), OPTED_OUT.to_owned()),
        (unconsenting.clone(), NO_CONSENT.to_owned()),
    ];
    want.sort();
    assert_eq!(failed_uncharged(&org, &id).await, want);
    for contact in [&opted, &unconsenting] {
        let phone = phone_of(&org, contact).await;
        assert_eq!(platform_messages_to(&app, &phone).await, 0);
    }
}
