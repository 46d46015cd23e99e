//! A batch larger than one charge step (here 10 recipients, 5,000 in production) is charged
//! once, in full, before any platform call, and queued a step at a time by the worker:
//! everyone is sent once, whoever may no longer be messaged by their step fails uncharged
//! and what was reserved for them is refunded, and a balance that cannot pay the whole batch
//! changes nothing.

use chrono::Duration;
use sea_orm::{EntityTrait, PaginatorTrait};
use serde_json::{Value, json};
use wm_server::db::entities::simulated_send;

use crate::kit::{balance, campaign, campaign_to, contacts, recipients, setup, top_up};
use crate::support::{IdOf, Org, TestApp, ledger};

const STEP: u64 = 10;

async fn large_app() -> TestApp {
    TestApp::with_settings(|s| s.charge_step = STEP).await
}

async fn platform_messages(app: &TestApp) -> u64 {
    simulated_send::Entity::find()
        .count(&app.state.db.conn)
        .await
        .unwrap()
}

/// Worker passes until the campaign completes (at most `n`).
async fn run_to_completion(app: &TestApp, org: &Org<'_>, id: &str, n: usize) -> Value {
    for _ in 0..n {
        app.send_pass().await;
        let c = org.get(&format!("/campaigns/{id}")).await.ok(200);
        if c["status"] == "COMPLETED" {
            return c;
        }
    }
    panic!("campaign {id} did not complete in {n} passes");
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6
}

#[tokio::test]
async fn a_large_batch_is_charged_once_and_each_recipient_sent_once() {
    let app = large_app().await;
    let org = app.org().await;
    let s = setup(&org).await;
    let ids = contacts(&org, 35, "t").await;
    let id = campaign_to(&org, &s, &s.plain, &ids).await;
    let price = org.price_of_one(&id).await;
    top_up(&org, 100.0).await;
    // Opted out before the send: never charged.
    org.patch(&format!("/contacts/{}", ids[0]), json!({"optedOut": true}))
        .await
        .ok(200);
    let preview = org.preview_cost(&id).await;
    assert_eq!(preview["recipientCount"], 35);
    assert!(close(
        preview["estimatedTotal"].as_f64().unwrap(),
        34.0 * price
    ));

    let c = org
        .post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .ok(200);
    assert_eq!(c["status"], "SENDING");
    assert!(close(balance(&org).await, 100.0 - 34.0 * price));
    assert_eq!(platform_messages(&app).await, 0, "charged before any call");
    // Opted out after the charge, before the worker queued its step: refunded.
    org.patch(&format!("/contacts/{}", ids[34]), json!({"optedOut": true}))
        .await
        .ok(200);

    let c = run_to_completion(&app, &org, &id, 10).await;
    assert_eq!(c["stats"]["total"], 35);
    assert_eq!(c["stats"]["delivered"], 33);
    assert_eq!(c["stats"]["failed"], 2);
    assert_eq!(
        platform_messages(&app).await,
        33,
        "each recipient sent once"
    );
    let w = org.get("/wallet").await.ok(200);
    let charges = ledger(&w, "CHARGE");
    assert_eq!(charges.len(), 1, "{charges:?}");
    assert!(close(charges[0], -34.0 * price));
    let refunds = ledger(&w, "REFUND");
    assert_eq!(refunds.len(), 1, "{refunds:?}");
    assert!(close(refunds[0], price));
    assert!(close(balance(&org).await, 100.0 - 33.0 * price));

    // More passes send nothing more.
    app.send_pass().await;
    assert_eq!(platform_messages(&app).await, 33);
}

#[tokio::test]
async fn a_large_batch_the_balance_cannot_pay_changes_nothing() {
    let app = large_app().await;
    let org = app.org().await;
    let s = setup(&org).await;
    let ids = contacts(&org, 25, "t").await;
    let id = campaign_to(&org, &s, &s.plain, &ids).await;
    let price = org.price_of_one(&id).await;
    top_up(&org, 24.5 * price).await;
    let before = balance(&org).await;
    let refused = org.post(&format!("/campaigns/{id}/send"), json!({})).await;
    refused.assert_error(400, None);
    assert_eq!(refused.body["message"], "Saldo insuficiente en la wallet.");
    let c = org.get(&format!("/campaigns/{id}")).await.ok(200);
    assert_eq!(c["status"], "DRAFT");
    assert!(close(balance(&org).await, before));
    app.send_pass().await;
    assert_eq!(platform_messages(&app).await, 0);

    top_up(&org, price).await;
    org.post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .ok(200);
    let c = run_to_completion(&app, &org, &id, 10).await;
    assert_eq!(c["stats"]["delivered"], 25);
    assert_eq!(platform_messages(&app).await, 25);
}

#[tokio::test]
async fn a_contact_messageable_again_by_its_step_is_charged_then() {
    let app = large_app().await;
    let org = app.org().await;
    let s = setup(&org).await;
    let mut ids = contacts(&org, 15, "t").await;
    // One in Spain: the only recipient of its market.
    let spain = org
        .contact(json!({"fullName": "Eva", "primaryPhone": "+34612345678",
                        "consent": {"given": true}}))
        .await;
    ids.push(spain.id().to_owned());
    let id = campaign_to(&org, &s, &s.plain, &ids).await;
    let preview = org.preview_cost(&id).await;
    let markets = preview["byMarket"].as_array().unwrap();
    assert_eq!(markets.len(), 2, "{markets:?}");
    let mexico = markets.iter().find(|m| m["recipientCount"] == 15).unwrap();
    let price = mexico["totalCost"].as_f64().unwrap();
    let full = preview["estimatedTotal"].as_f64().unwrap();
    top_up(&org, 100.0).await;
    for back in [&ids[14], &ids[15]] {
        org.patch(&format!("/contacts/{back}"), json!({"optedOut": true}))
            .await
            .ok(200);
    }
    org.post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .ok(200);
    assert!(close(balance(&org).await, 100.0 - 14.0 * price));
    for back in [&ids[14], &ids[15]] {
        org.patch(&format!("/contacts/{back}"), json!({"optedOut": false}))
            .await
            .ok(200);
    }
    let c = run_to_completion(&app, &org, &id, 10).await;
    assert_eq!(c["stats"]["delivered"], 16);
    assert_eq!(platform_messages(&app).await, 16);
    let w = org.get("/wallet").await.ok(200);
    // What the step charged again may leave a fraction of the reserve, refunded at close:
    // net, the wallet paid exactly the 16 messages.
    let charged: f64 = ledger(&w, "CHARGE").iter().sum();
    let refunded: f64 = ledger(&w, "REFUND").iter().sum();
    assert!(
        close(charged + refunded, -full),
        "{charged} + {refunded} vs {full}"
    );
    assert!(refunded < price, "no whole message refunded: {refunded}");
    assert!(close(balance(&org).await, 100.0 - full));
}

#[tokio::test]
async fn a_large_scheduled_start_is_charged_once_by_the_worker() {
    let app = large_app().await;
    let org = app.org().await;
    let s = setup(&org).await;
    let ids = contacts(&org, 23, "t").await;
    let id = campaign_to(&org, &s, &s.plain, &ids).await;
    let price = org.price_of_one(&id).await;
    top_up(&org, 100.0).await;
    let at = (app.clock_now() + Duration::hours(1)).to_rfc3339();
    org.post(
        &format!("/campaigns/{id}/send"),
        json!({"when": "scheduled", "scheduledAt": at}),
    )
    .await
    .ok(200);
    app.clock.advance(Duration::minutes(61));
    // A replica's pass at the same time starts it at most once.
    let replica = app.replica();
    let (a, b) = tokio::join!(app.send_pass(), replica.send_pass());
    assert_eq!(a.started + b.started, 1);
    let c = run_to_completion(&app, &org, &id, 10).await;
    assert_eq!(c["stats"]["delivered"], 23);
    assert_eq!(platform_messages(&app).await, 23);
    let w = org.get("/wallet").await.ok(200);
    let charges = ledger(&w, "CHARGE");
    assert_eq!(charges.len(), 1, "{charges:?}");
    assert!(close(charges[0], -23.0 * price));
    assert!(ledger(&w, "REFUND").is_empty());
}

#[tokio::test]
async fn an_allowance_covers_the_first_recipients_of_a_large_utility_batch() {
    // 15 included messages over 35 recipients: the batch is priced a step (10) at a time in
    // the audience's order, and the allowance runs out in the second step.
    let app = large_app().await;
    let org = app
        .org_with(json!({"name": "Allowance", "includedUtilityMessages": 15}))
        .await;
    let s = setup(&org).await;
    let ids = contacts(&org, 35, "t").await;
    let id = campaign_to(&org, &s, &s.utility, &ids).await;
    let order: Vec<String> = recipients(&org, &id, "")
        .await
        .iter()
        .map(|r| r["contact"].id().to_owned())
        .collect();
    // The third in the audience's order may no longer be messaged: the allowance passes it.
    org.patch(
        &format!("/contacts/{}", order[2]),
        json!({"optedOut": true}),
    )
    .await
    .ok(200);
    let preview = org.preview_cost(&id).await;
    let price = preview["byMarket"][0]["totalCost"].as_f64().unwrap();
    assert_eq!(preview["recipientCount"], 35, "every step read once");
    assert_eq!(preview["includedUtilityRemaining"], 15);
    assert!(close(
        preview["estimatedTotal"].as_f64().unwrap(),
        19.0 * price
    ));

    top_up(&org, 100.0).await;
    org.post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .ok(200);
    assert!(close(balance(&org).await, 100.0 - 19.0 * price));
    let c = run_to_completion(&app, &org, &id, 10).await;
    assert_eq!(c["stats"]["delivered"], 34);
    let covered: Vec<bool> = recipients(&org, &id, "")
        .await
        .iter()
        .map(|x| x["coveredByAllowance"] == true)
        .collect();
    let first: Vec<bool> = (0..35).map(|i| i < 16 && i != 2).collect();
    assert_eq!(covered, first, "the first 15 that could be messaged");
    let w = org.get("/wallet").await.ok(200);
    assert_eq!(w["includedUtilityRemaining"], 0);
    assert!(close(balance(&org).await, 100.0 - 19.0 * price));
}

/// An audience is read a step at a time (here 4 contacts) by a cursor on (creation time,
/// id): contacts created in the same millisecond, and steps that end inside such a group,
/// are each added once, from every kind of source.
#[tokio::test]
async fn an_audience_read_in_steps_adds_each_contact_once() {
    let app = TestApp::with_settings(|s| s.audience_step = 4).await;
    let org = app.org().await;
    let s = setup(&org).await;
    let mut tagged = Vec::new();
    // Two groups of contacts sharing a creation time, and one contact left out.
    for i in 0..13 {
        if i == 7 {
            app.clock.advance(Duration::seconds(1));
        }
        let c = org
            .contact(
                json!({"fullName": format!("Ana {i}"), "primaryPhone": format!("+52155120{i:05}"),
                            "consent": {"given": true}, "tags": ["t"]}),
            )
            .await;
        tagged.push(c.id().to_owned());
    }
    org.contact(
        json!({"fullName": "Not tagged", "primaryPhone": "+5215512099999",
                       "consent": {"given": true}}),
    )
    .await;
    tagged.sort();
    let mut with_dup = tagged.clone();
    with_dup.push(tagged[5].clone());

    for (audience, expected) in [
        (json!({"tag": "t"}), 13),
        (json!({"all": true}), 14),
        (json!({"contactIds": with_dup}), 13),
    ] {
        let id = campaign(&org, &s, &s.plain).await;
        let added = org
            .post(&format!("/campaigns/{id}/recipients"), audience.clone())
            .await
            .ok(200);
        assert_eq!(added["total"], expected, "{audience}");
        assert_eq!(added["eligible"], expected, "{audience}");
        assert_eq!(added["added"], expected, "{audience}");
        assert_eq!(added["alreadyIn"], 0, "{audience}");
        assert_eq!(added["totalRecipients"], expected, "{audience}");
        let mut listed: Vec<String> = recipients(&org, &id, "")
            .await
            .iter()
            .map(|r| r["contact"].id().to_owned())
            .collect();
        listed.sort();
        listed.dedup();
        assert_eq!(listed.len(), expected, "{audience}");
        if expected == 13 {
            assert_eq!(listed, tagged, "{audience}");
        }
        // Again: everyone is already in.
        let again = org
            .post(&format!("/campaigns/{id}/recipients"), audience.clone())
            .await
            .ok(200);
        assert_eq!(again["added"], 0, "{audience}");
        assert_eq!(again["alreadyIn"], expected, "{audience}");
        assert_eq!(again["totalRecipients"], expected, "{audience}");
    }
}

/// An audience added while its campaign is sent: each step of it is in the audience before
/// the send commits or not at all, and whoever is in the audience then is charged and sent
/// once, none failing unpaid (the send reads the campaign under lock, so no step commits
/// between its pricing and its charge).
#[tokio::test]
async fn an_audience_added_during_a_send_is_charged_whole_or_not_at_all() {
    let app = TestApp::with_settings(|s| {
        s.charge_step = STEP;
        s.audience_step = 4;
    })
    .await;
    let org = app.org().await;
    let s = setup(&org).await;
    let ids = contacts(&org, 40, "t").await;
    top_up(&org, 100.0).await;
    let mut sent_before = 0;
    // The send starts at once, then a little later, then later still: it lands before,
    // between and after the audience's steps.
    for wait in [0, 2, 6, 20] {
        let id = campaign_to(&org, &s, &s.plain, &ids[..1]).await;
        let price = org.price_of_one(&id).await;
        let before = balance(&org).await;
        let (audience, send) = (
            format!("/campaigns/{id}/recipients"),
            format!("/campaigns/{id}/send"),
        );
        let (added, sent) = tokio::join!(org.post(&audience, json!({"all": true})), async {
            tokio::time::sleep(std::time::Duration::from_millis(wait)).await;
            org.post(&send, json!({})).await
        },);
        assert_eq!(sent.ok(200)["status"], "SENDING");
        let c = run_to_completion(&app, &org, &id, 20).await;
        let n = c["stats"]["total"].as_u64().unwrap();
        match added.status.as_u16() {
            200 => assert_eq!(n, 40, "the whole audience went in before the send"),
            _ => {
                added.assert_error(400, None);
                assert!((1..=40).contains(&n), "{n} recipients");
            }
        }
        assert_eq!(c["stats"]["delivered"], n, "{c}");
        assert_eq!(c["stats"]["failed"], 0, "{c}");
        sent_before += n;
        assert_eq!(platform_messages(&app).await, sent_before);
        assert!(close(balance(&org).await, before - n as f64 * price));
    }
}

/// Audiences added to one campaign at once, from sources read in different orders (creation
/// order, listed ids, a tag): each answers 200, and each contact is in the audience once.
#[tokio::test]
async fn audiences_added_at_once_to_one_campaign_each_add_every_contact_once() {
    let app = TestApp::with_settings(|s| s.audience_step = 4).await;
    let org = app.org().await;
    let s = setup(&org).await;
    let mut ids = contacts(&org, 40, "t").await;
    ids.reverse();
    for _ in 0..3 {
        let id = campaign(&org, &s, &s.plain).await;
        let path = format!("/campaigns/{id}/recipients");
        let (all, listed, tagged) = tokio::join!(
            org.post(&path, json!({"all": true})),
            org.post(&path, json!({"contactIds": ids})),
            org.post(&path, json!({"tag": "t"})),
        );
        let added: u64 = [all, listed, tagged]
            .into_iter()
            .map(|r| r.ok(200)["added"].as_u64().unwrap())
            .sum();
        assert_eq!(added, 40, "each contact added by one of the three");
        let c = org.get(&format!("/campaigns/{id}")).await.ok(200);
        assert_eq!(c["stats"]["total"], 40);
    }
}
