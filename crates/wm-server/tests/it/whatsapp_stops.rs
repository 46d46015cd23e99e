//! The platform stopping a send: an expired token or a throughput limit stops the chunk at
//! once (the calls already under way finish; no more are made), the campaign pauses or
//! backs off, and afterwards every person gets their message exactly once. A pause from
//! outside the chunk (a template paused by a platform webhook, a user's pause) stops the
//! next call too, even while the chunk is paced.

use std::collections::HashMap;

use axum::http::Method;
use serde_json::{Value, json};
use wm_fake_graph::{AttemptOutcome, NumberSpec, StatusOptions};
use wm_server::worker::dispatch::SEND_CONCURRENCY;

use crate::support::ledger;
use crate::whatsapp_kit::{NUMBER, PNID, Ready, WABA, Wa, drive, ready};

/// How many sends the fake answered with `code`.
fn refused(wa: &Wa, code: i64) -> usize {
    wa.fake
        .attempts()
        .iter()
        .filter(|a| matches!(a.outcome, AttemptOutcome::Refused { code: c, .. } if c == code))
        .count()
}

/// Everyone got exactly one message, charged once and never refunded.
async fn each_once(wa: &Wa, r: &Ready<'_>) {
    let mut per_person: HashMap<String, usize> = HashMap::new();
    for m in wa.fake.accepted() {
        *per_person.entry(m.to).or_default() += 1;
    }
    assert_eq!(per_person.len(), r.people.len());
    assert!(per_person.values().all(|n| *n == 1), "a person got two");
    let w = r.org.get("/wallet").await.ok(200);
    assert_eq!(ledger(&w, "CHARGE").len(), 1);
    assert!(ledger(&w, "REFUND").is_empty());
}

#[tokio::test]
async fn an_expired_token_stops_the_chunk_at_once_and_pauses_the_campaign() {
    let wa = Wa::start(StatusOptions::default()).await;
    let r = ready(&wa, 200, 100.0).await;
    let id = &r.campaign;
    r.send().await;
    assert!(wa.fake.expire_token(PNID));
    let out = wa.app.send_pass().await;
    assert_eq!(out.sent, 0);
    // Only the calls already under way when the first refusal came back were made: at
    // most one per concurrent slot, not the chunk of 200.
    let refusals = refused(&wa, 190);
    assert!(
        (1..=SEND_CONCURRENCY).contains(&refusals),
        "{refusals} calls with an expired token"
    );
    assert_eq!(wa.fake.attempts().len(), refusals);
    let c = r.org.get(&format!("/campaigns/{id}")).await.ok(200);
    assert_eq!(c["status"], "PAUSED");
    assert_eq!(c["stopReason"], "PLATFORM_TOKEN_EXPIRED");
    assert_eq!(c["stats"]["pending"], 200, "nothing lost, nothing failed");
    // A new token, a resume: everything goes out, each once.
    wa.fake.register_number(NumberSpec {
        phone_number_id: PNID.into(),
        waba_id: WABA.into(),
        display_phone_number: NUMBER.trim_start_matches('+').into(),
        access_token: "EAAG-new-token".into(),
    });
    r.org
        .admin(
            Method::PATCH,
            &format!("/phone-numbers/{}", r.number),
            Some(json!({"accessToken": "EAAG-new-token"})),
        )
        .await
        .ok(200);
    r.org
        .post(&format!("/campaigns/{id}/resume"), json!({}))
        .await
        .ok(200);
    let c = drive(&wa, &r.org, id, 10).await;
    assert_eq!(c["status"], "COMPLETED", "{c}");
    assert_eq!(c["stats"]["delivered"], 200);
    assert_eq!(refused(&wa, 190), refusals, "no call after the pause");
    each_once(&wa, &r).await;
}

#[tokio::test]
async fn a_throughput_limit_stops_the_chunk_and_the_campaign_backs_off() {
    let wa = Wa::start(StatusOptions::default()).await;
    let r = ready(&wa, 200, 100.0).await;
    let id = &r.campaign;
    r.send().await;
    // The number is over its throughput until further notice.
    assert!(wa.fake.throttle_next(PNID, 100_000, 130_429));
    let out = wa.app.send_pass().await;
    let throttled = refused(&wa, 130_429);
    assert!(
        (1..=SEND_CONCURRENCY).contains(&throttled),
        "{throttled} calls sent into the throttle"
    );
    assert_eq!(out.retried, throttled);
    // The campaign backs off: an immediate pass makes no call.
    wa.app.send_pass().await;
    assert_eq!(wa.fake.attempts().len(), throttled);
    let c = r.org.get(&format!("/campaigns/{id}")).await.ok(200);
    assert_eq!(c["status"], "SENDING");
    assert_eq!(c["stats"]["pending"], 200);
    // The limit lifts: the rest goes out, the throttled ones after their backoff, each once.
    assert!(wa.fake.throttle_next(PNID, 0, 130_429));
    let c = drive(&wa, &r.org, id, 10).await;
    assert_eq!(c["status"], "COMPLETED", "{c}");
    assert_eq!(c["stats"]["delivered"], 200);
    each_once(&wa, &r).await;
}

/// What pauses the campaign in [`paused_mid_send`].
enum Pause {
    /// A signed `message_template_status_update` PAUSED for the campaign's template.
    TemplateWebhook,
    /// `POST /campaigns/{id}/pause`.
    User,
}

/// Sends a paced campaign (4 messages/s) in the background and pauses it once a few calls
/// went out. Returns the campaign after the send pass ended, and asserts that no call
/// reached the platform after the pause but those already under way when it was applied.
async fn paused_mid_send(wa: &Wa, pause: Pause) -> Value {
    let r = ready(wa, 40, 100.0).await;
    let id = &r.campaign;
    r.send().await;
    let state = wa.app.state.clone();
    let pass = tokio::spawn(async move {
        wm_server::worker::campaigns::CampaignWorker::new(state)
            .run_once()
            .await
    });
    for _ in 0..500 {
        if wa.fake.attempts().len() >= 3 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(wa.fake.attempts().len() >= 3, "the send did not start");
    match pause {
        // The platform has not refused a send yet: the webhook alone stops it.
        Pause::TemplateWebhook => wa.template_event("PAUSED", None, false).await,
        Pause::User => {
            r.org
                .post(&format!("/campaigns/{id}/pause"), json!({}))
                .await
                .ok(200);
        }
    }
    // What is under way now may still land; nothing claimed later may.
    let in_flight = wa.app.calls_in_flight().await;
    let made = wa.fake.attempts().len();
    let c = r.org.get(&format!("/campaigns/{id}")).await.ok(200);
    assert_eq!(c["status"], "PAUSED", "{c}");
    pass.await.unwrap().unwrap();
    let after = wa.fake.attempts().len() - made;
    assert!(
        after as u64 <= in_flight,
        "{after} calls reached the platform after the pause, {in_flight} were under way"
    );
    let c = r.org.get(&format!("/campaigns/{id}")).await.ok(200);
    assert!(c["stats"]["pending"].as_u64().unwrap() > 20, "{c}");
    c
}

#[tokio::test]
async fn a_template_paused_by_the_platform_mid_send_stops_the_next_call() {
    let wa = Wa::paced(StatusOptions::default(), 4).await;
    let c = paused_mid_send(&wa, Pause::TemplateWebhook).await;
    assert_eq!(c["stopReason"], "TEMPLATE_PAUSED", "{c}");
}

#[tokio::test]
async fn a_users_pause_mid_send_stops_the_next_call() {
    let wa = Wa::paced(StatusOptions::default(), 4).await;
    let c = paused_mid_send(&wa, Pause::User).await;
    assert_eq!(c["stopReason"], Value::Null, "{c}");
}
