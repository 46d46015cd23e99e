//! Business-scoped user ids (BSUID) and usernames: inbound messages, sends by
//! `recipient`, statuses, 131062, and per-user state across phone and BSUID.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::users::*;
use common::*;
use serde_json::json;
use wm_fake_graph::{
    Delivery, InboundKind, InboundMessage, Injection, StatusOptions, TemplateSpec, TemplateStatus,
    generated_user_id,
};

#[tokio::test]
async fn a_username_only_users_inbound_has_no_phone() {
    let (fake, rx) = fake_with_receiver(quiet()).await;
    fake.register_user(sheena());
    for from in [SHEENA, SHEENA_PHONE] {
        let posted = fake
            .post_inbound(InboundMessage {
                phone_number_id: PNID.into(),
                from: from.into(),
                profile_name: Some("Sheena Nelson".into()),
                kind: InboundKind::Text {
                    body: "Does it come in another color?".into(),
                },
                context: None,
            })
            .await
            .unwrap();
        assert!(posted.acked);
    }
    let got = changes(&rx);
    assert_eq!(got.len(), 2);
    for (field, v) in got {
        assert_eq!(field, "messages");
        // Meta's example (b), exactly: no `wa_id`, no `from`.
        assert_eq!(
            v["contacts"],
            json!([{
                "profile": { "name": "Sheena Nelson", "username": "realsheenanelson" },
                "user_id": SHEENA,
                "parent_user_id": SHEENA_PARENT,
            }])
        );
        let m = v["messages"][0].as_object().unwrap();
        assert!(!m.contains_key("from"), "{m:?}");
        assert_eq!(m["from_user_id"], SHEENA);
        assert_eq!(m["from_parent_user_id"], SHEENA_PARENT);
        assert_eq!(m["text"]["body"], "Does it come in another color?");
    }
    fake.shutdown().await;
}

#[tokio::test]
async fn an_unregistered_phone_gets_a_stable_generated_bsuid() {
    let (fake, rx) = fake_with_receiver(quiet()).await;
    fake.post_inbound_text(PNID, "5215512345678", "hola")
        .await
        .unwrap();
    let user = fake.user("5215512345678").unwrap();
    assert_eq!(user, fake.user("+52 1 55 1234 5678").unwrap());
    assert_eq!(user.user_id, generated_user_id("5215512345678", 0));
    assert_eq!(fake.user(&user.user_id).unwrap(), user);
    let (cc, digits) = user.user_id.split_once('.').unwrap();
    assert_eq!((cc, digits.len()), ("MX", 19));
    assert!(user.phone_shared && user.username.is_none());
    assert!(fake.user("US.1").is_none(), "an unknown BSUID is nobody");
    let (_, v) = &changes(&rx)[0];
    assert_eq!(
        v["contacts"],
        json!([{
            "profile": { "name": "Test User" },
            "wa_id": "5215512345678",
            "user_id": user.user_id,
        }])
    );
    let m = v["messages"][0].as_object().unwrap();
    assert_eq!(m["from"], "5215512345678");
    assert_eq!(m["from_user_id"], user.user_id.as_str());
    assert!(!m.contains_key("from_parent_user_id"));
    for (phone, iso) in [
        ("16505551234", "US"),
        ("5511912345678", "BR"),
        ("541112345678", "AR"),
        ("573001234567", "CO"),
        ("56912345678", "CL"),
        ("51912345678", "PE"),
        ("34612345678", "ES"),
        ("447700900123", "GB"),
        ("4915112345678", "DE"),
        ("33612345678", "FR"),
        ("919812345678", "IN"),
        ("99912345678", "US"),
    ] {
        let id = fake.user(phone).unwrap().user_id;
        assert!(id.starts_with(&format!("{iso}.")), "{phone} → {id}");
    }
    fake.shutdown().await;
}

#[tokio::test]
async fn a_bsuid_send_answers_user_id_and_statuses_omit_the_phone() {
    let (fake, rx) = fake_with_receiver(with_read()).await;
    fake.register_user(sheena());
    let (s, resp) = send(&client(), &fake, &template_to_recipient(SHEENA, "hello")).await;
    assert_eq!(s, 200, "{resp}");
    assert_eq!(
        resp["contacts"],
        json!([{ "input": SHEENA, "user_id": SHEENA }])
    );
    let wamid = resp["messages"][0]["id"].as_str().unwrap();
    let m = fake.message(wamid).unwrap();
    assert!(m.by_user_id);
    assert_eq!((m.to.as_str(), m.user_id.as_str()), (SHEENA, SHEENA));
    let values = status_values(&fake, &rx, 3).await;
    assert_eq!(values.len(), 3);
    for v in &values {
        let st = v["statuses"][0].as_object().unwrap();
        assert!(!st.contains_key("recipient_id"), "{st:?}");
        assert_eq!(st["recipient_user_id"], SHEENA);
        assert_eq!(st["recipient_parent_user_id"], SHEENA_PARENT);
        let mut contact = json!({
            "profile": { "name": "Test User", "username": "realsheenanelson" },
            "user_id": SHEENA,
            "parent_user_id": SHEENA_PARENT,
        });
        if st["status"] == "sent" {
            // `username` is omitted on `sent`.
            contact["profile"]
                .as_object_mut()
                .unwrap()
                .remove("username");
        }
        assert_eq!(v["contacts"], json!([contact]), "{}", st["status"]);
    }
    // A parent BSUID addresses the same user.
    let (s, resp) = send(
        &client(),
        &fake,
        &template_to_recipient(SHEENA_PARENT, "hello"),
    )
    .await;
    assert_eq!(s, 200);
    assert_eq!(
        resp["contacts"],
        json!([{ "input": SHEENA_PARENT, "user_id": SHEENA }])
    );
    fake.shutdown().await;
}

#[tokio::test]
async fn a_phone_send_answers_wa_id_and_statuses_carry_both_ids() {
    let (fake, rx) = fake_with_receiver(StatusOptions::default()).await;
    let (s, resp) = send(
        &client(),
        &fake,
        &template_body("+1 650 555 1234", "hello", &[]),
    )
    .await;
    assert_eq!(s, 200);
    assert_eq!(
        resp["contacts"],
        json!([{ "input": "+1 650 555 1234", "wa_id": "16505551234" }])
    );
    let bsuid = fake.user("16505551234").unwrap().user_id;
    for v in status_values(&fake, &rx, 2).await {
        let st = &v["statuses"][0];
        assert_eq!(st["recipient_id"], "16505551234");
        assert_eq!(st["recipient_user_id"], bsuid.as_str());
        assert!(st.get("recipient_parent_user_id").is_none());
        assert_eq!(v["contacts"][0]["wa_id"], "16505551234");
        assert_eq!(v["contacts"][0]["user_id"], bsuid.as_str());
    }
    fake.shutdown().await;
}

#[tokio::test]
async fn failed_statuses_have_no_contacts_and_no_user_id_when_sent_to_a_phone() {
    let (fake, rx) = fake_with_receiver(StatusOptions::default()).await;
    fake.register_user(sheena());
    // Injected by phone; the BSUID send to the same user meets it too.
    for _ in 0..2 {
        fake.inject(
            Injection::new(SHEENA_PHONE, 131_026)
                .mode(Delivery::Async)
                .times(1),
        );
    }
    let (s, _) = send(&client(), &fake, &template_to_recipient(SHEENA, "hello")).await;
    assert_eq!(s, 200);
    let (s, _) = send(&client(), &fake, &template_body(SHEENA_PHONE, "hello", &[])).await;
    assert_eq!(s, 200);
    let values = status_values(&fake, &rx, 2).await;
    assert_eq!(values.len(), 2);
    let by_bsuid = values
        .iter()
        .find(|v| v["statuses"][0]["recipient_user_id"].is_string())
        .unwrap();
    let by_phone = values
        .iter()
        .find(|v| v["statuses"][0]["recipient_id"] == SHEENA_PHONE)
        .unwrap();
    for v in [by_bsuid, by_phone] {
        assert_eq!(v["statuses"][0]["status"], "failed");
        assert_eq!(v["statuses"][0]["errors"][0]["code"], 131026);
        assert!(v.get("contacts").is_none(), "{v}");
    }
    let st = by_phone["statuses"][0].as_object().unwrap();
    assert!(!st.contains_key("recipient_user_id") && !st.contains_key("recipient_parent_user_id"));
    let st = by_bsuid["statuses"][0].as_object().unwrap();
    assert_eq!(st["recipient_user_id"], SHEENA);
    assert!(
        !st.contains_key("recipient_id"),
        "sent to a BSUID, phone not shared"
    );
    fake.shutdown().await;
}

#[tokio::test]
async fn to_wins_over_recipient() {
    let (fake, _rx) = fake_with_receiver(quiet()).await;
    fake.register_user(sheena());
    let mut body = template_body("16505551234", "hello", &[]);
    body["recipient"] = json!(SHEENA);
    let (s, resp) = send(&client(), &fake, &body).await;
    assert_eq!(s, 200);
    assert_eq!(
        resp["contacts"],
        json!([{ "input": "16505551234", "wa_id": "16505551234" }])
    );
    let m = fake.accepted().pop().unwrap();
    assert!(!m.by_user_id);
    assert_eq!(m.wa_id, "16505551234");
    assert_ne!(m.user_id, SHEENA);
    let attempt = fake.attempts().pop().unwrap();
    assert_eq!(attempt.recipient.as_deref(), Some(SHEENA));
    fake.shutdown().await;
}

#[tokio::test]
async fn unknown_or_malformed_recipients_get_100() {
    let fake = fake().await;
    let client = client();
    for recipient in ["US.99999999999999999999", "16505551234", ""] {
        let (s, b) = send(&client, &fake, &template_to_recipient(recipient, "hello")).await;
        let err = assert_error(s, &b, 400, 100);
        assert_eq!(err["error_data"]["messaging_product"], "whatsapp");
        assert!(
            err["error_data"]["details"]
                .as_str()
                .unwrap()
                .contains("recipient"),
            "{b}"
        );
    }
    let mut body = template_to_recipient(SHEENA, "hello");
    body["recipient"] = json!(42);
    let (s, b) = send(&client, &fake, &body).await;
    assert_error(s, &b, 400, 131009);
    fake.shutdown().await;
}

#[tokio::test]
async fn an_authentication_template_to_a_bsuid_gets_131062() {
    let fake = fake().await;
    fake.register_user(sheena());
    fake.register_template(TemplateSpec {
        waba_id: WABA.into(),
        name: "login_code".into(),
        language: "en_US".into(),
        category: "AUTHENTICATION".into(),
        status: TemplateStatus::Approved,
        body_text: "Your code is 123456".into(),
    });
    let client = client();
    let (s, b) = send(&client, &fake, &template_to_recipient(SHEENA, "login_code")).await;
    let err = assert_error(s, &b, 400, 131_062);
    assert_eq!(
        err["message"],
        "(#131062) Business-scoped User ID (BSUID) recipients are not supported for this message."
    );
    assert_eq!(err["type"], "OAuthException");
    assert_eq!(err["error_data"]["messaging_product"], "whatsapp");
    assert!(err["error_data"]["details"].is_string());
    assert_eq!(wm_fake_graph::code_info(131_062).http_status, 400);
    // The same template to the phone, or with `to` beside `recipient`, is fine.
    let (s, _) = send(
        &client,
        &fake,
        &template_body(SHEENA_PHONE, "login_code", &[]),
    )
    .await;
    assert_eq!(s, 200);
    let mut both = template_to_recipient(SHEENA, "login_code");
    both["to"] = json!(SHEENA_PHONE);
    assert_eq!(send(&client, &fake, &both).await.0, 200);
    // Other templates go to a BSUID.
    let (s, _) = send(&client, &fake, &template_to_recipient(SHEENA, "hello")).await;
    assert_eq!(s, 200);
    fake.shutdown().await;
}

#[tokio::test]
async fn a_phone_send_makes_the_phone_shareable() {
    let (fake, rx) = fake_with_receiver(quiet()).await;
    fake.register_user(sheena());
    let (s, _) = send(&client(), &fake, &template_body(SHEENA_PHONE, "hello", &[])).await;
    assert_eq!(s, 200);
    assert!(fake.user(SHEENA).unwrap().phone_shared);
    fake.post_inbound_text(PNID, SHEENA, "hi").await.unwrap();
    let (_, v) = &changes(&rx)[0];
    assert_eq!(v["messages"][0]["from"], SHEENA_PHONE);
    assert_eq!(v["contacts"][0]["wa_id"], SHEENA_PHONE);
    fake.shutdown().await;
}

#[tokio::test]
async fn the_window_and_injections_follow_the_user_across_phone_and_bsuid() {
    let (fake, rx) = fake_with_receiver(StatusOptions::default()).await;
    let bsuid = fake.user("16505551234").unwrap().user_id;
    let client = client();
    fake.post_inbound_text(PNID, "16505551234", "hi")
        .await
        .unwrap();
    assert!(fake.window_open(PNID, &bsuid));
    // Opened by phone, used by BSUID.
    let (s, resp) = send(&client, &fake, &text_to("recipient", &bsuid, "by id")).await;
    assert_eq!(s, 200);
    let wamid = resp["messages"][0]["id"].as_str().unwrap().to_owned();
    assert_eq!(fake.message(&wamid).unwrap().async_error, None);
    // Closed by BSUID: a send to the phone fails with 131047.
    fake.set_last_inbound(PNID, &bsuid, None);
    assert!(!fake.window_open(PNID, "+1 (650) 555-1234"));
    let (_, resp) = send(&client, &fake, &text_to("to", "16505551234", "by phone")).await;
    let wamid = resp["messages"][0]["id"].as_str().unwrap().to_owned();
    assert_eq!(fake.message(&wamid).unwrap().async_error, Some(131_047));
    // Opened by BSUID, used by phone; it survives a BSUID change.
    fake.post_inbound_text(PNID, &bsuid, "again").await.unwrap();
    assert!(fake.change_user_id(&bsuid, "US.1111111111111111111"));
    assert!(fake.window_open(PNID, "US.1111111111111111111"));
    assert!(fake.user(&bsuid).is_none(), "the old BSUID is gone");
    let (_, resp) = send(&client, &fake, &text_to("to", "16505551234", "ok")).await;
    let wamid = resp["messages"][0]["id"].as_str().unwrap().to_owned();
    assert_eq!(fake.message(&wamid).unwrap().async_error, None);
    // An injection by BSUID meets a send by phone.
    fake.inject(Injection::new("US.1111111111111111111", 131_048).times(1));
    let (s, b) = send(&client, &fake, &template_body("16505551234", "hello", &[])).await;
    assert_error(s, &b, 429, 131_048);
    assert!(fake.wait_webhooks_idle(Duration::from_secs(5)).await);
    drop(rx);
    fake.shutdown().await;
}
