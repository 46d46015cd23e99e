//! A successful send, its documented response, and signed status webhooks.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::*;
use serde_json::json;
use wm_fake_graph::StatusOptions;

#[tokio::test]
async fn send_succeeds_and_signed_statuses_arrive() {
    let (fake, rx) = fake_with_receiver(StatusOptions::default()).await;
    let client = client();
    let mut body = template_body("+1 (650) 555-1234", "order_update", &["Ann", "A-17"]);
    body["biz_opaque_callback_data"] = json!("tenant=7;msg=42");
    let (status, resp) = send(&client, &fake, &body).await;
    assert_eq!(status, 200, "{resp}");
    assert_eq!(resp["messaging_product"], "whatsapp");
    assert_eq!(resp["contacts"][0]["input"], "+1 (650) 555-1234");
    assert_eq!(resp["contacts"][0]["wa_id"], "16505551234");
    let wamid = resp["messages"][0]["id"].as_str().unwrap().to_owned();
    assert!(wamid.starts_with("wamid."));
    assert_eq!(resp["messages"][0]["message_status"], "accepted");

    let got = rx.wait_for(2, Duration::from_secs(5)).await;
    assert_eq!(got.len(), 2);
    for r in &got {
        assert!(
            r.signature_valid,
            "signature must verify against the raw body"
        );
        assert_eq!(r.content_type.as_deref(), Some("application/json"));
        let v = r.json();
        assert_eq!(v["object"], "whatsapp_business_account");
        assert_eq!(v["entry"][0]["id"], WABA);
        assert_eq!(v["entry"][0]["changes"][0]["field"], "messages");
        let value = &v["entry"][0]["changes"][0]["value"];
        assert_eq!(value["messaging_product"], "whatsapp");
        assert_eq!(value["metadata"]["display_phone_number"], DISPLAY);
        assert_eq!(value["metadata"]["phone_number_id"], PNID);
    }
    let statuses = rx.statuses();
    let names: Vec<&str> = statuses
        .iter()
        .map(|s| s["status"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["sent", "delivered"]);
    for s in &statuses {
        assert_eq!(s["id"], wamid.as_str());
        assert_eq!(s["recipient_id"], "16505551234");
        assert_eq!(s["biz_opaque_callback_data"], "tenant=7;msg=42");
        let ts = s["timestamp"].as_str().expect("timestamp is a string");
        assert!(ts.parse::<i64>().unwrap() > 1_600_000_000);
        assert_eq!(s["pricing"]["billable"], true);
        assert_eq!(s["pricing"]["pricing_model"], "PMP");
        assert_eq!(s["pricing"]["category"], "utility");
        assert_eq!(s["conversation"]["origin"]["type"], "utility");
    }
    assert!(statuses[0]["conversation"]["expiration_timestamp"].is_string());

    // The fake logged the send with everything a test wants to assert on.
    let msg = fake.message(&wamid).unwrap();
    assert_eq!(msg.template_name.as_deref(), Some("order_update"));
    assert_eq!(msg.language.as_deref(), Some("en_US"));
    assert_eq!(msg.body_params, ["Ann", "A-17"]);
    assert_eq!(
        msg.biz_opaque_callback_data.as_deref(),
        Some("tenant=7;msg=42")
    );
    assert_eq!(fake.accepted_to("+1 (650) 555-1234"), 1);
    assert_eq!(fake.accepted_count(), 1);
    assert!(fake.wait_webhooks_idle(Duration::from_secs(5)).await);
    let stats = fake.stats();
    assert_eq!((stats.attempts, stats.accepted, stats.refused), (1, 1, 0));
    assert_eq!(
        (stats.webhooks, stats.webhook_acked, stats.webhook_failed),
        (2, 2, 0)
    );
    fake.shutdown().await;
}

#[tokio::test]
async fn statuses_without_opaque_data_omit_it_and_read_is_optional() {
    let opts = StatusOptions {
        read: true,
        ..StatusOptions::default()
    };
    let (fake, rx) = fake_with_receiver(opts).await;
    let (status, _) = send(
        &client(),
        &fake,
        &template_body("16505550000", "hello", &[]),
    )
    .await;
    assert_eq!(status, 200);
    rx.wait_for(3, Duration::from_secs(5)).await;
    let statuses = rx.statuses();
    let names: Vec<&str> = statuses
        .iter()
        .map(|s| s["status"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["sent", "delivered", "read"]);
    assert!(
        statuses
            .iter()
            .all(|s| s.get("biz_opaque_callback_data").is_none())
    );
    // `read` carries neither conversation nor pricing once `delivered` did.
    assert!(statuses[2].get("pricing").is_none() && statuses[2].get("conversation").is_none());
    fake.shutdown().await;
}

#[tokio::test]
async fn text_messages_are_accepted_without_message_status() {
    let fake = fake().await;
    let body = json!({ "messaging_product": "whatsapp", "to": "16505550001", "type": "text", "text": { "body": "hi" } });
    let (status, resp) = send(&client(), &fake, &body).await;
    assert_eq!(status, 200, "{resp}");
    assert!(resp["messages"][0].get("message_status").is_none());
    assert_eq!(fake.accepted()[0].text_body.as_deref(), Some("hi"));
    fake.shutdown().await;
}

#[tokio::test]
async fn access_token_query_parameter_is_accepted() {
    let fake = fake().await;
    let url = format!("{}?access_token={TOKEN}", messages_url(&fake, PNID));
    let resp = client()
        .post(url)
        .json(&template_body("16505550002", "hello", &[]))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    fake.shutdown().await;
}

#[tokio::test]
async fn wamids_are_unique() {
    let fake = fake().await;
    let client = client();
    let mut ids = std::collections::HashSet::new();
    for i in 0..50 {
        let (_, resp) = send(
            &client,
            &fake,
            &template_body(&format!("1650555{i:04}"), "hello", &[]),
        )
        .await;
        assert!(ids.insert(resp["messages"][0]["id"].as_str().unwrap().to_owned()));
    }
    fake.shutdown().await;
}
