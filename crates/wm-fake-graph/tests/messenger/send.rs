//! The Send API: windows and tags, tokens, recipients, text limits, quick replies,
//! per-account rate limits and sender actions.

use super::*;

#[tokio::test]
async fn a_written_message_opens_the_window_and_a_reply_is_accepted() {
    let e = env().await;
    let (s, b) = e.send(&text_to(PSID, "too early")).await;
    let err = assert_graph_error(s, &b, 10, Some(2_534_022));
    assert_eq!(
        err["message"],
        "(#10) This message is sent outside of allowed window."
    );

    let body = e.text(PAGE, PSID, "hello, world!").await;
    let got = e.page_rx.wait_for(1, Duration::from_secs(5)).await;
    assert!(got[0].signature_valid);
    assert_eq!(body["object"], "page");
    let entry = &body["entry"][0];
    assert_eq!(entry["id"], PAGE);
    assert!(entry["time"].as_i64().unwrap() > 1_600_000_000_000);
    assert_eq!(entry["messaging"].as_array().unwrap().len(), 1);
    let item = &entry["messaging"][0];
    assert_eq!(item["sender"]["id"], PSID);
    assert_eq!(item["recipient"]["id"], PAGE);
    assert!(item["timestamp"].is_i64());
    assert_eq!(item["message"]["text"], "hello, world!");
    let mid = item["message"]["mid"].as_str().unwrap().to_owned();
    assert!(mid.starts_with("m_"));

    let mut reply = text_to(PSID, "hi Peter");
    reply["reply_to"] = json!({ "mid": mid });
    let (s, b) = e.send(&reply).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["recipient_id"], PSID);
    assert!(b["message_id"].as_str().unwrap().starts_with("m_"));
    assert_eq!(b.as_object().unwrap().len(), 2);
    let sends = e.fake.messenger_sends();
    assert_eq!(sends.len(), 1);
    assert_eq!(sends[0].account_id, PAGE);
    assert_eq!(sends[0].page_id, PAGE);
    assert_eq!(sends[0].platform, Platform::Messenger);
    assert_eq!(sends[0].reply_to.as_deref(), Some(mid.as_str()));
    assert_eq!(sends[0].message["text"], "hi Peter");
    assert_eq!(sends[0].message_id, b["message_id"]);
    // The Page id works like `me`; a bearer token like `access_token`.
    let resp = e
        .http
        .post(e.url(&format!("{PAGE}/messages")))
        .bearer_auth(PAGE_TOKEN)
        .json(&text_to(PSID, "again"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    e.fake.shutdown().await;
}

#[tokio::test]
async fn windows_tags_and_human_agent() {
    let e = env().await;
    e.text(PAGE, PSID, "hi").await;
    e.fake.set_last_write(
        PAGE,
        PSID,
        Some(chrono::Utc::now() - chrono::Duration::hours(25)),
    );
    assert!(!e.fake.messenger_window_open(PAGE, PSID));
    let mut update = text_to(PSID, "later");
    update["messaging_type"] = json!("UPDATE");
    let (s, b) = e.send(&update).await;
    assert_graph_error(s, &b, 10, Some(2_534_022));
    let tagged = json!({
        "recipient": { "id": PSID }, "messaging_type": "MESSAGE_TAG", "tag": "HUMAN_AGENT",
        "message": { "text": "an agent here" },
    });
    // Page 1's app has no Human Agent feature.
    let (s, b) = e.send(&tagged).await;
    assert_graph_error(s, &b, 10, None);
    for tag in [
        "ACCOUNT_UPDATE",
        "CONFIRMED_EVENT_UPDATE",
        "POST_PURCHASE_UPDATE",
    ] {
        let mut t = tagged.clone();
        t["tag"] = json!(tag);
        let (s, b) = e.send(&t).await;
        assert_graph_error(s, &b, 100, Some(1_893_061));
    }
    // Page 2 has it: 7 days after the last message, not 8.
    e.fake.register_person(PersonSpec {
        account_id: PAGE2.into(),
        scoped_id: "7099".into(),
        first_name: "A".into(),
        last_name: "B".into(),
        name: "A B".into(),
        username: None,
        profile_pic: None,
    });
    let mut t2 = tagged.clone();
    t2["recipient"]["id"] = json!("7099");
    for (hours, ok) in [(6 * 24 + 23, true), (8 * 24, false)] {
        e.fake.set_last_write(
            PAGE2,
            "7099",
            Some(chrono::Utc::now() - chrono::Duration::hours(hours)),
        );
        let (s, b) = e.send_to("me/messages", Some(PAGE2_TOKEN), &t2).await;
        if ok {
            assert_eq!(s, 200, "{b}");
        } else {
            assert_graph_error(s, &b, 10, Some(2_534_022));
        }
    }
    let sends = e.fake.messenger_sends();
    assert_eq!(sends.len(), 1);
    assert_eq!(sends[0].messaging_type, "MESSAGE_TAG");
    assert_eq!(sends[0].tag.as_deref(), Some("HUMAN_AGENT"));
    let mut bad = text_to(PSID, "x");
    bad["messaging_type"] = json!("PROMO");
    let (s, b) = e.send(&bad).await;
    assert_graph_error(s, &b, 100, None);
    e.fake.shutdown().await;
}

#[tokio::test]
async fn tokens_are_checked_first() {
    let e = env().await;
    let body = text_to(PSID, "x");
    let (s, b) = e.send_to("me/messages", None, &body).await;
    assert_graph_error(s, &b, 190, None);
    let (s, b) = e.send_to("me/messages", Some("nope"), &body).await;
    let err = assert_graph_error(s, &b, 190, None);
    assert_eq!(
        err["message"],
        "Invalid OAuth access token - Cannot parse access token"
    );
    // A valid Page token on another Page's edge: an object it cannot see.
    let (s, b) = e
        .send_to(&format!("{PAGE2}/messages"), Some(PAGE_TOKEN), &body)
        .await;
    assert_eq!(s, 400);
    assert_eq!(b["error"]["error_subcode"], 33);
    assert!(e.fake.expire_page_token(PAGE));
    let (s, b) = e.send(&body).await;
    let err = assert_graph_error(s, &b, 190, Some(463));
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .starts_with("Error validating access token: Session has expired on ")
    );
    let (s, b) = e.get(PSID, PAGE_TOKEN).await;
    assert_graph_error(s, &b, 190, Some(463));
    e.fake.shutdown().await;
}

#[tokio::test]
async fn recipients_must_be_the_pages_people() {
    let e = env().await;
    let (s, b) = e.send(&text_to("7000000000000999", "x")).await;
    let err = assert_graph_error(s, &b, 100, Some(2_018_001));
    assert_eq!(err["message"], "(#100) No matching user found");
    let (s, b) = e.send(&text_to("not-an-id", "x")).await;
    assert_graph_error(s, &b, 100, None);
    // Another IG account's IGSID, or an IG account id: not an IGSID of this account.
    for id in [IGSID2, IG2] {
        let (s, b) = e.send(&text_to(id, "x")).await;
        assert_graph_error(s, &b, 100, Some(2_534_014));
    }
    // A Page without an Instagram account.
    e.fake.register_page(PageSpec {
        page_id: "104550000000003".into(),
        access_token: "EAAPage3".into(),
        name: "No IG".into(),
        instagram_id: None,
        human_agent: false,
    });
    let (s, b) = e
        .send_to("me/messages", Some("EAAPage3"), &text_to(IGSID, "x"))
        .await;
    assert_graph_error(s, &b, 100, Some(2_534_013));
    e.fake.shutdown().await;
}

#[tokio::test]
async fn instagram_through_the_page_text_limits_and_echo() {
    let e = env().await;
    e.fake.set_echoes(IG, true);
    let body = e.text(IG, IGSID, "oi").await;
    assert_eq!(body["object"], "instagram");
    assert_eq!(body["entry"][0]["id"], IG);
    let item = &body["entry"][0]["messaging"][0];
    assert_eq!(item["sender"]["id"], IGSID);
    assert_eq!(item["recipient"]["id"], IG);
    // 1000 bytes pass, 1001 do not (two-byte characters).
    let (s, b) = e.send(&text_to(IGSID, &"é".repeat(500))).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["recipient_id"], IGSID);
    let mid = b["message_id"].as_str().unwrap().to_owned();
    let (s, b) = e
        .send(&text_to(IGSID, &format!("{}a", "é".repeat(500))))
        .await;
    assert_graph_error(s, &b, 100, None);
    let sends = e.fake.messenger_sends();
    assert_eq!(sends[0].account_id, IG);
    assert_eq!(sends[0].page_id, PAGE);
    assert_eq!(sends[0].platform, Platform::Instagram);
    // The echo arrives inside `messages` with sender = the IG account.
    let got = e.ig_rx.wait_for(2, Duration::from_secs(5)).await;
    let echo = got[1].json();
    assert!(got[1].signature_valid);
    let item = &echo["entry"][0]["messaging"][0];
    assert_eq!(echo["entry"][0]["id"], IG);
    assert_eq!(item["sender"]["id"], IG);
    assert_eq!(item["recipient"]["id"], IGSID);
    assert_eq!(item["message"]["is_echo"], true);
    assert_eq!(item["message"]["mid"], mid.as_str());
    assert!(item["message"].get("app_id").is_none());
    e.fake.shutdown().await;
}

#[tokio::test]
async fn messenger_text_limit_quick_replies_metadata_and_form_bodies() {
    let e = env().await;
    e.text(PAGE, PSID, "hi").await;
    let (s, b) = e.send(&text_to(PSID, &"a".repeat(1999))).await;
    assert_eq!(s, 200, "{b}");
    let (s, b) = e.send(&text_to(PSID, &"a".repeat(2000))).await;
    assert_graph_error(s, &b, 100, None);
    let qr = |n: usize| -> Vec<Value> {
        (0..n)
            .map(|i| json!({ "content_type": "text", "title": format!("opt {i}"), "payload": format!("P{i}") }))
            .collect()
    };
    let mut m = text_to(PSID, "pick");
    m["message"]["quick_replies"] = json!(qr(13));
    assert_eq!(e.send(&m).await.0, 200);
    m["message"]["quick_replies"] = json!(qr(14));
    let (s, b) = e.send(&m).await;
    assert_graph_error(s, &b, 100, None);
    let mut ig = text_to(IGSID, "phone?");
    e.text(IG, IGSID, "hi").await;
    ig["message"]["quick_replies"] = json!([{ "content_type": "user_phone_number" }]);
    let (s, b) = e.send(&ig).await;
    assert_graph_error(s, &b, 100, None);
    let mut md = text_to(PSID, "x");
    md["message"]["metadata"] = json!("m".repeat(1000));
    assert_eq!(e.send(&md).await.0, 400);
    let (s, b) = e
        .send(&json!({ "recipient": { "id": PSID }, "message": {} }))
        .await;
    assert_graph_error(s, &b, 100, Some(2_018_034));
    // Form body, values as JSON, messaging_type absent (RESPONSE).
    let resp = e
        .http
        .post(format!(
            "{}?access_token={PAGE_TOKEN}",
            e.url("me/messages")
        ))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(
            form_urlencoded::Serializer::new(String::new())
                .append_pair("recipient", &format!(r#"{{"id":"{PSID}"}}"#))
                .append_pair("message", r#"{"text":"from a form"}"#)
                .finish(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let last = e.fake.messenger_sends().pop().unwrap();
    assert_eq!(last.message["text"], "from a form");
    assert_eq!(last.messaging_type, "RESPONSE");
    e.fake.shutdown().await;
}

#[tokio::test]
async fn rate_limits_per_account_and_forced_throttling() {
    let e = env().await;
    e.text(PAGE, PSID, "hi").await;
    assert!(e.fake.throttle_messenger_next(PAGE, 2));
    for _ in 0..2 {
        let (s, b) = e.send(&text_to(PSID, "x")).await;
        let err = assert_graph_error(s, &b, 613, Some(2_534_040));
        assert_eq!(
            err["message"],
            "(#613) Calls to this api have exceeded the rate limit."
        );
    }
    assert_eq!(e.send(&text_to(PSID, "x")).await.0, 200);
    // Video: 10 calls per second per Page.
    let video = json!({
        "recipient": { "id": PSID }, "messaging_type": "RESPONSE",
        "message": { "attachment": { "type": "video", "payload": { "url": "https://example.invalid/v.mp4" } } },
    });
    let mut codes = Vec::new();
    let started = std::time::Instant::now();
    for _ in 0..11 {
        codes.push(e.send(&video).await);
    }
    if started.elapsed() < Duration::from_millis(900) {
        assert!(codes[..10].iter().all(|(s, _)| *s == 200), "{codes:?}");
        let (s, b) = &codes[10];
        assert_graph_error(*s, b, 613, Some(2_534_040));
        // Text still goes through: another bucket.
        assert_eq!(e.send(&text_to(PSID, "x")).await.0, 200);
    }
    e.fake.shutdown().await;
}

#[tokio::test]
async fn sender_actions() {
    let e = env().await;
    e.text(PAGE, PSID, "hi").await;
    let (s, b) = e
        .send(&json!({ "recipient": { "id": PSID }, "sender_action": "typing_on" }))
        .await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b, json!({ "recipient_id": PSID }));
    let react = json!({
        "recipient": { "id": PSID }, "sender_action": "react",
        "payload": { "message_id": "m_abc", "reaction": "\u{1f60a}" },
    });
    assert_eq!(e.send(&react).await.0, 200);
    let (s, b) = e
        .send(&json!({ "recipient": { "id": PSID }, "sender_action": "typing_on", "message": { "text": "x" } }))
        .await;
    assert_graph_error(s, &b, 100, None);
    let actions = e.fake.messenger_sender_actions();
    assert_eq!(actions.len(), 2);
    assert_eq!(actions[1].action, "react");
    assert_eq!(actions[1].payload.as_ref().unwrap()["message_id"], "m_abc");
    assert!(e.fake.messenger_sends().is_empty());
    e.fake.shutdown().await;
}
