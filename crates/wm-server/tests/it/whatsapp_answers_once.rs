//! A reply is sent at most once, as a campaign message is: an answer lost on the way back is
//! never sent again and its status webhook settles it; a sender killed mid-call leaves a
//! reply the reconciliation window fails and refunds; a reply sent by one replica is settled
//! by a status webhook another replica takes.

use serde_json::json;
use wm_fake_graph::StatusOptions;
use wm_server::services::replies::deliver;

use crate::support::{IdOf, Org};
use crate::whatsapp_kit::{Wa, open_conversation, thread_message};

const PERSON: &str = "5215512000001";

async fn conversation(wa: &Wa) -> (Org<'_>, String, String) {
    let (org, c, tpl, _) = open_conversation(wa, PERSON).await;
    (org, c, tpl)
}

async fn status_of(org: &Org<'_>, c: &str, id: &str) -> serde_json::Value {
    thread_message(org, c, id).await
}

fn texts_sent(wa: &Wa) -> usize {
    wa.fake
        .accepted()
        .iter()
        .filter(|m| m.message_type == "text")
        .count()
}

#[tokio::test]
async fn a_reply_whose_answer_is_lost_is_never_sent_again_and_its_status_settles_it() {
    let wa = Wa::start(StatusOptions::default()).await;
    let (org, c, _) = conversation(&wa).await;
    let sent = org
        .post(
            &format!("/conversations/{c}/messages"),
            json!({"type": "text", "text": {"body": "Enseguida"}}),
        )
        .await
        .ok(201);
    wa.fake.drop_next_response(PERSON);
    let out = deliver::run_once(&wa.app.state).await.unwrap();
    assert_eq!(
        (out.sent, out.failed, out.retried),
        (0, 0, 0),
        "outcome unknown"
    );
    for _ in 0..3 {
        deliver::run_once(&wa.app.state).await.unwrap();
    }
    assert_eq!(texts_sent(&wa), 1, "never sent again");
    // The platform's statuses carry the reply's id: they settle it.
    wa.settle().await;
    let m = status_of(&org, &c, sent.id()).await;
    assert_eq!(m["status"], "DELIVERED", "{m}");
    // Past the reconciliation window nothing changes for a settled reply.
    wa.app.clock.advance(chrono::Duration::minutes(16));
    assert_eq!(deliver::run_once(&wa.app.state).await.unwrap().failed, 0);
    assert_eq!(status_of(&org, &c, sent.id()).await["status"], "DELIVERED");
}

#[tokio::test]
async fn a_sender_killed_mid_call_leaves_a_reply_that_is_failed_and_refunded_not_resent() {
    let wa = Wa::start(StatusOptions {
        enabled: false,
        ..StatusOptions::default()
    })
    .await;
    let (org, c, tpl) = conversation(&wa).await;
    let before = crate::kit::balance(&org).await;
    let sent = org
        .post(
            &format!("/conversations/{c}/messages"),
            json!({"type": "template", "template": {"templateId": tpl, "variables": {"1": "Ana"}}}),
        )
        .await
        .ok(201);
    assert!(crate::kit::balance(&org).await < before, "charged");
    // A replica's sender makes the call and is killed while waiting for the answer.
    wa.fake.hang_next_response(PERSON);
    let doomed = wa.app.replica();
    let pass = tokio::spawn(async move { deliver::run_once(&doomed.state).await });
    for _ in 0..200 {
        if wa.fake.accepted_count() == 1 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(wa.fake.accepted_count(), 1, "the call reached the platform");
    pass.abort();
    let _ = pass.await;
    // The survivor does not send it again…
    for _ in 0..3 {
        deliver::run_once(&wa.app.state).await.unwrap();
    }
    assert_eq!(wa.fake.accepted_count(), 1);
    assert_eq!(status_of(&org, &c, sent.id()).await["status"], "PENDING");
    // …and after the reconciliation window it fails "outcome unknown" and is refunded.
    wa.app.clock.advance(chrono::Duration::minutes(16));
    assert_eq!(deliver::run_once(&wa.app.state).await.unwrap().failed, 1);
    let m = status_of(&org, &c, sent.id()).await;
    assert_eq!(m["status"], "FAILED");
    assert!(
        m["errorMessage"]
            .as_str()
            .unwrap()
            .starts_with("Outcome unknown")
    );
    assert!(
        (crate::kit::balance(&org).await - before).abs() < 1e-9,
        "refunded"
    );
    assert_eq!(wa.fake.accepted_count(), 1, "sent at most once");
}

#[tokio::test]
async fn a_reply_sent_by_one_replica_is_settled_by_a_webhook_another_takes() {
    let wa = Wa::start(StatusOptions {
        read: true,
        ..StatusOptions::default()
    })
    .await;
    let (org, c, _) = conversation(&wa).await;
    let sender = wa.app.replica();
    let sent = org
        .post(
            &format!("/conversations/{c}/messages"),
            json!({"type": "text", "text": {"body": "Listo"}}),
        )
        .await
        .ok(201);
    assert_eq!(deliver::run_once(&sender.state).await.unwrap().sent, 1);
    // The platform's webhooks reach the other replica's listener, whose applier applies them.
    wa.settle().await;
    let m = status_of(&org, &c, sent.id()).await;
    assert_eq!(m["status"], "READ", "{m}");
    assert_eq!(texts_sent(&wa), 1);
}
