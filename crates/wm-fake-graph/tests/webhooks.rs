//! Status-webhook knobs (shuffle, duplicate, race, retry) and on-demand webhooks.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::*;
use serde_json::json;
use wm_fake_graph::{
    InboundKind, InboundMessage, QualityUpdate, ReplyContext, StatusOptions, TemplateStatus,
    TemplateStatusUpdate, sign,
};

#[tokio::test]
async fn duplicate_and_shuffle_post_every_status_twice_in_some_order() {
    let opts = StatusOptions {
        duplicate: true,
        shuffle: true,
        read: true,
        ..StatusOptions::default()
    };
    let (fake, rx) = fake_with_receiver(opts).await;
    let client = client();
    for i in 0..5 {
        assert_eq!(
            send(
                &client,
                &fake,
                &template_body(&format!("1650555000{i}"), "hello", &[])
            )
            .await
            .0,
            200
        );
    }
    rx.wait_for(30, Duration::from_secs(10)).await;
    let statuses = rx.statuses();
    assert_eq!(statuses.len(), 30);
    for m in fake.accepted() {
        for name in ["sent", "delivered", "read"] {
            let n = statuses
                .iter()
                .filter(|s| s["id"] == m.wamid.as_str() && s["status"] == name)
                .count();
            assert_eq!(n, 2, "{name} of {} posted twice", m.wamid);
        }
    }
    fake.shutdown().await;
}

#[tokio::test]
async fn status_can_race_ahead_of_the_send_response() {
    let opts = StatusOptions {
        before_response: true,
        delay_ms: 500,
        ..StatusOptions::default()
    };
    let (fake, rx) = fake_with_receiver(opts).await;
    let (s, resp) = send(
        &client(),
        &fake,
        &template_body("16505551234", "hello", &[]),
    )
    .await;
    assert_eq!(s, 200);
    // When the response arrives, the first status has already been delivered.
    let got = rx.received();
    assert_eq!(
        got.len(),
        1,
        "exactly the first status arrived before the response"
    );
    let first = &rx.statuses()[0];
    assert_eq!(first["status"], "sent");
    assert_eq!(first["id"], resp["messages"][0]["id"]);
    rx.wait_for(2, Duration::from_secs(5)).await;
    fake.shutdown().await;
}

#[tokio::test]
async fn non_2xx_deliveries_are_retried_and_counted() {
    let (fake, rx) = fake_with_receiver(StatusOptions::default()).await;
    rx.fail_next(2);
    assert_eq!(
        send(
            &client(),
            &fake,
            &template_body("16505551234", "hello", &[])
        )
        .await
        .0,
        200
    );
    assert!(fake.wait_webhooks_idle(Duration::from_secs(5)).await);
    let stats = fake.stats();
    assert_eq!(stats.webhooks, 2);
    assert_eq!(stats.webhook_acked, 2);
    assert_eq!(
        stats.webhook_posts, 4,
        "two failed tries, then two successes"
    );
    let log = fake.webhook_log();
    assert_eq!(log.iter().map(|p| p.attempts).sum::<u32>(), 4);
    assert!(log.iter().all(|p| p.acked && p.last_status == Some(200)));
    fake.shutdown().await;
}

#[tokio::test]
async fn unreachable_webhook_gives_up_after_max_attempts() {
    let fake = fake().await;
    let cfg = wm_fake_graph::WebhookConfig {
        url: "http://127.0.0.1:9/webhook".into(),
        app_secret: SECRET.into(),
        statuses: StatusOptions::default(),
        retry: wm_fake_graph::RetryPolicy {
            max_attempts: 2,
            initial_backoff_ms: 10,
            timeout_ms: 2_000,
        },
    };
    fake.configure_webhook(Some(cfg));
    assert_eq!(
        send(
            &client(),
            &fake,
            &template_body("16505551234", "hello", &[])
        )
        .await
        .0,
        200
    );
    assert!(fake.wait_webhooks_idle(Duration::from_secs(5)).await);
    let stats = fake.stats();
    assert_eq!((stats.webhook_failed, stats.webhook_posts), (2, 4));
    fake.shutdown().await;
}

#[tokio::test]
async fn inbound_messages_have_the_documented_shape() {
    let (fake, rx) = fake_with_receiver(StatusOptions {
        enabled: false,
        ..StatusOptions::default()
    })
    .await;
    let (_, resp) = send(
        &client(),
        &fake,
        &template_body("16505551234", "hello", &[]),
    )
    .await;
    let outbound = resp["messages"][0]["id"].as_str().unwrap().to_owned();
    let ctx = Some(ReplyContext {
        id: outbound.clone(),
        from: None,
    });
    let kinds = [
        InboundKind::Text {
            body: "hello back".into(),
        },
        InboundKind::Button {
            payload: "STOP_PROMOS".into(),
            text: "Stop promotions".into(),
        },
        InboundKind::ButtonReply {
            id: "confirm".into(),
            title: "Confirm".into(),
        },
        InboundKind::ListReply {
            id: "row-2".into(),
            title: "Tuesday".into(),
            description: Some("2pm".into()),
        },
    ];
    for kind in kinds {
        let posted = fake
            .post_inbound(InboundMessage {
                phone_number_id: PNID.into(),
                from: "16505551234".into(),
                profile_name: Some("Sheena Nelson".into()),
                kind,
                context: ctx.clone(),
            })
            .await
            .unwrap();
        assert!(posted.acked);
        assert!(posted.wamid.as_deref().unwrap().starts_with("wamid."));
    }
    let got = rx.wait_for(4, Duration::from_secs(5)).await;
    assert!(got.iter().all(|r| r.signature_valid));
    let values: Vec<_> = got
        .iter()
        .map(|r| r.json()["entry"][0]["changes"][0]["value"].clone())
        .collect();
    for v in &values {
        assert_eq!(v["contacts"][0]["profile"]["name"], "Sheena Nelson");
        assert_eq!(v["contacts"][0]["wa_id"], "16505551234");
        let m = &v["messages"][0];
        assert_eq!(m["from"], "16505551234");
        assert!(m["timestamp"].as_str().unwrap().parse::<i64>().is_ok());
        assert_eq!(m["context"]["id"], outbound.as_str());
        assert_eq!(m["context"]["from"], DISPLAY);
    }
    assert_eq!(values[0]["messages"][0]["text"]["body"], "hello back");
    assert_eq!(values[1]["messages"][0]["type"], "button");
    assert_eq!(
        values[1]["messages"][0]["button"],
        json!({ "payload": "STOP_PROMOS", "text": "Stop promotions" })
    );
    assert_eq!(
        values[2]["messages"][0]["interactive"]["type"],
        "button_reply"
    );
    assert_eq!(
        values[2]["messages"][0]["interactive"]["button_reply"]["id"],
        "confirm"
    );
    assert_eq!(
        values[3]["messages"][0]["interactive"]["list_reply"]["description"],
        "2pm"
    );
    fake.shutdown().await;
}

#[tokio::test]
async fn template_status_and_quality_updates_are_waba_level() {
    let (fake, rx) = fake_with_receiver(StatusOptions::default()).await;
    let upd = TemplateStatusUpdate {
        waba_id: WABA.into(),
        name: "order_update".into(),
        language: "en_US".into(),
        event: "PAUSED".into(),
        reason: None,
        apply: true,
    };
    assert!(fake.post_template_status_update(upd).await.unwrap().acked);
    assert_eq!(fake.templates(WABA)[0].spec.status, TemplateStatus::Paused);
    let q = QualityUpdate {
        phone_number_id: PNID.into(),
        event: "DOWNGRADE".into(),
        current_limit: "TIER_250".into(),
        old_limit: Some("TIER_1K".into()),
        max_daily_conversations_per_business: Some("TIER_250".into()),
    };
    assert!(fake.post_quality_update(q).await.unwrap().acked);
    let got = rx.wait_for(2, Duration::from_secs(5)).await;
    let t = got[0].json();
    assert_eq!(t["object"], "whatsapp_business_account");
    assert_eq!(t["entry"][0]["id"], WABA);
    assert!(t["entry"][0]["time"].is_i64());
    assert_eq!(
        t["entry"][0]["changes"][0]["field"],
        "message_template_status_update"
    );
    let v = &t["entry"][0]["changes"][0]["value"];
    assert_eq!(v["event"], "PAUSED");
    assert!(v["message_template_id"].is_u64());
    assert_eq!(v["message_template_name"], "order_update");
    assert_eq!(v["message_template_language"], "en_US");
    assert_eq!(v["reason"], "NONE");
    let q = got[1].json();
    assert_eq!(
        q["entry"][0]["changes"][0]["field"],
        "phone_number_quality_update"
    );
    let v = &q["entry"][0]["changes"][0]["value"];
    assert_eq!(v["display_phone_number"], DISPLAY);
    assert_eq!(
        (v["event"].as_str(), v["current_limit"].as_str()),
        (Some("DOWNGRADE"), Some("TIER_250"))
    );
    assert_eq!(v["old_limit"], "TIER_1K");
    // Sends of the paused template now fail with 132015.
    let (s, b) = send(
        &client(),
        &fake,
        &template_body("16505551234", "order_update", &["a", "b"]),
    )
    .await;
    assert_error(s, &b, 400, 132015);
    fake.shutdown().await;
}

#[tokio::test]
async fn raw_posts_allow_bad_signatures() {
    let (fake, rx) = fake_with_receiver(StatusOptions::default()).await;
    let body = br#"{"object":"whatsapp_business_account","entry":[]}"#.to_vec();
    let bad = fake
        .post_raw(body.clone(), Some(sign("wrong-secret", &body)))
        .await
        .unwrap();
    assert!(!bad.acked, "the receiver rejects a bad signature");
    let good = fake
        .post_raw(body.clone(), Some(sign(SECRET, &body)))
        .await
        .unwrap();
    assert!(good.acked);
    let none = fake.post_raw(body, None).await.unwrap();
    assert!(!none.acked);
    let got = rx.received();
    assert!(!got[0].signature_valid && got.last().unwrap().signature.is_none());
    fake.shutdown().await;
}

#[tokio::test]
async fn statuses_can_be_batched_per_number() {
    let opts = StatusOptions {
        max_batch: 10,
        batch_window_ms: 50,
        ..StatusOptions::default()
    };
    let (fake, rx) = fake_with_receiver(opts).await;
    let client = client();
    for i in 0..5 {
        assert_eq!(
            send(
                &client,
                &fake,
                &template_body(&format!("1650555000{i}"), "hello", &[])
            )
            .await
            .0,
            200
        );
    }
    assert!(fake.wait_webhooks_idle(Duration::from_secs(5)).await);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(fake.wait_webhooks_idle(Duration::from_secs(5)).await);
    let got = rx.received();
    assert!(
        got.len() < 10,
        "10 statuses share fewer webhooks, got {}",
        got.len()
    );
    assert!(got.iter().all(|r| r.signature_valid));
    assert_eq!(rx.statuses().len(), 10);
    assert_eq!(fake.stats().webhooks, got.len() as u64);
    fake.shutdown().await;
}
