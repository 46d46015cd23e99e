//! Accepted sends whose outcome the caller cannot learn: dropped connection,
//! delayed answer, hang until shutdown; plus asynchronous failures.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::*;
use wm_fake_graph::{Delivery, Injection, StatusOptions};

#[tokio::test]
async fn dropped_connection_counts_the_message() {
    let (fake, rx) = fake_with_receiver(StatusOptions::default()).await;
    let client = client();
    fake.drop_next_response("16505551234");
    let result = client
        .post(messages_url(&fake, PNID))
        .bearer_auth(TOKEN)
        .json(&template_body("16505551234", "hello", &[]))
        .send()
        .await;
    let err = result.expect_err("the caller must see a transport error, not a response");
    assert!(!err.is_status());
    // ...but the fake accepted and counted it, and its statuses still follow.
    assert_eq!(fake.accepted_to("16505551234"), 1);
    let wamid = fake.accepted()[0].wamid.clone();
    rx.wait_for(2, Duration::from_secs(5)).await;
    assert!(rx.statuses().iter().all(|s| s["id"] == wamid.as_str()));
    // Only the next send was affected.
    assert_eq!(
        send(&client, &fake, &template_body("16505551234", "hello", &[]))
            .await
            .0,
        200
    );
    assert_eq!(fake.accepted_to("16505551234"), 2);
    fake.shutdown().await;
}

#[tokio::test]
async fn delayed_response_times_the_client_out_but_is_counted() {
    let fake = fake().await;
    let client = client();
    fake.delay_next_response("16505551234", Duration::from_secs(3));
    let result = client
        .post(messages_url(&fake, PNID))
        .bearer_auth(TOKEN)
        .timeout(Duration::from_millis(300))
        .json(&template_body("16505551234", "hello", &[]))
        .send()
        .await;
    assert!(result.expect_err("must time out").is_timeout());
    assert_eq!(fake.accepted_to("16505551234"), 1);
    fake.shutdown().await;
}

#[tokio::test]
async fn hang_is_released_by_shutdown() {
    let fake = fake().await;
    let client = client();
    fake.hang_next_response("*");
    let req = client
        .post(messages_url(&fake, PNID))
        .bearer_auth(TOKEN)
        .json(&template_body("16505551234", "hello", &[]))
        .send();
    let pending = tokio::spawn(req);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!pending.is_finished(), "the send must hang");
    assert_eq!(fake.accepted_count(), 1);
    tokio::time::timeout(Duration::from_secs(6), fake.shutdown())
        .await
        .expect("shutdown finishes");
    let result = tokio::time::timeout(Duration::from_secs(5), pending)
        .await
        .unwrap()
        .unwrap();
    assert!(result.is_err(), "the hung send ends with a transport error");
}

#[tokio::test]
async fn async_failure_arrives_as_failed_status_with_errors() {
    let (fake, rx) = fake_with_receiver(StatusOptions::default()).await;
    let client = client();
    fake.inject(Injection::new("16505551234", 131026)); // async by default
    let mut body = template_body("16505551234", "hello", &[]);
    body["biz_opaque_callback_data"] = serde_json::json!("ref-1");
    let (s, resp) = send(&client, &fake, &body).await;
    assert_eq!(s, 200, "{resp}");
    let wamid = resp["messages"][0]["id"].as_str().unwrap().to_owned();
    rx.wait_for(1, Duration::from_secs(5)).await;
    let statuses = rx.statuses();
    assert_eq!(statuses.len(), 1);
    let st = &statuses[0];
    assert_eq!(st["status"], "failed");
    assert_eq!(st["id"], wamid.as_str());
    assert_eq!(st["biz_opaque_callback_data"], "ref-1");
    let e = &st["errors"][0];
    assert_eq!(e["code"], 131026);
    assert!(e["title"].is_string() && e["message"].is_string());
    assert!(e["error_data"]["details"].is_string());
    assert!(st.get("pricing").is_none());
    assert_eq!(fake.accepted()[0].async_error, Some(131026));
    // The same code can be made synchronous per injection.
    fake.clear_injections();
    fake.inject(Injection::new("16505551234", 131026).mode(Delivery::Sync));
    let (s, b) = send(&client, &fake, &template_body("16505551234", "hello", &[])).await;
    assert_error(s, &b, 400, 131026);
    fake.shutdown().await;
}

#[tokio::test]
async fn documented_async_defaults() {
    for code in [131026, 131047, 131049, 131050] {
        assert_eq!(
            wm_fake_graph::code_info(code).default_delivery,
            Delivery::Async,
            "{code}"
        );
    }
    for code in [131048, 131056, 130429, 131051, 132000, 368, 131031, 190] {
        assert_eq!(
            wm_fake_graph::code_info(code).default_delivery,
            Delivery::Sync,
            "{code}"
        );
    }
}
