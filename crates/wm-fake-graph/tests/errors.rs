//! Every error the send endpoint produces answers the documented shape and status.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use serde_json::json;
use wm_fake_graph::{Delivery, Injection};

#[tokio::test]
async fn auth_errors_are_190_with_401() {
    let fake = fake().await;
    let client = client();
    let body = template_body("16505551234", "hello", &[]);
    for token in [None, Some("wrong-token")] {
        let (s, b) = send_as(&client, &fake, PNID, token, &body).await;
        let err = assert_error(s, &b, 401, 190);
        assert_eq!(err["type"], "OAuthException");
    }
    assert!(fake.expire_token(PNID));
    let (s, b) = send(&client, &fake, &body).await;
    let err = assert_error(s, &b, 401, 190);
    assert!(err["message"].as_str().unwrap().contains("expired"));
    assert_eq!(fake.stats().accepted, 0);
    fake.shutdown().await;
}

#[tokio::test]
async fn unknown_phone_number_id_is_100_subcode_33() {
    let fake = fake().await;
    let (s, b) = send_as(
        &client(),
        &fake,
        "999999",
        Some(TOKEN),
        &template_body("16505551234", "hello", &[]),
    )
    .await;
    let err = assert_error(s, &b, 400, 100);
    assert_eq!(err["error_subcode"], 33);
    assert_eq!(err["type"], "GraphMethodException");
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("'999999' does not exist")
    );
    fake.shutdown().await;
}

#[tokio::test]
async fn malformed_bodies_get_100_131008_131009_131051() {
    let fake = fake().await;
    let client = client();
    let good = template_body("16505551234", "order_update", &["a", "b"]);
    let mut cases = Vec::new();
    let mut b = good.clone();
    b.as_object_mut().unwrap().remove("messaging_product");
    cases.push((b, 100));
    let mut b = good.clone();
    b["messaging_product"] = json!("sms");
    cases.push((b, 100));
    let mut b = good.clone();
    b["unexpected"] = json!(1);
    cases.push((b, 100));
    let mut b = good.clone();
    b["template"]["components"][0]["parameters"][1]["text"] = json!("");
    cases.push((b, 100));
    let mut b = good.clone();
    b["template"].as_object_mut().unwrap().remove("language");
    cases.push((b, 131008));
    let mut b = good.clone();
    b["template"].as_object_mut().unwrap().remove("name");
    cases.push((b, 131008));
    let mut b = good.clone();
    b["biz_opaque_callback_data"] = json!("x".repeat(513));
    cases.push((b, 131009));
    let mut b = good.clone();
    b["to"] = json!("not-a-number");
    cases.push((b, 131009));
    let mut b = good.clone();
    b["recipient_type"] = json!("broadcast");
    cases.push((b, 131009));
    let mut b = good.clone();
    b["template"]["components"][0]["parameters"][0] = json!({ "type": "image", "image": {} });
    cases.push((b, 131009));
    cases.push((
        json!({ "messaging_product": "whatsapp", "to": "16505551234", "type": "hologram" }),
        131051,
    ));
    for (body, code) in cases {
        let (s, b) = send(&client, &fake, &body).await;
        let err = assert_error(s, &b, 400, code);
        assert_eq!(err["error_data"]["messaging_product"], "whatsapp", "{b}");
        assert!(err["error_data"]["details"].is_string(), "{b}");
    }
    // Neither `to` nor `recipient`: the answer documented for `/marketing_messages`
    // (which shares the `to`/`recipient` rules), code 100 without `error_data`.
    let mut b = good.clone();
    b.as_object_mut().unwrap().remove("to");
    let (s, b) = send(&client, &fake, &b).await;
    let err = assert_error(s, &b, 400, 100);
    assert_eq!(err["message"], "The parameter to is required.");
    assert_eq!(err["type"], "OAuthException");
    assert!(err.get("error_data").is_none(), "{b}");
    // Exactly 512 characters is fine.
    let mut b = good.clone();
    b["biz_opaque_callback_data"] = json!("y".repeat(512));
    assert_eq!(send(&client, &fake, &b).await.0, 200);
    fake.shutdown().await;
}

#[tokio::test]
async fn template_errors_follow_status_and_param_count() {
    let fake = fake().await;
    let client = client();
    let cases = [
        (template_body("16505551234", "nope", &[]), 132001),
        (template_body("16505551234", "pending_tpl", &["x"]), 132001),
        (template_body("16505551234", "paused_tpl", &["x"]), 132015),
        (template_body("16505551234", "disabled_tpl", &["x"]), 132016),
        (
            template_body("16505551234", "order_update", &["only one"]),
            132000,
        ),
        (template_body("16505551234", "hello", &["extra"]), 132000),
    ];
    for (body, code) in cases {
        let (s, b) = send(&client, &fake, &body).await;
        assert_error(s, &b, 400, code);
    }
    // Wrong language is "does not exist in the translation".
    let mut b = template_body("16505551234", "hello", &[]);
    b["template"]["language"]["code"] = json!("pt_BR");
    let (s, body) = send(&client, &fake, &b).await;
    assert_error(s, &body, 400, 132001);
    // Status changes take effect immediately.
    assert!(fake.set_template_status(
        WABA,
        "paused_tpl",
        "en_US",
        wm_fake_graph::TemplateStatus::Approved
    ));
    assert_eq!(
        send(
            &client,
            &fake,
            &template_body("16505551234", "paused_tpl", &["x"])
        )
        .await
        .0,
        200
    );
    let attempts = fake.attempts();
    assert_eq!(attempts.len(), 8);
    assert_eq!(fake.stats().refused, 7);
    fake.shutdown().await;
}

#[tokio::test]
async fn injected_sync_errors_use_documented_statuses() {
    let fake = fake().await;
    let client = client();
    let cases: &[(i64, u16)] = &[
        (131026, 400),
        (131047, 429),
        (131049, 429),
        (131050, 400),
        (131051, 400),
        (131048, 429),
        (131056, 429),
        (131031, 403),
        (368, 403),
        (130429, 429),
        (1, 400),
        (2, 503),
        (131000, 500),
    ];
    for (i, &(code, http)) in cases.iter().enumerate() {
        let to = format!("1650777{i:04}");
        fake.inject(Injection::new(&to, code).mode(Delivery::Sync));
        let (s, b) = send(&client, &fake, &template_body(&to, "hello", &[])).await;
        let err = assert_error(s, &b, http, code);
        assert_eq!(
            err["message"].as_str().unwrap(),
            format!("(#{code}) {}", wm_fake_graph::code_info(code).title)
        );
        assert_eq!(fake.accepted_to(&to), 0);
    }
    // 5xx override with code 1 / 2.
    fake.inject(Injection::new("16508880001", 1).http_status(500).times(1));
    let (s, b) = send(&client, &fake, &template_body("16508880001", "hello", &[])).await;
    assert_error(s, &b, 500, 1);
    // `times(1)` is consumed: the next send goes through.
    assert_eq!(
        send(&client, &fake, &template_body("16508880001", "hello", &[]))
            .await
            .0,
        200
    );
    fake.shutdown().await;
}

#[tokio::test]
async fn injection_can_be_scoped_to_a_sender_and_wildcard() {
    let fake = fake().await;
    let client = client();
    fake.inject(
        Injection::new("*", 131048)
            .times(2)
            .from_number("other-number"),
    );
    assert_eq!(
        send(&client, &fake, &template_body("16505551234", "hello", &[]))
            .await
            .0,
        200
    );
    fake.clear_injections();
    fake.inject(Injection::new("*", 131048).times(1));
    assert_eq!(
        send(&client, &fake, &template_body("16505551234", "hello", &[]))
            .await
            .0,
        429
    );
    assert_eq!(
        send(&client, &fake, &template_body("16505551234", "hello", &[]))
            .await
            .0,
        200
    );
    fake.shutdown().await;
}

#[tokio::test]
async fn unknown_paths_get_graph_2500() {
    let fake = fake().await;
    let resp = client()
        .get(format!("{}/v23.0/{PNID}/nonsense", fake.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 400);
    let body: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["code"], 2500);
    fake.shutdown().await;
}
