//! wm on WhatsApp's Cloud API (the fake Graph API, which follows Meta's documented shapes):
//! sending exactly once per person through rate limits and refusals, a crash mid-send with
//! nothing sent twice and no receipt lost, and the webhook intake.

use std::collections::HashMap;

use serde_json::json;
use wm_fake_graph::{AttemptOutcome, Delivery, Injection, StatusOptions};

use crate::support::{IdOf, ledger};
use crate::whatsapp_kit::{
    PNID, Ready, Wa, campaign, drive, number, people, ready, synced_template,
};

/// Digits of a `+` number, as the platform's `to`.
fn to(phone: &str) -> String {
    phone.trim_start_matches('+').to_owned()
}

#[tokio::test]
async fn a_thousand_recipients_go_out_exactly_once_through_bursts_and_refusals() {
    let wa = Wa::paced(StatusOptions::default(), 80).await;
    wa.template("promo", "Hola {{1}}, llegó la promo");
    let org = wa.app.org().await;
    let number_id = number(&org).await;
    let tpl = synced_template(&org, "promo").await;
    let people = people(&org, 1000).await;
    let ids: Vec<String> = people.iter().map(|(id, _)| id.clone()).collect();
    // A few numbers are not on WhatsApp: most reported after acceptance, as the platform
    // usually does, some refused by the send call itself. One person stopped marketing
    // messages, and the number hits 130429 twice: a burst at the start and one mid-way.
    let undeliverable: Vec<&str> = people[10..14].iter().map(|(_, p)| p.as_str()).collect();
    for p in &undeliverable {
        wa.fake
            .inject(Injection::new(to(p), 131026).mode(Delivery::Async));
    }
    let refused_now: Vec<&str> = people[20..23].iter().map(|(_, p)| p.as_str()).collect();
    for p in &refused_now {
        wa.fake
            .inject(Injection::new(to(p), 131026).mode(Delivery::Sync));
    }
    let (stopped_id, stopped_phone) = people[500].clone();
    wa.fake
        .inject(Injection::new(to(&stopped_phone), 131050).mode(Delivery::Async));
    wa.fake.throttle_next(PNID, 5, 130429);
    let mid_burst: Vec<String> = people[600..603].iter().map(|(_, p)| to(p)).collect();
    for p in &mid_burst {
        wa.fake.inject(
            Injection::new(p.clone(), 130429)
                .mode(Delivery::Sync)
                .times(1),
        );
    }
    let id = campaign(&org, &number_id, &tpl, &ids).await;
    let price = org.price_of_one(&id).await;
    crate::kit::top_up(&org, 1000.0).await;
    org.post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .ok(200);
    let c = drive(&wa, &org, &id, 40).await;
    assert_eq!(c["status"], "COMPLETED", "{c}");

    // Every person got exactly one message (the fake counts what it accepted), except
    // those the send call refused for good.
    let mut per_person: HashMap<String, usize> = HashMap::new();
    for m in wa.fake.accepted() {
        *per_person.entry(m.to.clone()).or_default() += 1;
    }
    assert_eq!(per_person.len(), 1000 - refused_now.len());
    assert!(per_person.values().all(|n| *n == 1), "a person got two");
    for p in &refused_now {
        assert!(!per_person.contains_key(&to(p)), "{p} was refused");
    }
    // Both bursts were answered 130429 and retried: each throttled person was accepted
    // later, once (and charged once: see the ledger below).
    let throttled: Vec<String> = wa
        .fake
        .attempts()
        .into_iter()
        .filter(|a| matches!(a.outcome, AttemptOutcome::Refused { code: 130429, .. }))
        .filter_map(|a| a.to)
        .collect();
    assert_eq!(throttled.len(), 5 + mid_burst.len(), "{throttled:?}");
    for p in mid_burst.iter().chain(&throttled) {
        assert_eq!(per_person.get(p), Some(&1), "{p} after its 130429");
    }
    // Paced at the number's 80 messages per second: evenly spaced slots (the pacer's own
    // spacing is checked in `replicas`), measured here at the fake's side of
    // loopback, after each message's claim transaction: on SQLite's single writer that
    // claim waits behind other writes for a few milliseconds, which can bunch a few
    // arrivals into one window.
    let busiest = wa.fake.max_mps(PNID);
    assert!(
        (1..=88).contains(&busiest),
        "{busiest} in the busiest second"
    );
    // The variables filled the body parameters in position order.
    let first = wa
        .fake
        .accepted()
        .into_iter()
        .find(|m| m.to == to(&people[0].1))
        .unwrap();
    assert_eq!(first.body_params, vec!["Ana".to_owned()]);
    assert_eq!(
        first.biz_opaque_callback_data.as_deref().map(str::len),
        Some(36)
    );

    let failed = (undeliverable.len() + refused_now.len()) as u64 + 1;
    assert_eq!(c["stats"]["total"], 1000);
    assert_eq!(c["stats"]["failed"], failed);
    assert_eq!(c["stats"]["delivered"], 1000 - failed);
    assert_eq!(c["stats"]["pending"], 0);
    let stopped = org.get(&format!("/contacts/{stopped_id}")).await.ok(200);
    assert_eq!(stopped["optedOut"], true, "131050 opts the contact out");
    // One charge for the batch, one refund per message the platform did not deliver.
    let w = org.get("/wallet").await.ok(200);
    assert_eq!(ledger(&w, "CHARGE").len(), 1);
    let refunds = ledger(&w, "REFUND");
    assert_eq!(refunds.len() as u64, failed);
    let spent = 1000.0 - w["balance"].as_f64().unwrap();
    assert!(
        (spent - (1000 - failed) as f64 * price).abs() < 1e-6,
        "{spent}"
    );
    assert!((c["realCost"].as_f64().unwrap() - spent).abs() < 1e-6);
}

#[tokio::test]
async fn a_crash_mid_send_sends_nothing_twice_and_loses_no_receipt() {
    // Statuses only for what the platform really sent; one answer is lost on the way back
    // and one message's status never comes.
    let wa = Wa::start(StatusOptions::default()).await;
    let Ready {
        org,
        people,
        campaign: id,
        ..
    } = ready(&wa, 40, 100.0).await;
    org.post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .ok(200);
    // The platform accepts this one but its answer hangs: the worker is killed while every
    // other message is on the platform and recorded, and this one's call is in flight.
    wa.fake.hang_next_response(&to(&people[5].1));
    wa.app
        .crash_mid_send(wa.app.restart(None), || async {
            wa.fake.accepted_count() == 40 && wa.app.calls_in_flight().await == 1
        })
        .await;
    // Restarted after the lease: the rest goes out; the hung one is not sent again.
    wa.app.clock.advance(chrono::Duration::minutes(2));
    let c = drive(&wa, &org, &id, 20).await;
    assert_eq!(c["status"], "COMPLETED", "{c}");
    let mut per_person: HashMap<String, usize> = HashMap::new();
    for m in wa.fake.accepted() {
        *per_person.entry(m.to.clone()).or_default() += 1;
    }
    assert_eq!(per_person.len(), 40);
    assert!(per_person.values().all(|n| *n == 1), "{per_person:?}");
    // Its status webhook carried its correlation id: settled, not lost.
    assert_eq!(c["stats"]["delivered"], 40, "{c}");
    assert_eq!(c["stats"]["failed"], 0);
}

#[tokio::test]
async fn an_unconfirmed_attempt_fails_as_outcome_unknown_after_the_window() {
    let wa = Wa::start(StatusOptions {
        enabled: false,
        ..Default::default()
    })
    .await;
    let Ready {
        org,
        people,
        campaign: id,
        ..
    } = ready(&wa, 3, 10.0).await;
    org.post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .ok(200);
    let balance_after_charge = org.get("/wallet").await.ok(200)["balance"]
        .as_f64()
        .unwrap();
    // The platform takes it, but the connection drops before the answer.
    wa.fake.drop_next_response(&to(&people[1].1));
    let out = wa.app.send_pass().await;
    assert_eq!((out.sent, out.ambiguous), (2, 1));
    // Not re-sent on later passes while it waits for a status.
    wa.app.send_pass().await;
    assert_eq!(wa.fake.accepted_to(&to(&people[1].1)), 1);
    let c = org.get(&format!("/campaigns/{id}")).await.ok(200);
    assert_eq!(c["status"], "SENDING");
    assert_eq!(c["stats"]["pending"], 1);
    // After the reconciliation window: FAILED "outcome unknown", refunded.
    wa.app.clock.advance(chrono::Duration::minutes(16));
    let out = wa.app.send_pass().await;
    assert_eq!(out.reconciled, 1);
    wa.app.send_pass().await;
    let c = org.get(&format!("/campaigns/{id}")).await.ok(200);
    assert_eq!(c["status"], "COMPLETED");
    assert_eq!(c["stats"]["failed"], 1);
    let reason = c["errorsByReason"][0]["reason"].as_str().unwrap();
    assert!(reason.starts_with("Outcome unknown"), "{reason}");
    let w = org.get("/wallet").await.ok(200);
    assert_eq!(ledger(&w, "REFUND").len(), 1);
    assert!(w["balance"].as_f64().unwrap() > balance_after_charge);
    assert_eq!(wa.fake.accepted_count(), 3, "nothing was sent twice");
}

#[tokio::test]
async fn a_contact_without_the_variable_field_fails_before_the_call_and_is_refunded() {
    let wa = Wa::start(StatusOptions::default()).await;
    wa.template("promo", "Hola {{1}}, llegó la promo");
    let org = wa.app.org().await;
    let number_id = number(&org).await;
    let tpl = synced_template(&org, "promo").await;
    let mut ids = Vec::new();
    for (i, company) in [Some("ACME"), None, Some("  ")].into_iter().enumerate() {
        let c = org
            .contact(
                json!({"fullName": format!("Ana {i}"), "primaryPhone": format!("+52155120000{i}"),
                            "company": company, "consent": {"given": true}}),
            )
            .await;
        ids.push(c.id().to_owned());
    }
    let c = org
        .post(
            "/campaigns",
            json!({"name": "Empresas", "phoneNumberId": number_id, "templateId": tpl,
                   "variables": {"1": "{{company}}"}}),
        )
        .await
        .ok(201);
    let id = c.id().to_owned();
    org.post(
        &format!("/campaigns/{id}/recipients"),
        json!({"contactIds": ids}),
    )
    .await
    .ok(200);
    let price = org.price_of_one(&id).await;
    crate::kit::top_up(&org, 10.0).await;
    org.post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .ok(200);
    let c = drive(&wa, &org, &id, 5).await;
    assert_eq!(c["status"], "COMPLETED", "{c}");
    assert_eq!(c["stats"]["delivered"], 1);
    assert_eq!(c["stats"]["failed"], 2);
    // Only the contact with a company was called; nobody got an empty parameter.
    let attempts = wa.fake.attempts();
    assert_eq!(attempts.len(), 1, "{attempts:?}");
    assert_eq!(wa.fake.accepted()[0].body_params, vec!["ACME".to_owned()]);
    let why = "Template variable {{1}} (company) is empty for this contact";
    let failed = org
        .get(&format!("/campaigns/{id}/recipients?filter=failed"))
        .await
        .ok(200);
    let reasons: Vec<&str> = failed["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["errorMessage"].as_str().unwrap())
        .collect();
    assert_eq!(reasons, vec![why, why], "{failed}");
    // Charged for three, two refunded.
    let w = org.get("/wallet").await.ok(200);
    assert_eq!(ledger(&w, "REFUND").len(), 2);
    let spent = 10.0 - w["balance"].as_f64().unwrap();
    assert!((spent - price).abs() < 1e-6, "{spent}");
}
