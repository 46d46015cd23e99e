//! The platform's side of WhatsApp: the webhook handshake, signed deliveries (a bad
//! signature changes nothing), statuses out of order and duplicated, inbound messages and
//! replies, template and token problems that pause a campaign, and template sync over
//! several pages.

use axum::http::Method;
use serde_json::json;
use wm_fake_graph::{
    InboundKind, InboundMessage, ReplyContext, StatusOptions, TemplateSpec, TemplateStatus,
};

use crate::support::WA_VERIFY;
use crate::whatsapp_kit::{
    PNID, Ready, WABA, Wa, campaign, drive, number, people, ready, synced_template,
};

#[tokio::test]
async fn the_handshake_answers_the_challenge_only_for_the_right_token() {
    let wa = Wa::start(StatusOptions::default()).await;
    let http = reqwest::Client::new();
    let url = format!("{}/platform/whatsapp/webhook", wa.base);
    let ok = http
        .get(format!(
            "{url}?hub.mode=subscribe&hub.verify_token={WA_VERIFY}&hub.challenge=1158201444"
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), 200);
    assert!(
        ok.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain")
    );
    assert_eq!(ok.text().await.unwrap(), "1158201444");
    for q in [
        "hub.mode=subscribe&hub.verify_token=wrong&hub.challenge=1",
        "hub.mode=unsubscribe&hub.verify_token=test-verify-token&hub.challenge=1",
        "hub.challenge=1",
    ] {
        let r = http.get(format!("{url}?{q}")).send().await.unwrap();
        assert_eq!(r.status(), 403, "{q}");
    }
}

#[tokio::test]
async fn statuses_out_of_order_and_twice_and_a_bad_signature_that_changes_nothing() {
    let wa = Wa::start(StatusOptions {
        read: true,
        shuffle: true,
        duplicate: true,
        before_response: true,
        ..Default::default()
    })
    .await;
    let Ready {
        org, campaign: id, ..
    } = ready(&wa, 12, 10.0).await;
    org.post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .ok(200);
    let c = drive(&wa, &org, &id, 10).await;
    assert_eq!(c["status"], "COMPLETED", "{c}");
    // The funnel only moved forward, whatever order the statuses came in.
    assert_eq!(c["stats"]["read"], 12, "{c}");
    assert_eq!(c["stats"]["delivered"], 12);

    // A webhook with a bad (or no) signature is refused and changes nothing.
    let m = wa.fake.accepted().into_iter().next().unwrap();
    let body = json!({"object": "whatsapp_business_account", "entry": [{"id": WABA, "changes": [{"field": "messages", "value": {
        "messaging_product": "whatsapp", "metadata": {"display_phone_number": "525500000001", "phone_number_id": PNID},
        "statuses": [{"id": m.wamid, "status": "failed", "timestamp": "1700000000", "recipient_id": m.wa_id,
                      "errors": [{"code": 131026, "title": "Message undeliverable"}]}]}}]}]})
    .to_string();
    for sig in [Some("sha256=00".to_owned()), None] {
        let posted = wa
            .fake
            .post_raw(body.clone().into_bytes(), sig)
            .await
            .unwrap();
        assert_eq!(posted.last_status, Some(401));
    }
    wa.settle().await;
    let c = org.get(&format!("/campaigns/{id}")).await.ok(200);
    assert_eq!(c["stats"]["failed"], 0);
}

#[tokio::test]
async fn inbound_messages_open_conversations_and_replies_mark_the_quoted_message() {
    let wa = Wa::start(StatusOptions::default()).await;
    wa.template("promo", "Hola {{1}}");
    let org = wa.app.org().await;
    let number_id = number(&org).await;
    let tpl = synced_template(&org, "promo").await;
    let people = people(&org, 2).await;
    let ids: Vec<String> = people.iter().map(|(id, _)| id.clone()).collect();
    // Two campaigns to the first person: the reply quotes the older message.
    let first = campaign(&org, &number_id, &tpl, &ids[..1]).await;
    let second = campaign(&org, &number_id, &tpl, &ids[..1]).await;
    crate::kit::top_up(&org, 10.0).await;
    for c in [&first, &second] {
        org.post(&format!("/campaigns/{c}/send"), json!({}))
            .await
            .ok(200);
        drive(&wa, &org, c, 5).await;
    }
    let quoted = wa.fake.accepted()[0].wamid.clone();
    let from = people[0].1.trim_start_matches('+').to_owned();
    let reply = wa
        .fake
        .post_inbound(InboundMessage {
            phone_number_id: PNID.into(),
            from: from.clone(),
            profile_name: Some("Ana".into()),
            kind: InboundKind::Button {
                payload: "STOP_PROMOS".into(),
                text: "No, gracias".into(),
            },
            context: Some(ReplyContext {
                id: quoted,
                from: None,
            }),
        })
        .await
        .unwrap();
    assert_eq!(reply.last_status, Some(200));
    // A stranger writes in with text, then taps an interactive button.
    let stranger = "5215599990001";
    wa.fake
        .post_inbound_text(PNID, stranger, "¿Tienen envíos?")
        .await
        .unwrap();
    wa.fake
        .post_inbound(InboundMessage {
            phone_number_id: PNID.into(),
            from: stranger.into(),
            // The platform sends the sender's one profile name with each message.
            profile_name: Some("Test User".into()),
            kind: InboundKind::ButtonReply {
                id: "yes".into(),
                title: "Sí".into(),
            },
            context: None,
        })
        .await
        .unwrap();
    // The platform redelivers the reply: it counts once.
    wa.fake
        .post_raw(reply.body.clone().into_bytes(), reply.signature.clone())
        .await
        .unwrap();
    wa.settle().await;

    let c1 = org.get(&format!("/campaigns/{first}")).await.ok(200);
    let c2 = org.get(&format!("/campaigns/{second}")).await.ok(200);
    assert_eq!(c1["stats"]["replied"], 1, "the quoted message is REPLIED");
    assert_eq!(c2["stats"]["replied"], 0, "not the latest one");
    assert_eq!(c1["lastReplies"][0]["contact"]["id"], ids[0].as_str());
    let convs = org.get("/conversations").await.ok(200);
    assert_eq!(convs["meta"]["total"], 2, "{convs}");
    let found = org.get("/contacts?q=5599990001").await.ok(200);
    assert_eq!(found["data"][0]["source"], "MESSAGING_APP_A_INBOUND");
    assert_eq!(
        found["meta"]["total"], 1,
        "one contact for the stranger: {found}"
    );
    assert_eq!(found["data"][0]["fullName"], "Test User");
}

#[tokio::test]
async fn a_template_paused_at_the_platform_pauses_its_sending_campaign() {
    let wa = Wa::start(StatusOptions::default()).await;
    let Ready {
        org, campaign: id, ..
    } = ready(&wa, 20, 10.0).await;
    org.post(
        &format!("/campaigns/{id}/send"),
        json!({"when": "staggered", "batchSize": 10, "batchIntervalMin": 60}),
    )
    .await
    .ok(200);
    wa.app.send_pass().await;
    wa.template_event("PAUSED", Some("LOW_QUALITY"), true).await;
    let c = org.get(&format!("/campaigns/{id}")).await.ok(200);
    assert_eq!(c["status"], "PAUSED");
    assert_eq!(c["stopReason"], "TEMPLATE_PAUSED");
    let t = org.get("/templates").await.ok(200);
    assert_eq!(t["data"][0]["status"], "PAUSED");
}

#[tokio::test]
async fn an_expired_token_pauses_the_campaign_without_losing_a_message() {
    let wa = Wa::start(StatusOptions::default()).await;
    let Ready {
        org,
        number: number_id,
        campaign: id,
        ..
    } = ready(&wa, 5, 10.0).await;
    org.post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .ok(200);
    assert!(wa.fake.expire_token(PNID));
    let out = wa.app.send_pass().await;
    assert_eq!(out.sent, 0);
    let c = org.get(&format!("/campaigns/{id}")).await.ok(200);
    assert_eq!(c["status"], "PAUSED");
    assert_eq!(c["stopReason"], "PLATFORM_TOKEN_EXPIRED");
    assert_eq!(c["stats"]["pending"], 5, "nothing lost, nothing failed");
    // A new token, a resume: everything goes out, each once.
    wa.fake.register_number(wm_fake_graph::NumberSpec {
        phone_number_id: PNID.into(),
        waba_id: WABA.into(),
        display_phone_number: "525500000001".into(),
        access_token: "EAAG-new-token".into(),
    });
    org.admin(
        Method::PATCH,
        &format!("/phone-numbers/{number_id}"),
        Some(json!({"accessToken": "EAAG-new-token"})),
    )
    .await
    .ok(200);
    org.post(&format!("/campaigns/{id}/resume"), json!({}))
        .await
        .ok(200);
    let c = drive(&wa, &org, &id, 5).await;
    assert_eq!(c["status"], "COMPLETED", "{c}");
    assert_eq!(wa.fake.accepted_count(), 5);
}

#[tokio::test]
async fn template_sync_reads_every_page_and_upserts() {
    let wa = Wa::start(StatusOptions::default()).await;
    for i in 0..120 {
        wa.fake.register_template(TemplateSpec {
            waba_id: WABA.into(),
            name: format!("t{i:03}"),
            language: "es_MX".into(),
            category: if i % 2 == 0 { "MARKETING" } else { "UTILITY" }.into(),
            status: TemplateStatus::Approved,
            body_text: format!("Texto {i} para {{{{1}}}}"),
        });
    }
    let org = wa.app.org().await;
    number(&org).await;
    let r = org
        .admin(Method::POST, "/templates/sync", None)
        .await
        .ok(200);
    assert_eq!(
        r,
        json!({"accounts": 1, "created": 120, "updated": 0, "unchanged": 0,
               "left": 0, "leftTemplates": []})
    );
    // One is paused, one deleted at the platform; the operator added one of their own.
    wa.fake
        .set_template_status(WABA, "t007", "es_MX", TemplateStatus::Paused);
    assert!(wa.fake.delete_template(WABA, "t010", "es_MX"));
    let local = org
        .admin(
            Method::POST,
            "/templates",
            Some(
                json!({"name": "aviso", "category": "UTILITY", "language": "es_MX",
                        "bodyText": "Aviso"}),
            ),
        )
        .await
        .ok(201)["id"]
        .clone();
    let list = org.get("/templates").await.ok(200);
    let t010 = list["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "t010")
        .unwrap()["id"]
        .clone();
    let r = org
        .admin(Method::POST, "/templates/sync", None)
        .await
        .ok(200);
    assert_eq!(
        r,
        json!({"accounts": 1, "created": 0, "updated": 1, "unchanged": 118, "left": 2,
               "leftTemplates": [
                   {"id": local, "name": "aviso", "language": "es_MX", "status": "APPROVED"},
                   {"id": t010, "name": "t010", "language": "es_MX", "status": "APPROVED"}]})
    );
    let list = org.get("/templates").await.ok(200);
    let t7 = list["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "t007")
        .unwrap();
    assert_eq!(t7["status"], "PAUSED");
    assert_eq!(t7["bodyText"], "Texto 7 para {{1}}");
    assert_eq!(t7["category"], "UTILITY");
    // What the platform no longer lists is left as it was.
    let t10 = list["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "t010")
        .unwrap();
    assert_eq!(t10["status"], "APPROVED");
    // Phone numbers never show their token.
    let n = org.admin(Method::GET, "/phone-numbers", None).await.ok(200);
    assert_eq!(n["data"][0]["accessTokenSet"], true);
    assert!(!n.to_string().contains("EAAG"), "{n}");
}
