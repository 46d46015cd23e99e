//! What people do, as Meta posts it: profiles after a first message, every write kind,
//! batches and receipts, echoes and inbox replies, non-ASCII bodies signed as sent.

use super::*;

#[tokio::test]
async fn profiles_need_a_message_first() {
    let e = env().await;
    let fields = "first_name,last_name,profile_pic";
    let (s, b) = e.get(&format!("{PSID}?fields={fields}"), PAGE_TOKEN).await;
    assert_eq!((s, b), (200, json!({})));
    let (s, b) = e
        .get(
            &format!("{IGSID}?fields=name,username,profile_pic"),
            PAGE_TOKEN,
        )
        .await;
    let err = assert_graph_error(s, &b, 230, None);
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("User consent is required to access user profile")
    );
    e.text(PAGE, PSID, "hi").await;
    e.text(IG, IGSID, "oi").await;
    assert!(e.fake.messenger_consented(IG, IGSID));
    let (s, b) = e.get(&format!("{PSID}?fields={fields}"), PAGE_TOKEN).await;
    assert_eq!(s, 200);
    assert_eq!(
        b,
        json!({ "first_name": "Peter", "last_name": "Chang",
                "profile_pic": "https://example.invalid/p.jpg", "id": PSID })
    );
    let (s, b) = e
        .get(
            &format!("{IGSID}?fields=name,username,profile_pic"),
            PAGE_TOKEN,
        )
        .await;
    assert_eq!(s, 200);
    assert_eq!(
        b,
        json!({ "name": "Ana Lima", "username": "ana.lima", "profile_pic": null, "id": IGSID })
    );
    let (s, b) = e.get(&format!("{PSID}?fields=birthday"), PAGE_TOKEN).await;
    assert_graph_error(s, &b, 100, None);
    assert!(e.fake.set_profile_failure(PSID, Some(2)));
    let (s, b) = e.get(&format!("{PSID}?fields={fields}"), PAGE_TOKEN).await;
    let err = assert_graph_error(s, &b, 2, None);
    assert_eq!(err["is_transient"], true);
    e.fake.set_profile_failure(PSID, Some(2_018_218));
    let (s, b) = e.get(&format!("{PSID}?fields={fields}"), PAGE_TOKEN).await;
    assert_graph_error(s, &b, 100, Some(2_018_218));
    // Another Page's person, the Page node.
    let (s, b) = e.get(&format!("{IGSID2}?fields=name"), PAGE_TOKEN).await;
    assert_eq!((s, b["error"]["error_subcode"].clone()), (400, json!(33)));
    let (s, b) = e
        .get("me?fields=name,instagram_business_account", PAGE_TOKEN)
        .await;
    assert_eq!(s, 200);
    assert_eq!(
        b,
        json!({ "name": "Acme", "instagram_business_account": { "id": IG }, "id": PAGE })
    );
    e.fake.shutdown().await;
}

#[tokio::test]
async fn every_write_kind_has_metas_shape() {
    let e = env().await;
    let message_of = |b: &Value| b["entry"][0]["messaging"][0].clone();
    let b = e
        .write(
            PAGE,
            PSID,
            WriteKind::QuickReply {
                text: "Red".into(),
                payload: "RED".into(),
            },
        )
        .await;
    assert_eq!(
        message_of(&b)["message"]["quick_reply"],
        json!({ "payload": "RED" })
    );
    assert_eq!(message_of(&b)["message"]["text"], "Red");
    let b = e
        .write(
            PAGE,
            PSID,
            WriteKind::Postback {
                title: "Start".into(),
                payload: "GO".into(),
            },
        )
        .await;
    let pb = &message_of(&b)["postback"];
    assert_eq!(
        (pb["title"].as_str(), pb["payload"].as_str()),
        (Some("Start"), Some("GO"))
    );
    assert!(pb["mid"].is_string());
    let b = e
        .write(
            PAGE,
            PSID,
            WriteKind::ReplyTo {
                text: "yes".into(),
                mid: "m_1".into(),
            },
        )
        .await;
    assert_eq!(
        message_of(&b)["message"]["reply_to"],
        json!({ "mid": "m_1", "is_self_reply": false })
    );
    let b = e
        .write(
            PAGE,
            PSID,
            WriteKind::Reaction {
                mid: "m_1".into(),
                emoji: Some("\u{2764}\u{fe0f}".into()),
                action: ReactionAction::React,
            },
        )
        .await;
    assert_eq!(
        message_of(&b)["reaction"],
        json!({ "reaction": "love", "emoji": "\u{2764}\u{fe0f}", "action": "react", "mid": "m_1" })
    );
    let b = e
        .write(
            IG,
            IGSID,
            WriteKind::Reaction {
                mid: "m_1".into(),
                emoji: None,
                action: ReactionAction::Unreact,
            },
        )
        .await;
    assert_eq!(
        message_of(&b)["reaction"],
        json!({ "action": "unreact", "mid": "m_1" })
    );
    let b = e
        .write(
            IG,
            IGSID,
            WriteKind::StoryReply {
                text: "nice".into(),
                story_url: "https://cdn/s".into(),
                story_id: "1799".into(),
            },
        )
        .await;
    assert_eq!(
        message_of(&b)["message"]["reply_to"],
        json!({ "story": { "url": "https://cdn/s", "id": "1799" } })
    );
    let b = e
        .write(
            IG,
            IGSID,
            WriteKind::StoryMention {
                url: "https://cdn/m".into(),
            },
        )
        .await;
    assert_eq!(
        message_of(&b)["message"]["attachments"],
        json!([{ "type": "story_mention", "payload": { "url": "https://cdn/m" } }])
    );
    let b = e.write(IG, IGSID, WriteKind::Unsupported).await;
    assert_eq!(message_of(&b)["message"]["is_unsupported"], true);
    let b = e
        .write(IG, IGSID, WriteKind::Deleted { mid: "aWdf".into() })
        .await;
    assert_eq!(
        message_of(&b)["message"],
        json!({ "mid": "aWdf", "is_deleted": true })
    );
    // Instagram-only kinds are refused for a Page.
    let w = Write {
        account_id: PAGE.into(),
        scoped_id: PSID.into(),
        mid: None,
        timestamp_ms: None,
        kind: WriteKind::Unsupported,
    };
    assert!(e.fake.messenger_write(w).await.is_err());
    // A given mid and timestamp are used as they are; the window opens at that time.
    let old = chrono::Utc::now().timestamp_millis() - 25 * 3600 * 1000;
    let w = Write {
        account_id: PAGE2.into(),
        scoped_id: "7097".into(),
        mid: Some("m_given".into()),
        timestamp_ms: Some(old),
        kind: WriteKind::Text("old".into()),
    };
    let posted = e.fake.messenger_write(w).await.unwrap();
    assert_eq!(posted.mid(), Some("m_given"));
    let b: Value = serde_json::from_str(&posted.posted.body).unwrap();
    assert_eq!(message_of(&b)["timestamp"], json!(old));
    assert!(!e.fake.messenger_window_open(PAGE2, "7097"));
    e.fake.shutdown().await;
}

#[tokio::test]
async fn batches_receipts_and_raw_posts() {
    let e = env().await;
    let writes = vec![
        Write::text(PAGE, PSID, "one"),
        Write::text(PAGE, PSID, "two"),
        Write::text(PAGE2, "7096", "three"),
    ];
    let posted = e.fake.messenger_batch(writes).await.unwrap();
    assert_eq!(posted.mids.len(), 3);
    let got = e.page_rx.wait_for(1, Duration::from_secs(5)).await;
    assert_eq!(got.len(), 1, "one POST");
    let body = got[0].json();
    let entries = body["entry"].as_array().unwrap();
    assert_eq!(entries.len(), 3);
    assert!(
        entries
            .iter()
            .all(|en| en["messaging"].as_array().unwrap().len() == 1)
    );
    assert_eq!(entries[2]["id"], PAGE2);
    let mixed = vec![Write::text(PAGE, PSID, "a"), Write::text(IG, IGSID, "b")];
    assert!(e.fake.messenger_batch(mixed).await.is_err());

    let p = e
        .fake
        .messenger_delivered(PAGE, PSID, 1_458_668_856_253, Some(vec!["m_x".into()]))
        .await
        .unwrap();
    let b: Value = serde_json::from_str(&p.posted.body).unwrap();
    assert_eq!(
        b["entry"][0]["messaging"][0],
        json!({ "sender": { "id": PSID }, "recipient": { "id": PAGE },
                "delivery": { "mids": ["m_x"], "watermark": 1_458_668_856_253_i64 } })
    );
    let p = e
        .fake
        .messenger_read(PAGE, PSID, 1_458_668_856_253)
        .await
        .unwrap();
    let b: Value = serde_json::from_str(&p.posted.body).unwrap();
    assert_eq!(
        b["entry"][0]["messaging"][0]["read"],
        json!({ "watermark": 1_458_668_856_253_i64 })
    );
    assert!(e.fake.messenger_read(IG, IGSID, 1).await.is_err());
    let p = e.fake.instagram_seen(IG, IGSID, "aWdf").await.unwrap();
    let b: Value = serde_json::from_str(&p.posted.body).unwrap();
    assert_eq!(
        b["entry"][0]["messaging"][0]["read"],
        json!({ "mid": "aWdf" })
    );

    e.fake
        .configure_messenger_webhook(Some(config(&e.page_rx.url, 1)));
    let before = e.page_rx.received().len();
    let p = e
        .fake
        .post_raw_messenger(
            Platform::Messenger,
            b"{not json".to_vec(),
            RawSignature::Given("sha256=00".into()),
        )
        .await
        .unwrap();
    assert_eq!(p.last_status, Some(403));
    let p = e
        .fake
        .post_raw_messenger(
            Platform::Messenger,
            b"{not json".to_vec(),
            RawSignature::Sign,
        )
        .await
        .unwrap();
    assert!(p.acked);
    e.fake
        .post_raw_messenger(Platform::Messenger, b"{}".to_vec(), RawSignature::Unsigned)
        .await
        .unwrap();
    let got = e.page_rx.received();
    assert_eq!(got.len(), before + 3);
    assert!(got[before + 2].signature.is_none());
    assert!(e.fake.webhook_log().iter().any(|l| l.field == "raw"));
    e.fake.shutdown().await;
}

#[tokio::test]
async fn echoes_carry_app_id_and_metadata_and_inbox_replies_are_recorded() {
    let e = env().await;
    e.fake.set_echoes(PAGE, true);
    e.text(PAGE, PSID, "hi").await;
    let mut m = text_to(PSID, "with metadata");
    m["message"]["metadata"] = json!("order-42");
    let (s, b) = e.send(&m).await;
    assert_eq!(s, 200);
    let got = e.page_rx.wait_for(2, Duration::from_secs(5)).await;
    let echo = got[1].json();
    let item = &echo["entry"][0]["messaging"][0];
    assert_eq!(item["sender"]["id"], PAGE);
    assert_eq!(item["recipient"]["id"], PSID);
    assert_eq!(
        item["message"],
        json!({ "is_echo": true, "app_id": 1_517_776_481_860_111_u64, "metadata": "order-42",
                "mid": b["message_id"], "text": "with metadata" })
    );
    let p = e
        .fake
        .inbox_reply(PAGE, PSID, "typed in the inbox")
        .await
        .unwrap();
    let body: Value = serde_json::from_str(&p.posted.body).unwrap();
    let msg = &body["entry"][0]["messaging"][0]["message"];
    assert_eq!(msg["app_id"], json!(263_902_037_430_900_u64));
    assert!(msg.get("metadata").is_none());
    let last = e.fake.messenger_sends().pop().unwrap();
    assert!(last.via_inbox);
    assert_eq!(p.mid(), Some(last.message_id.as_str()));
    // No echo once they are off.
    e.fake.set_echoes(PAGE, false);
    e.send(&text_to(PSID, "quiet")).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(e.page_rx.received().len(), 3);
    e.fake.shutdown().await;
}

#[tokio::test]
async fn non_ascii_bodies_are_escaped_and_signed_as_sent() {
    let e = env().await;
    e.text(PAGE, PSID, "äöå").await;
    let got = e.page_rx.wait_for(1, Duration::from_secs(5)).await;
    let raw = String::from_utf8(got[0].body.clone()).unwrap();
    assert!(raw.is_ascii());
    assert!(raw.contains(r"\u00e4\u00f6\u00e5"), "{raw}");
    assert_eq!(
        got[0].signature.as_deref(),
        Some(sign(SECRET, &got[0].body).as_str())
    );
    assert_eq!(
        got[0].json()["entry"][0]["messaging"][0]["message"]["text"],
        "äöå"
    );
    e.fake.shutdown().await;
}
