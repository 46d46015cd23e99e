//! Answering customers through the real server and the fake Graph API: a text reply inside
//! the 24-hour window is sent once and follows its statuses for free; outside the window a
//! free-form reply is refused before any call and a template is sent and charged; a file
//! uploaded with `POST /media` is sent as a reply; the platform's own 131047 fails a reply
//! and refunds it; the customer's messages are marked read at the platform.

use axum::body::Body;
use axum::http::{Method, Request};
use serde_json::{Value, json};
use wm_fake_graph::{Delivery, InboundKind, Injection, StatusOptions};

use crate::support::{IdOf, Org};
use crate::whatsapp_kit::{PNID, Wa, open_conversation, thread_message};

const PERSON: &str = "5215512000001";

async fn conversation(wa: &Wa) -> (Org<'_>, String, String, String) {
    open_conversation(wa, PERSON).await
}

async fn reply(org: &Org<'_>, conversation: &str, body: Value) -> crate::support::Resp {
    org.post(&format!("/conversations/{conversation}/messages"), body)
        .await
}

/// Runs the reply sender once and lets the statuses land.
async fn deliver(wa: &Wa) -> wm_server::services::replies::deliver::Outcome {
    let out = wm_server::services::replies::deliver::run_once(&wa.app.state)
        .await
        .expect("deliver");
    wa.settle().await;
    out
}

async fn balance(org: &Org<'_>) -> f64 {
    crate::kit::balance(org).await
}

async fn message(org: &Org<'_>, conversation: &str, id: &str) -> Value {
    thread_message(org, conversation, id).await
}

#[tokio::test]
async fn a_text_reply_inside_the_window_is_sent_once_for_free_and_follows_its_statuses() {
    let wa = Wa::start(StatusOptions {
        read: true,
        ..StatusOptions::default()
    })
    .await;
    let (org, c, _, wamid) = conversation(&wa).await;
    let before = balance(&org).await;
    let inbound = org
        .get(&format!("/conversations/{c}/messages"))
        .await
        .ok(200)["data"][0]
        .clone();
    let sent = reply(
        &org,
        &c,
        json!({"type": "text", "text": {"body": "¡Hola! Sí, aquí está."}, "replyToMessageId": inbound["id"]}),
    )
    .await
    .ok(201);
    assert_eq!(sent["status"], "PENDING");
    assert_eq!(sent["direction"], "OUTBOUND");
    assert_eq!(sent["cost"], 0.0);
    assert_eq!(sent["sentBy"]["kind"], "USER");
    assert_eq!(sent["sentBy"]["id"], org.user_id.as_str());
    assert_eq!(sent["replyToMessageId"], inbound["id"]);
    let id = sent.id().to_owned();

    assert_eq!(deliver(&wa).await.sent, 1);
    // A second pass sends nothing again.
    assert_eq!(deliver(&wa).await.sent, 0);
    let calls: Vec<_> = wa
        .fake
        .accepted()
        .into_iter()
        .filter(|m| m.message_type == "text")
        .collect();
    assert_eq!(calls.len(), 1, "sent once");
    assert_eq!(calls[0].text_body.as_deref(), Some("¡Hola! Sí, aquí está."));
    assert_eq!(
        calls[0].biz_opaque_callback_data.as_deref(),
        Some(id.as_str())
    );
    assert_eq!(calls[0].context_message_id.as_deref(), Some(wamid.as_str()));
    let m = message(&org, &c, &id).await;
    assert_eq!(m["status"], "READ");
    assert_eq!(
        balance(&org).await,
        before,
        "a reply inside the window is free"
    );
}

#[tokio::test]
async fn outside_the_window_only_a_template_is_sent_and_it_is_charged() {
    let wa = Wa::start(StatusOptions::default()).await;
    let (org, c, tpl, _) = conversation(&wa).await;
    let before = balance(&org).await;
    wa.app.clock.advance(chrono::Duration::hours(25));
    let refused = reply(
        &org,
        &c,
        json!({"type": "text", "text": {"body": "¿Sigue ahí?"}}),
    )
    .await;
    refused.assert_error(400, Some("CONVERSATION_WINDOW_CLOSED"));
    let buttons = json!({"type": "interactive", "interactive": {"body": "¿Le interesa?",
        "buttons": [{"id": "yes", "title": "Sí"}, {"id": "no", "title": "No"}]}});
    reply(&org, &c, buttons)
        .await
        .assert_error(400, Some("CONVERSATION_WINDOW_CLOSED"));
    deliver(&wa).await;
    assert_eq!(wa.fake.accepted_count(), 0, "nothing was sent");
    assert_eq!(balance(&org).await, before, "nothing was charged");

    let sent = reply(
        &org,
        &c,
        json!({"type": "template", "template": {"templateId": tpl, "variables": {"1": "{{firstName}}"}}}),
    )
    .await
    .ok(201);
    assert_eq!(sent["type"], "TEMPLATE");
    assert_eq!(sent["text"], "Hola Ana, tenemos ofertas");
    let cost = sent["cost"].as_f64().unwrap();
    assert!(cost > 0.0, "a marketing template is charged: {sent}");
    assert!((balance(&org).await - (before - cost)).abs() < 1e-9);
    assert_eq!(deliver(&wa).await.sent, 1);
    let calls = wa.fake.accepted();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].template_name.as_deref(), Some("promo"));
    assert_eq!(calls[0].body_params, ["Ana"]);
    let w = org.get("/wallet").await.ok(200);
    let charged = w["recentEntries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "CHARGE")
        .expect("charge");
    assert!(
        charged["description"].as_str().unwrap().contains(sent.id()),
        "the ledger names the message: {charged}"
    );
    assert_eq!(message(&org, &c, sent.id()).await["status"], "DELIVERED");
}

#[tokio::test]
async fn the_platforms_131047_fails_a_reply_and_refunds_it() {
    let wa = Wa::start(StatusOptions::default()).await;
    let (org, c, tpl, _) = conversation(&wa).await;
    // The platform's clock says the window closed (wm's does not know yet).
    wa.fake.set_last_inbound(
        PNID,
        PERSON,
        Some(chrono::Utc::now() - chrono::Duration::hours(25)),
    );
    let text = reply(&org, &c, json!({"type": "text", "text": {"body": "Hola"}}))
        .await
        .ok(201);
    deliver(&wa).await;
    let m = message(&org, &c, text.id()).await;
    assert_eq!(m["status"], "FAILED", "{m}");
    assert!(
        m["errorMessage"].as_str().unwrap().contains("131047"),
        "{m}"
    );
    // A charged template that fails is refunded.
    let before = balance(&org).await;
    wa.fake
        .inject(Injection::new("*", 131026).mode(Delivery::Async).times(1));
    let t = reply(
        &org,
        &c,
        json!({"type": "template", "template": {"templateId": tpl, "variables": {"1": "Ana"}}}),
    )
    .await
    .ok(201);
    assert!(balance(&org).await < before);
    deliver(&wa).await;
    assert_eq!(message(&org, &c, t.id()).await["status"], "FAILED");
    assert!((balance(&org).await - before).abs() < 1e-9, "refunded");
}

#[tokio::test]
async fn an_uploaded_image_is_sent_as_a_reply_and_a_bad_upload_is_refused() {
    let wa = Wa::start(StatusOptions::default()).await;
    let (org, c, _, _) = conversation(&wa).await;
    let png: Vec<u8> = [&b"\x89PNG\r\n\x1a\n"[..], &[7u8; 300][..]].concat();
    let up = upload(&org, &png, "image/png", "catalogo.png").await;
    assert_eq!(up.0, 201, "{}", up.1);
    assert_eq!(up.1["mimeType"], "image/png");
    assert_eq!(up.1["size"], png.len());
    assert_eq!(up.1["filename"], "catalogo.png");
    let file = up.1["id"].as_str().unwrap().to_owned();
    // A type the platform refuses, an oversized image, no file part.
    let bad = upload(&org, b"MZ...", "application/x-msdownload", "x.exe").await;
    assert_eq!(bad.0, 400, "{}", bad.1);
    // An image larger than WhatsApp takes (5 MB) is kept (another channel takes it, up to
    // 10 MB) but refused as a WhatsApp reply, before any call.
    let big = upload(
        &org,
        &vec![0u8; 5 * 1024 * 1024 + 1],
        "image/jpeg",
        "big.jpg",
    )
    .await;
    assert_eq!(big.0, 201, "{}", big.1);
    let calls = wa.fake.accepted_count();
    reply(
        &org,
        &c,
        json!({"type": "image", "media": {"id": big.1["id"]}}),
    )
    .await
    .assert_invalid(
        "media.id is 5242881 bytes; this conversation's channel takes at most 5242880 bytes for IMAGE",
    );
    assert_eq!(wa.fake.accepted_count(), calls);
    let huge = upload(
        &org,
        &vec![0u8; 10 * 1024 * 1024 + 1],
        "image/jpeg",
        "huge.jpg",
    )
    .await;
    assert_eq!(huge.0, 400, "{}", huge.1);
    // Sent as a document it is refused: a PNG is an image.
    reply(&org, &c, json!({"type": "document", "media": {"id": file}}))
        .await
        .assert_invalid(
            "media.id is a file of type IMAGE (image/png); it cannot be sent as DOCUMENT",
        );

    let sent = reply(
        &org,
        &c,
        json!({"type": "image", "media": {"id": file, "caption": "Nuestro catálogo"}}),
    )
    .await
    .ok(201);
    assert_eq!(sent["type"], "IMAGE");
    assert_eq!(sent["media"]["id"], file.as_str());
    assert_eq!(deliver(&wa).await.sent, 1);
    let call = wa.fake.accepted().pop().expect("sent");
    assert_eq!(call.message_type, "image");
    assert_eq!(call.body["image"]["caption"], "Nuestro catálogo");
    let platform_id = call.body["image"]["id"].as_str().unwrap().to_owned();
    assert_eq!(wa.fake.media_bytes(&platform_id), Some(png.clone()));
    // Sent again, the file is not uploaded again.
    let uploads = wa.fake.media_requests().uploads;
    reply(&org, &c, json!({"type": "image", "media": {"id": file}}))
        .await
        .ok(201);
    assert_eq!(deliver(&wa).await.sent, 1);
    assert_eq!(wa.fake.media_requests().uploads, uploads);
    assert_eq!(message(&org, &c, sent.id()).await["status"], "DELIVERED");
}

#[tokio::test]
async fn the_customers_messages_are_marked_read_at_the_platform() {
    let wa = Wa::start(StatusOptions::default()).await;
    let (org, c, _, _) = conversation(&wa).await;
    let second = wa
        .write(
            PERSON,
            InboundKind::Text {
                body: "¿Hay envío?".into(),
            },
            None,
        )
        .await;
    wa.settle().await;
    let r = org
        .app
        .call(
            Method::POST,
            &format!("/conversations/{c}/read"),
            Some(&org.key),
            None,
        )
        .await
        .ok(200);
    assert_eq!(r["marked"], 2);
    let reads = wa.fake.reads();
    assert_eq!(reads.len(), 1);
    assert_eq!(Some(reads[0].message_id.clone()), second.wamid);
    let page = org
        .get(&format!("/conversations/{c}/messages"))
        .await
        .ok(200);
    assert!(
        page["data"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["status"] == "READ")
    );
}

/// `POST /media` with one file part.
async fn upload(org: &Org<'_>, bytes: &[u8], mime: &str, name: &str) -> (u16, Value) {
    let boundary = "wm-test-boundary";
    let mut body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\nContent-Type: {mime}\r\n\r\n"
    )
    .into_bytes();
    body.extend_from_slice(bytes);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    let req = Request::builder()
        .method(Method::POST)
        .uri("/api/v1/media")
        .header("authorization", format!("Bearer {}", org.key))
        .header(
            "content-type",
            format!("multipart/form-data; boundary={boundary}"),
        )
        .body(Body::from(body))
        .expect("request");
    let r = org.app.send(req).await;
    (r.status.as_u16(), r.body)
}
