//! Webhooks about a user's identity: `user_id_update`, the `user_changed_user_id` and
//! `user_changed_number` system messages, `user_preferences`, and their control routes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::users::*;
use common::*;
use serde_json::{Value, json};
use wm_fake_graph::{InboundKind, InboundMessage, UserSpec, generated_user_id};

#[tokio::test]
async fn user_id_update_has_the_documented_payload() {
    let (fake, rx) = fake_with_receiver(quiet()).await;
    fake.register_user(UserSpec {
        phone_shared: true,
        ..sheena()
    });
    fake.post_inbound_text(PNID, SHEENA, "hi").await.unwrap();
    let new = "US.20000000000000000002";
    let posted = fake.post_user_id_update(PNID, SHEENA, new).await.unwrap();
    assert!(posted.acked && posted.field == "user_id_update");
    let (field, v) = changes(&rx).pop().unwrap();
    assert_eq!(field, "user_id_update");
    assert_eq!(v["metadata"]["phone_number_id"], PNID);
    assert_eq!(
        v["contacts"],
        json!([{ "profile": { "name": "Test User" }, "wa_id": SHEENA_PHONE }])
    );
    let u = v["user_id_update"][0].as_object().unwrap();
    assert_eq!(u["wa_id"], SHEENA_PHONE);
    assert_eq!(u["detail"], "User id for Test User has been updated.");
    assert_eq!(u["user_id"], json!({ "previous": SHEENA, "current": new }));
    assert_eq!(
        u["parent_user_id"],
        json!({ "previous": SHEENA_PARENT, "current": SHEENA_PARENT })
    );
    assert!(u["timestamp"].as_str().unwrap().parse::<i64>().is_ok());
    assert_eq!(fake.user(SHEENA_PHONE).unwrap().user_id, new);
    assert!(fake.user(SHEENA).is_none());
    // A user whose phone is withheld: no `wa_id` anywhere.
    fake.register_user(sheena());
    fake.post_user_id_update(PNID, SHEENA, new).await.unwrap();
    let (_, v) = changes(&rx).pop().unwrap();
    assert_eq!(
        v["contacts"],
        json!([{ "profile": { "name": "Test User" } }])
    );
    assert!(v["user_id_update"][0].get("wa_id").is_none());
    assert!(fake.post_user_id_update(PNID, "US.404", new).await.is_err());
    fake.shutdown().await;
}

#[tokio::test]
async fn user_changed_user_id_is_a_system_message() {
    let (fake, rx) = fake_with_receiver(quiet()).await;
    fake.register_user(sheena());
    fake.post_inbound(InboundMessage {
        phone_number_id: PNID.into(),
        from: SHEENA.into(),
        profile_name: Some("Sheena Nelson".into()),
        kind: InboundKind::Text { body: "hi".into() },
        context: None,
    })
    .await
    .unwrap();
    let new = "US.30000000000000000003";
    let posted = fake
        .post_user_changed_user_id(PNID, SHEENA, new)
        .await
        .unwrap();
    assert!(posted.wamid.is_some());
    let (field, v) = changes(&rx).pop().unwrap();
    assert_eq!(field, "messages");
    assert!(
        v.get("contacts").is_none(),
        "system messages have no contacts"
    );
    let m = v["messages"][0].as_object().unwrap();
    assert!(!m.contains_key("from"), "phone not shared");
    assert_eq!(m["from_user_id"], SHEENA);
    assert_eq!(m["type"], "system");
    assert_eq!(
        m["system"],
        json!({
            "body": format!("User Sheena Nelson changed from {SHEENA} to {new}"),
            "user_id": new,
            "parent_user_id": SHEENA_PARENT,
            "type": "user_changed_user_id",
        })
    );
    assert_eq!(fake.user(new).unwrap().phone.as_deref(), Some(SHEENA_PHONE));
    // With a shareable phone, `from` is there.
    fake.post_user_changed_user_id(PNID, "16505551234", "US.40000000000000000004")
        .await
        .unwrap();
    let (_, v) = changes(&rx).pop().unwrap();
    assert_eq!(v["messages"][0]["from"], "16505551234");
    fake.shutdown().await;
}

#[tokio::test]
async fn user_changed_number_carries_the_new_bsuid() {
    let (fake, rx) = fake_with_receiver(quiet()).await;
    let old = fake.user("16505551234").unwrap().user_id;
    fake.post_inbound_text(PNID, "16505551234", "hi")
        .await
        .unwrap();
    fake.post_number_change(PNID, "16505551234", "16505559999")
        .await
        .unwrap();
    let (_, v) = changes(&rx).pop().unwrap();
    let m = &v["messages"][0];
    assert_eq!(m["from"], "16505551234");
    let new = fake.user("16505559999").unwrap();
    assert_ne!(new.user_id, old);
    assert_eq!(new.user_id, generated_user_id("16505559999", 0));
    assert_eq!(
        m["system"],
        json!({
            "body": "User Test User changed from 16505551234 to 16505559999",
            "wa_id": "16505559999",
            "user_id": new.user_id,
            "type": "user_changed_number",
        })
    );
    assert!(fake.user(&old).is_none());
    // The window moved with the person.
    assert!(fake.window_open(PNID, "16505559999"));
    fake.shutdown().await;
}

#[tokio::test]
async fn user_preferences_carry_the_bsuid() {
    let (fake, rx) = fake_with_receiver(quiet()).await;
    fake.register_user(sheena());
    fake.post_user_preference(PNID, SHEENA, "stop")
        .await
        .unwrap();
    fake.post_user_preference(PNID, "16505551234", "resume")
        .await
        .unwrap();
    let got = changes(&rx);
    let (field, v) = &got[0];
    assert_eq!(field, "user_preferences");
    assert_eq!(v["contacts"][0]["profile"]["username"], "realsheenanelson");
    assert!(v["contacts"][0].get("wa_id").is_none());
    let item = v["user_preferences"][0].as_object().unwrap();
    assert!(!item.contains_key("wa_id"));
    assert_eq!(item["user_id"], SHEENA);
    assert_eq!(item["parent_user_id"], SHEENA_PARENT);
    assert_eq!(item["value"], "stop");
    let item = &got[1].1["user_preferences"][0];
    assert_eq!(item["wa_id"], "16505551234");
    assert_eq!(
        item["user_id"],
        fake.user("16505551234").unwrap().user_id.as_str()
    );
    assert!(item.get("parent_user_id").is_none());
    fake.shutdown().await;
}

#[tokio::test]
async fn the_control_api_drives_users_and_identity_webhooks() {
    let (fake, rx) = fake_with_receiver(quiet()).await;
    let client = client();
    let base = fake.url();
    let r = client
        .post(format!("{base}/_fake/users"))
        .json(&json!({ "phone": "+1 650 555 0101", "user_id": SHEENA, "username": "realsheenanelson", "phone_shared": false }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let u: Value = client
        .get(format!("{base}/_fake/users/{SHEENA_PHONE}"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(u["user_id"], SHEENA);
    assert_eq!(u["phone"], SHEENA_PHONE);
    let missing = client
        .get(format!("{base}/_fake/users/US.404"))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status().as_u16(), 404);
    let post = |path: &str, body: Value| {
        client
            .post(format!("{base}/_fake/{path}"))
            .json(&body)
            .send()
    };
    let r = post(
        "user_id_update",
        json!({ "phone_number_id": PNID, "previous_user_id": SHEENA, "current_user_id": "US.5" }),
    )
    .await
    .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let r = post(
        "user_changed_user_id",
        json!({ "phone_number_id": PNID, "user": "US.5", "new_user_id": "US.6" }),
    )
    .await
    .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let r = post(
        "users/change_user_id",
        json!({ "old": "US.6", "new_user_id": "US.7" }),
    )
    .await
    .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let r = post(
        "number_change",
        json!({ "phone_number_id": PNID, "from": SHEENA_PHONE, "new_wa_id": "16505550202" }),
    )
    .await
    .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let r = post(
        "user_preference",
        json!({ "phone_number_id": PNID, "wa_id": "16505550202", "value": "stop" }),
    )
    .await
    .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let fields: Vec<String> = changes(&rx).into_iter().map(|(f, _)| f).collect();
    assert_eq!(
        fields,
        ["user_id_update", "messages", "messages", "user_preferences"]
    );
    assert_eq!(
        fake.user("16505550202").unwrap().user_id,
        generated_user_id("16505550202", 0)
    );
    fake.shutdown().await;
}
