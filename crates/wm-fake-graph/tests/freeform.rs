//! Free-form sends (text, media, reply buttons), the 24-hour customer-service window,
//! mark-as-read and `context`, through real HTTP.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use chrono::Utc;
use common::media::{JPEG, OTHER_PNID, OTHER_TOKEN};
use common::*;
use serde_json::{Value, json};
use wm_fake_graph::{FakeGraph, MediaSpec, NumberSpec, StatusOptions};

const USER: &str = "16505551234";

fn text_body(to: &str, text: &str) -> Value {
    json!({
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": to,
        "type": "text",
        "text": { "body": text, "preview_url": false },
    })
}

fn buttons_body(to: &str, n: usize) -> Value {
    let buttons: Vec<Value> = (0..n)
        .map(|i| json!({ "type": "reply", "reply": { "id": format!("btn-{i}"), "title": format!("Option {i}") } }))
        .collect();
    json!({
        "messaging_product": "whatsapp",
        "to": to,
        "type": "interactive",
        "interactive": {
            "type": "button",
            "body": { "text": "Pick one" },
            "action": { "buttons": buttons },
        },
    })
}

fn read_body(message_id: &str) -> Value {
    json!({ "messaging_product": "whatsapp", "status": "read", "message_id": message_id })
}

/// Statuses of one wamid received so far.
fn statuses_of(rx: &Receiver, wamid: &str) -> Vec<Value> {
    rx.statuses()
        .into_iter()
        .filter(|s| s["id"] == wamid)
        .collect()
}

/// Waits for `n` statuses of `wamid`, then a little longer to catch extra ones.
async fn settle(fake: &FakeGraph, rx: &Receiver, wamid: &str, n: usize) -> Vec<Value> {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while statuses_of(rx, wamid).len() < n && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert!(fake.wait_webhooks_idle(Duration::from_secs(5)).await);
    statuses_of(rx, wamid)
}

fn names(statuses: &[Value]) -> Vec<&str> {
    statuses
        .iter()
        .map(|s| s["status"].as_str().unwrap())
        .collect()
}

fn wamid_of(resp: &Value) -> String {
    resp["messages"][0]["id"].as_str().unwrap().to_owned()
}

/// A multipart upload of `bytes` to `POST /{pnid}/media`; returns the media id.
async fn upload(fake: &FakeGraph, mime: &str, bytes: &[u8]) -> String {
    let boundary = "----freeformtestboundary";
    let mut body = Vec::new();
    for (name, value) in [("messaging_product", "whatsapp"), ("type", mime)] {
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
            )
            .as_bytes(),
        );
    }
    body.extend_from_slice(
        format!("--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f.bin\"\r\nContent-Type: {mime}\r\n\r\n")
            .as_bytes(),
    );
    body.extend_from_slice(bytes);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    let resp = client()
        .post(format!("{}/{VERSION}/{PNID}/media", fake.url()))
        .bearer_auth(TOKEN)
        .header(
            "content-type",
            format!("multipart/form-data; boundary={boundary}"),
        )
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let v: Value = resp.json().await.unwrap();
    v["id"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn text_inside_the_window_is_delivered_with_free_service_pricing() {
    let opts = StatusOptions {
        read: true,
        ..StatusOptions::default()
    };
    let (fake, rx) = fake_with_receiver(opts).await;
    assert!(!fake.window_open(PNID, USER));
    fake.post_inbound_text(PNID, USER, "hola").await.unwrap();
    assert!(fake.window_open(PNID, USER));
    assert!(fake.last_inbound(PNID, USER).is_some());

    let mut body = text_body("+1 (650) 555-1234", "Hi! How can we help?");
    body["biz_opaque_callback_data"] = json!("ticket=9");
    let (s, resp) = send(&client(), &fake, &body).await;
    assert_eq!(s, 200, "{resp}");
    assert_eq!(resp["messaging_product"], "whatsapp");
    assert_eq!(resp["contacts"][0]["input"], "+1 (650) 555-1234");
    assert_eq!(resp["contacts"][0]["wa_id"], USER);
    assert!(resp["messages"][0].get("message_status").is_none());
    let wamid = wamid_of(&resp);

    let statuses = settle(&fake, &rx, &wamid, 3).await;
    assert_eq!(names(&statuses), ["sent", "delivered", "read"]);
    for s in &statuses {
        assert_eq!(s["recipient_id"], USER);
        assert_eq!(s["biz_opaque_callback_data"], "ticket=9");
    }
    for s in &statuses[..2] {
        assert_eq!(
            s["pricing"],
            json!({ "billable": false, "pricing_model": "PMP", "category": "service", "type": "free_customer_service" })
        );
        assert_eq!(s["conversation"]["origin"]["type"], "service");
    }
    assert!(statuses[2].get("pricing").is_none());

    let msg = fake.message(&wamid).unwrap();
    assert_eq!(msg.message_type, "text");
    assert_eq!(msg.text_body.as_deref(), Some("Hi! How can we help?"));
    assert_eq!(msg.body["text"]["preview_url"], false);
    assert_eq!(msg.async_error, None);
    fake.shutdown().await;
}

#[tokio::test]
async fn text_outside_the_window_is_accepted_then_fails_with_131047() {
    let (fake, rx) = fake_with_receiver(StatusOptions::default()).await;
    let client = client();
    // Never wrote.
    let mut body = text_body(USER, "hello?");
    body["biz_opaque_callback_data"] = json!("n=1");
    let (s, resp) = send(&client, &fake, &body).await;
    assert_eq!(s, 200, "accepted synchronously: {resp}");
    let never = wamid_of(&resp);
    // Wrote 25 hours ago.
    fake.set_last_inbound(PNID, USER, Some(Utc::now() - chrono::Duration::hours(25)));
    assert!(!fake.window_open(PNID, USER));
    let (s, resp) = send(&client, &fake, &text_body(USER, "still there?")).await;
    assert_eq!(s, 200, "{resp}");
    let stale = wamid_of(&resp);

    for (wamid, opaque) in [(&never, Some("n=1")), (&stale, None)] {
        let statuses = settle(&fake, &rx, wamid, 1).await;
        assert_eq!(
            names(&statuses),
            ["failed"],
            "no sent/delivered for {wamid}"
        );
        let st = &statuses[0];
        assert!(st.get("pricing").is_none() && st.get("conversation").is_none());
        assert_eq!(
            st.get("biz_opaque_callback_data").and_then(Value::as_str),
            opaque
        );
        let err = &st["errors"][0];
        assert_eq!(err["code"], 131047);
        assert_eq!(err["title"], "Re-engagement message");
        assert_eq!(
            err["error_data"]["details"],
            "Message failed to send because more than 24 hours have passed since the customer last replied to this number."
        );
        assert_eq!(fake.message(wamid).unwrap().async_error, Some(131047));
    }

    // 23 hours ago is inside the window again.
    fake.set_last_inbound(PNID, USER, Some(Utc::now() - chrono::Duration::hours(23)));
    let (_, resp) = send(&client, &fake, &text_body(USER, "back")).await;
    let inside = wamid_of(&resp);
    assert_eq!(
        names(&settle(&fake, &rx, &inside, 2).await),
        ["sent", "delivered"]
    );
    // `None` forgets the user again.
    fake.set_last_inbound(PNID, USER, None);
    assert!(fake.last_inbound(PNID, USER).is_none());
    fake.shutdown().await;
}

#[tokio::test]
async fn templates_are_delivered_outside_the_window() {
    let (fake, rx) = fake_with_receiver(StatusOptions::default()).await;
    let (s, resp) = send(&client(), &fake, &template_body(USER, "hello", &[])).await;
    assert_eq!(s, 200, "{resp}");
    let statuses = settle(&fake, &rx, &wamid_of(&resp), 2).await;
    assert_eq!(names(&statuses), ["sent", "delivered"]);
    assert_eq!(statuses[0]["pricing"]["billable"], true);
    assert_eq!(statuses[0]["pricing"]["category"], "utility");
    assert_eq!(statuses[0]["pricing"]["type"], "regular");
    assert_eq!(fake.accepted()[0].message_type, "template");
    fake.shutdown().await;
}

#[tokio::test]
async fn uploaded_image_is_sendable_by_id_from_its_own_number_only() {
    let (fake, rx) = fake_with_receiver(StatusOptions::default()).await;
    fake.register_number(NumberSpec {
        phone_number_id: OTHER_PNID.into(),
        waba_id: "109999999999000".into(),
        display_phone_number: "15550001111".into(),
        access_token: OTHER_TOKEN.into(),
    });
    let client = client();
    fake.post_inbound_text(PNID, USER, "send me the photo")
        .await
        .unwrap();
    fake.set_last_inbound(OTHER_PNID, USER, Some(Utc::now()));
    let id = upload(&fake, "image/jpeg", JPEG).await;
    let body = json!({
        "messaging_product": "whatsapp", "to": USER, "type": "image",
        "image": { "id": id, "caption": "Your photo" },
    });
    let (s, resp) = send(&client, &fake, &body).await;
    assert_eq!(s, 200, "{resp}");
    let wamid = wamid_of(&resp);
    let msg = fake.message(&wamid).unwrap();
    assert_eq!(msg.message_type, "image");
    assert_eq!(msg.body["image"]["id"], id.as_str());
    assert_eq!(msg.body["image"]["caption"], "Your photo");
    assert_eq!(
        names(&settle(&fake, &rx, &wamid, 2).await),
        ["sent", "delivered"]
    );

    // The same id from another number: 131053, like an unknown id.
    let (s, b) = send_as(&client, &fake, OTHER_PNID, Some(OTHER_TOKEN), &body).await;
    let err = assert_error(s, &b, 400, 131053);
    assert_eq!(err["message"], "(#131053) Media upload error");
    let unknown = json!({
        "messaging_product": "whatsapp", "to": USER, "type": "image",
        "image": { "id": "1234567890123456" },
    });
    let (s, b) = send(&client, &fake, &unknown).await;
    assert_error(s, &b, 400, 131053);

    // Media a user sent (registered with add_media) is usable by id too; a document
    // may carry a filename.
    let pdf = fake.add_media(MediaSpec {
        phone_number_id: PNID.into(),
        bytes: b"%PDF-1.4".to_vec(),
        mime_type: "application/pdf".into(),
        filename: Some("a.pdf".into()),
    });
    let doc = json!({
        "messaging_product": "whatsapp", "to": USER, "type": "document",
        "document": { "id": pdf, "filename": "invoice.pdf", "caption": "Invoice" },
    });
    assert_eq!(send(&client, &fake, &doc).await.0, 200);
    // ...but a PDF is not an image, and an expired file is gone.
    let as_image = json!({
        "messaging_product": "whatsapp", "to": USER, "type": "image", "image": { "id": pdf },
    });
    let (s, b) = send(&client, &fake, &as_image).await;
    assert_error(s, &b, 400, 131053);
    assert!(fake.expire_media(&id));
    let (s, b) = send(&client, &fake, &body).await;
    assert_error(s, &b, 400, 131053);
    fake.shutdown().await;
}

#[tokio::test]
async fn malformed_media_objects_get_100() {
    let fake = fake().await;
    let client = client();
    let cases = [
        json!({ "type": "image", "image": { "id": "1", "link": "https://x.test/a.jpg" } }),
        json!({ "type": "image", "image": { "caption": "nothing to send" } }),
        json!({ "type": "image", "image": { "link": "ftp://x.test/a.jpg" } }),
        json!({ "type": "audio", "audio": { "link": "https://x.test/a.ogg", "caption": "no" } }),
        json!({ "type": "image", "image": { "link": "https://x.test/a.jpg", "filename": "a.jpg" } }),
        json!({ "type": "video", "video": { "link": "https://x.test/a.mp4", "caption": "c".repeat(1025) } }),
    ];
    for mut body in cases {
        body["messaging_product"] = json!("whatsapp");
        body["to"] = json!(USER);
        let (s, b) = send(&client, &fake, &body).await;
        let err = assert_error(s, &b, 400, 100);
        assert_eq!(err["message"], "(#100) Invalid parameter", "{b}");
    }
    // A link send is accepted (the fake does not fetch it).
    let ok = json!({ "messaging_product": "whatsapp", "to": USER, "type": "sticker",
        "sticker": { "link": "https://x.test/s.webp" } });
    assert_eq!(send(&client, &fake, &ok).await.0, 200);
    fake.shutdown().await;
}

#[tokio::test]
async fn reply_buttons_are_validated() {
    let fake = fake().await;
    let client = client();
    fake.set_last_inbound(PNID, USER, Some(Utc::now()));
    let (s, b) = send(&client, &fake, &buttons_body(USER, 4)).await;
    let err = assert_error(s, &b, 400, 100);
    let details = err["error_data"]["details"].as_str().unwrap();
    assert!(
        details.contains("interactive['action']['buttons']") && details.contains("at most 3"),
        "{details}"
    );
    let (s, b) = send(&client, &fake, &buttons_body(USER, 0)).await;
    assert_error(s, &b, 400, 100);
    let mut long_title = buttons_body(USER, 2);
    long_title["interactive"]["action"]["buttons"][1]["reply"]["title"] = json!("x".repeat(21));
    let (s, b) = send(&client, &fake, &long_title).await;
    let err = assert_error(s, &b, 400, 100);
    assert!(
        err["error_data"]["details"]
            .as_str()
            .unwrap()
            .contains("['buttons'][1]['reply']['title']"),
        "{b}"
    );
    let mut long_id = buttons_body(USER, 1);
    long_id["interactive"]["action"]["buttons"][0]["reply"]["id"] = json!("i".repeat(257));
    let (s, b) = send(&client, &fake, &long_id).await;
    assert_error(s, &b, 400, 100);
    let mut long_body = buttons_body(USER, 1);
    long_body["interactive"]["body"]["text"] = json!("b".repeat(1025));
    let (s, b) = send(&client, &fake, &long_body).await;
    assert_error(s, &b, 400, 100);

    let (s, resp) = send(&client, &fake, &buttons_body(USER, 3)).await;
    assert_eq!(s, 200, "{resp}");
    let msg = fake.message(&wamid_of(&resp)).unwrap();
    assert_eq!(msg.message_type, "interactive");
    assert_eq!(
        msg.body["interactive"]["action"]["buttons"][2]["reply"]["id"],
        "btn-2"
    );
    fake.shutdown().await;
}

#[tokio::test]
async fn text_body_length_is_1_to_4096_characters() {
    let fake = fake().await;
    let client = client();
    let (s, b) = send(&client, &fake, &text_body(USER, &"é".repeat(4097))).await;
    let err = assert_error(s, &b, 400, 100);
    assert!(
        err["error_data"]["details"]
            .as_str()
            .unwrap()
            .contains("text['body']"),
        "{b}"
    );
    let (s, b) = send(&client, &fake, &text_body(USER, "")).await;
    assert_error(s, &b, 400, 100);
    let (s, b) = send(&client, &fake, &text_body(USER, &"é".repeat(4096))).await;
    assert_eq!(s, 200, "{b}");
    fake.shutdown().await;
}

#[tokio::test]
async fn mark_as_read_needs_a_message_received_by_the_number() {
    let (fake, _rx) = fake_with_receiver(StatusOptions::default()).await;
    fake.register_number(NumberSpec {
        phone_number_id: OTHER_PNID.into(),
        waba_id: "109999999999000".into(),
        display_phone_number: "15550001111".into(),
        access_token: OTHER_TOKEN.into(),
    });
    let client = client();
    let posted = fake.post_inbound_text(PNID, USER, "hi").await.unwrap();
    let inbound = posted.wamid.unwrap();

    let mut body = read_body(&inbound);
    body["typing_indicator"] = json!({ "type": "text" });
    let (s, resp) = send(&client, &fake, &body).await;
    assert_eq!((s, resp), (200, json!({ "success": true })));
    let (s, _) = send(&client, &fake, &read_body(&inbound)).await;
    assert_eq!(s, 200);
    let reads = fake.reads();
    assert_eq!(reads.len(), 2);
    assert_eq!(reads[0].phone_number_id, PNID);
    assert_eq!(reads[0].message_id, inbound);
    assert!(reads[0].typing && !reads[1].typing);

    // Unknown ids, the business's own messages and another number's messages: 100.
    let (s, b) = send(&client, &fake, &read_body("wamid.unknown")).await;
    let err = assert_error(s, &b, 400, 100);
    assert_eq!(err["message"], "(#100) Invalid parameter");
    let (_, sent) = send(&client, &fake, &template_body(USER, "hello", &[])).await;
    let (s, b) = send(&client, &fake, &read_body(&wamid_of(&sent))).await;
    assert_error(s, &b, 400, 100);
    let (s, b) = send_as(
        &client,
        &fake,
        OTHER_PNID,
        Some(OTHER_TOKEN),
        &read_body(&inbound),
    )
    .await;
    assert_error(s, &b, 400, 100);
    // Bad typing indicator, bad token.
    let mut bad = read_body(&inbound);
    bad["typing_indicator"] = json!({ "type": "audio" });
    let (s, b) = send(&client, &fake, &bad).await;
    assert_error(s, &b, 400, 100);
    let (s, b) = send_as(&client, &fake, PNID, Some("nope"), &read_body(&inbound)).await;
    assert_error(s, &b, 401, 190);

    assert_eq!(fake.reads().len(), 2);
    assert_eq!(fake.stats().attempts, 1, "reads are not send attempts");
    fake.shutdown().await;
}

#[tokio::test]
async fn context_message_id_is_recorded_known_or_not() {
    let (fake, _rx) = fake_with_receiver(StatusOptions::default()).await;
    let client = client();
    let inbound = fake
        .post_inbound_text(PNID, USER, "which sizes?")
        .await
        .unwrap()
        .wamid
        .unwrap();
    let mut body = text_body(USER, "S, M and L");
    body["context"] = json!({ "message_id": inbound });
    let (s, resp) = send(&client, &fake, &body).await;
    assert_eq!(s, 200, "{resp}");
    let reply = wamid_of(&resp);
    let msg = fake.message(&reply).unwrap();
    assert_eq!(msg.context_message_id.as_deref(), Some(inbound.as_str()));
    assert!(fake.knows_message(PNID, &inbound));
    assert!(fake.knows_message(PNID, &reply));
    assert!(!fake.knows_message(OTHER_PNID, &inbound));

    // An id the fake never saw is accepted and recorded as is.
    body["context"] = json!({ "message_id": "wamid.nobody" });
    let (s, resp) = send(&client, &fake, &body).await;
    assert_eq!(s, 200);
    let msg = fake.message(&wamid_of(&resp)).unwrap();
    assert_eq!(msg.context_message_id.as_deref(), Some("wamid.nobody"));
    assert!(!fake.knows_message(PNID, "wamid.nobody"));
    // A context without message_id is malformed.
    body["context"] = json!({});
    let (s, b) = send(&client, &fake, &body).await;
    assert_error(s, &b, 400, 131008);

    // Reactions are free-form too: recorded with their target.
    let react = json!({ "messaging_product": "whatsapp", "to": USER, "type": "reaction",
        "reaction": { "message_id": inbound, "emoji": "👍" } });
    let (s, resp) = send(&client, &fake, &react).await;
    assert_eq!(s, 200, "{resp}");
    let msg = fake.message(&wamid_of(&resp)).unwrap();
    assert_eq!(msg.message_type, "reaction");
    assert_eq!(msg.body["reaction"]["emoji"], "👍");
    fake.shutdown().await;
}

#[tokio::test]
async fn control_api_moves_the_window_and_lists_reads() {
    let (fake, _rx) = fake_with_receiver(StatusOptions::default()).await;
    let client = client();
    let base = fake.url();
    let put = |body: Value| {
        client
            .put(format!("{base}/_fake/window"))
            .json(&body)
            .send()
    };
    let window = || async {
        let url = format!("{base}/_fake/window?phone_number_id={PNID}&wa_id={USER}");
        client
            .get(url)
            .send()
            .await
            .unwrap()
            .json::<Value>()
            .await
            .unwrap()
    };
    let r = put(json!({ "phone_number_id": PNID, "wa_id": USER, "ago_secs": 3600 }))
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let w = window().await;
    assert_eq!(w["open"], true);
    assert!(w["last_inbound"].is_string());
    let at = (Utc::now() - chrono::Duration::hours(30)).to_rfc3339();
    put(json!({ "phone_number_id": PNID, "wa_id": USER, "last_inbound": at }))
        .await
        .unwrap();
    assert_eq!(window().await["open"], false);
    put(json!({ "phone_number_id": PNID, "wa_id": USER, "last_inbound": null }))
        .await
        .unwrap();
    assert_eq!(
        window().await,
        json!({ "last_inbound": null, "open": false })
    );

    let inbound = fake.post_inbound_text(PNID, USER, "x").await.unwrap();
    send(&client, &fake, &read_body(&inbound.wamid.unwrap())).await;
    let reads: Value = client
        .get(format!("{base}/_fake/reads"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(reads.as_array().unwrap().len(), 1);
    assert_eq!(reads[0]["typing"], false);
    fake.shutdown().await;
}
