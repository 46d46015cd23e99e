//! Replies through the platform's webhooks: a reply credits the message it quotes and no
//! other, and an inbound message whose application fails is neither lost nor applied twice.

use sea_orm::ConnectionTrait;
use serde_json::{Value, json};
use wm_fake_graph::{InboundKind, Posted, StatusOptions};

use crate::support::{Org, TestApp};
use crate::whatsapp_kit::{Wa, campaign, drive, number, people, synced_template};

/// One person, `n` campaigns sent to them (each delivered): the organisation, the
/// campaign ids, the person's WhatsApp id and the platform's id of each campaign's message.
async fn delivered(wa: &Wa, n: usize) -> (Org<'_>, Vec<String>, String, Vec<String>) {
    wa.template("promo", "Hola {{1}}");
    let org = wa.app.org().await;
    let number_id = number(&org).await;
    let tpl = synced_template(&org, "promo").await;
    let person = people(&org, 1).await.remove(0);
    crate::kit::top_up(&org, 10.0).await;
    let mut campaigns = Vec::new();
    for _ in 0..n {
        let id = campaign(&org, &number_id, &tpl, std::slice::from_ref(&person.0)).await;
        org.post(&format!("/campaigns/{id}/send"), json!({}))
            .await
            .ok(200);
        let c = drive(wa, &org, &id, 5).await;
        assert_eq!(c["stats"]["delivered"], 1, "{c}");
        campaigns.push(id);
    }
    let wamids = wa.fake.accepted().into_iter().map(|m| m.wamid).collect();
    let wa_id = person.1.trim_start_matches('+').to_owned();
    (org, campaigns, wa_id, wamids)
}

/// The person answers, quoting `quoted` (a platform message id) when given.
async fn reply(wa: &Wa, from: &str, quoted: Option<&str>) -> Posted {
    let text = InboundKind::Text {
        body: "Me interesa".into(),
    };
    wa.write(from, text, quoted).await
}

async fn replied(org: &Org<'_>, campaign: &str) -> Value {
    org.get(&format!("/campaigns/{campaign}")).await.ok(200)["stats"]["replied"].clone()
}

#[tokio::test]
async fn a_reply_credits_only_the_message_it_quotes() {
    let wa = Wa::start(StatusOptions::default()).await;
    let (org, c, from, wamids) = delivered(&wa, 2).await;
    // The person answers the older campaign, then answers that same message again.
    reply(&wa, &from, Some(&wamids[0])).await;
    wa.settle().await;
    reply(&wa, &from, Some(&wamids[0])).await;
    wa.settle().await;
    assert_eq!(replied(&org, &c[0]).await, 1);
    assert_eq!(
        replied(&org, &c[1]).await,
        0,
        "the newer campaign got no reply: the second answer quoted the older message"
    );
    // A reply quoting nothing of ours (and one quoting nothing at all) is the latest's.
    reply(&wa, &from, Some("wamid.HBgLNTIxNTUxMjAwMDAwMRUCABEYEjQ0")).await;
    wa.settle().await;
    assert_eq!(replied(&org, &c[1]).await, 1);
    reply(&wa, &from, None).await;
    wa.settle().await;
    assert_eq!(replied(&org, &c[0]).await, 1);
    assert_eq!(replied(&org, &c[1]).await, 1);
}

/// Makes every new conversation fail to be written (a database refusing the write), or lets
/// them be written again.
async fn refuse_new_conversations(app: &TestApp, refuse: bool) {
    let sql: &[&str] = match (app.on_postgres(), refuse) {
        (true, true) => &[
            "CREATE FUNCTION wm_test_refuse() RETURNS trigger LANGUAGE plpgsql AS \
             $$ BEGIN RAISE EXCEPTION 'injected failure'; END $$",
            "CREATE TRIGGER wm_test_refuse BEFORE INSERT ON conversations \
             FOR EACH ROW EXECUTE FUNCTION wm_test_refuse()",
        ],
        (true, false) => &["DROP TRIGGER wm_test_refuse ON conversations"],
        (false, true) => &[
            "CREATE TRIGGER wm_test_refuse BEFORE INSERT ON conversations \
             BEGIN SELECT RAISE(ABORT, 'injected failure'); END",
        ],
        (false, false) => &["DROP TRIGGER wm_test_refuse"],
    };
    for s in sql {
        app.state.db.conn.execute_unprepared(s).await.unwrap();
    }
}

#[tokio::test]
async fn an_inbound_message_that_fails_is_applied_on_retry_exactly_once() {
    let wa = Wa::start(StatusOptions::default()).await;
    let (org, c, from, wamids) = delivered(&wa, 1).await;
    refuse_new_conversations(&wa.app, true).await;
    let posted = reply(&wa, &from, Some(&wamids[0])).await;
    // Acknowledged, kept, and its application fails: nothing of it is in.
    wm_server::services::platform::apply_pending(&wa.app.state)
        .await
        .unwrap();
    assert_eq!(replied(&org, &c[0]).await, 0);
    assert_eq!(org.get("/conversations").await.ok(200)["meta"]["total"], 0);
    // The database recovers; the platform redelivers the message, and the kept event is
    // retried once its claim lapses. Applied once, whichever comes first.
    refuse_new_conversations(&wa.app, false).await;
    wa.fake
        .post_raw(posted.body.clone().into_bytes(), posted.signature.clone())
        .await
        .unwrap();
    wa.app.clock.advance(chrono::Duration::milliseconds(
        wm_server::services::platform::CLAIM_MS + 1_000,
    ));
    wa.settle().await;
    assert_eq!(replied(&org, &c[0]).await, 1);
    let convs = org.get("/conversations").await.ok(200);
    assert_eq!(convs["meta"]["total"], 1, "{convs}");
    let campaign = org.get(&format!("/campaigns/{}", c[0])).await.ok(200);
    assert_eq!(
        campaign["lastReplies"].as_array().map(Vec::len),
        Some(1),
        "{campaign}"
    );
    // A later redelivery changes nothing.
    wa.fake
        .post_raw(posted.body.into_bytes(), posted.signature)
        .await
        .unwrap();
    wa.settle().await;
    assert_eq!(org.get("/conversations").await.ok(200)["meta"]["total"], 1);
}
