//! Messenger Platform and Instagram-through-a-Page: Send API, uploads, profiles,
//! rate limits, windows and the signed `page` / `instagram` webhooks, over real HTTP.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::{Receiver, SECRET, VERSION, client};
use serde_json::{Value, json};
use wm_fake_graph::{
    FakeGraph, FakeGraphOptions, PageSpec, PersonSpec, Platform, RawSignature, ReactionAction,
    RetryPolicy, StatusOptions, WebhookConfig, Write, WriteKind, sign,
};

const PAGE: &str = "104551234567890";
const PAGE_TOKEN: &str = "EAAPageToken";
const IG: &str = "17841405822304914";
const PAGE2: &str = "104559999999999";
const PAGE2_TOKEN: &str = "EAAPage2Token";
const IG2: &str = "17841400000000002";
const PSID: &str = "7012345678901234";
const IGSID: &str = "5012345678901234";
const IGSID2: &str = "5099999999999999";

struct Env {
    fake: FakeGraph,
    page_rx: Receiver,
    ig_rx: Receiver,
    http: reqwest::Client,
}

fn config(url: &str, attempts: u32) -> WebhookConfig {
    WebhookConfig {
        url: url.to_owned(),
        app_secret: SECRET.into(),
        statuses: StatusOptions::default(),
        retry: RetryPolicy {
            max_attempts: attempts,
            initial_backoff_ms: 20,
            ..RetryPolicy::default()
        },
    }
}

/// Page 1 (linked to IG, no Human Agent), page 2 (linked to IG2, Human Agent), a PSID and
/// an IGSID of page 1, an IGSID of IG2, both webhooks wired.
async fn env() -> Env {
    let fake = FakeGraph::start(FakeGraphOptions::default()).await.unwrap();
    fake.register_page(PageSpec {
        page_id: PAGE.into(),
        access_token: PAGE_TOKEN.into(),
        name: "Acme".into(),
        instagram_id: Some(IG.into()),
        human_agent: false,
    });
    fake.register_page(PageSpec {
        page_id: PAGE2.into(),
        access_token: PAGE2_TOKEN.into(),
        name: "Other".into(),
        instagram_id: Some(IG2.into()),
        human_agent: true,
    });
    fake.register_person(PersonSpec {
        account_id: PAGE.into(),
        scoped_id: PSID.into(),
        first_name: "Peter".into(),
        last_name: "Chang".into(),
        name: "Peter Chang".into(),
        username: None,
        profile_pic: Some("https://example.invalid/p.jpg".into()),
    });
    fake.register_person(PersonSpec {
        account_id: IG.into(),
        scoped_id: IGSID.into(),
        first_name: String::new(),
        last_name: String::new(),
        name: "Ana Lima".into(),
        username: Some("ana.lima".into()),
        profile_pic: None,
    });
    fake.register_person(PersonSpec {
        account_id: IG2.into(),
        scoped_id: IGSID2.into(),
        first_name: String::new(),
        last_name: String::new(),
        name: "Zed".into(),
        username: Some("zed".into()),
        profile_pic: None,
    });
    let page_rx = Receiver::start(SECRET).await;
    let ig_rx = Receiver::start(SECRET).await;
    fake.configure_messenger_webhook(Some(config(&page_rx.url, 4)));
    fake.configure_instagram_webhook(Some(config(&ig_rx.url, 4)));
    Env {
        fake,
        page_rx,
        ig_rx,
        http: client(),
    }
}

impl Env {
    fn url(&self, path: &str) -> String {
        format!("{}/{VERSION}/{path}", self.fake.url())
    }

    async fn send_to(&self, path: &str, token: Option<&str>, body: &Value) -> (u16, Value) {
        let url = match token {
            Some(t) => format!("{}?access_token={t}", self.url(path)),
            None => self.url(path),
        };
        let resp = self.http.post(url).json(body).send().await.unwrap();
        (resp.status().as_u16(), resp.json().await.unwrap())
    }

    async fn send(&self, body: &Value) -> (u16, Value) {
        self.send_to("me/messages", Some(PAGE_TOKEN), body).await
    }

    async fn get(&self, path: &str, token: &str) -> (u16, Value) {
        let resp = self
            .http
            .get(self.url(path))
            .bearer_auth(token)
            .send()
            .await
            .unwrap();
        (resp.status().as_u16(), resp.json().await.unwrap())
    }

    async fn write(&self, account: &str, who: &str, kind: WriteKind) -> Value {
        let w = Write {
            account_id: account.into(),
            scoped_id: who.into(),
            mid: None,
            timestamp_ms: None,
            kind,
        };
        let posted = self.fake.messenger_write(w).await.unwrap();
        assert!(posted.posted.acked, "{posted:?}");
        serde_json::from_str(&posted.posted.body).unwrap()
    }

    async fn text(&self, account: &str, who: &str, text: &str) -> Value {
        self.write(account, who, WriteKind::Text(text.into())).await
    }
}

fn text_to(who: &str, text: &str) -> Value {
    json!({ "recipient": { "id": who }, "messaging_type": "RESPONSE", "message": { "text": text } })
}

fn assert_graph_error(status: u16, body: &Value, code: i64, subcode: Option<i64>) -> Value {
    let err = &body["error"];
    assert_eq!(err["code"], json!(code), "{body}");
    assert_eq!(
        err.get("error_subcode").and_then(Value::as_i64),
        subcode,
        "{body}"
    );
    assert_eq!(err["type"], "OAuthException", "{body}");
    assert!(err["fbtrace_id"].as_str().is_some_and(|s| !s.is_empty()));
    let expected = if matches!(code, 1 | 2) { 500 } else { 400 };
    assert_eq!(status, expected, "{body}");
    err.clone()
}

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

async fn upload(
    e: &Env,
    token: &str,
    message: &Value,
    file: Option<(&[u8], &str)>,
    ig: bool,
) -> (u16, Value) {
    let mut form = reqwest::multipart::Form::new().text("message", message.to_string());
    if ig {
        form = form.text("platform", "instagram");
    }
    if let Some((bytes, mime)) = file {
        let part = reqwest::multipart::Part::bytes(bytes.to_vec())
            .file_name("f.bin")
            .mime_str(mime)
            .unwrap();
        form = form.part("filedata", part);
    }
    let resp = e
        .http
        .post(format!(
            "{}?access_token={token}",
            e.url("me/message_attachments")
        ))
        .multipart(form)
        .send()
        .await
        .unwrap();
    (resp.status().as_u16(), resp.json().await.unwrap())
}

#[tokio::test]
async fn attachment_upload_reuse_and_limits() {
    let e = env().await;
    let image = json!({ "attachment": { "type": "image", "payload": { "is_reusable": true } } });
    let png = b"\x89PNG\r\n\x1a\nfake image".to_vec();
    let (s, b) = upload(&e, PAGE_TOKEN, &image, Some((&png, "image/png")), false).await;
    assert_eq!(s, 200, "{b}");
    let id = b["attachment_id"].as_str().unwrap().to_owned();
    assert_eq!(
        e.fake.messenger_attachment(&id),
        Some(("image/png".to_owned(), png.clone()))
    );
    let send = |id: &str, to: &str| {
        json!({ "recipient": { "id": to }, "messaging_type": "RESPONSE",
                "message": { "attachment": { "type": "image", "payload": { "attachment_id": id } } } })
    };
    e.text(PAGE, PSID, "hi").await;
    let (s, b) = e.send(&send(&id, PSID)).await;
    assert_eq!(s, 200, "{b}");
    // Page 2 does not own it.
    e.fake.register_person(PersonSpec {
        account_id: PAGE2.into(),
        scoped_id: "7098".into(),
        first_name: "A".into(),
        last_name: "B".into(),
        name: "A B".into(),
        username: None,
        profile_pic: None,
    });
    e.fake
        .set_last_write(PAGE2, "7098", Some(chrono::Utc::now()));
    let (s, b) = e
        .send_to("me/messages", Some(PAGE2_TOKEN), &send(&id, "7098"))
        .await;
    assert_graph_error(s, &b, 100, Some(2_018_074));
    let (s, b) = e.send(&send("123456", PSID)).await;
    assert_graph_error(s, &b, 100, Some(2_018_074));
    // 8 MB images, 25 MB others; the type must match.
    let big = vec![0u8; 8 * 1024 * 1024 + 1];
    let (s, b) = upload(&e, PAGE_TOKEN, &image, Some((&big, "image/png")), false).await;
    let err = assert_graph_error(s, &b, 100, Some(2_018_109));
    assert_eq!(
        err["message"],
        "(#100) Attachment size exceeds allowable limit"
    );
    let file = json!({ "attachment": { "type": "file", "payload": { "is_reusable": true } } });
    let (s, b) = upload(
        &e,
        PAGE_TOKEN,
        &file,
        Some((&big, "application/pdf")),
        false,
    )
    .await;
    assert_eq!(s, 200, "{b}");
    let (s, b) = upload(&e, PAGE_TOKEN, &image, Some((b"ID3", "audio/mpeg")), false).await;
    assert_graph_error(s, &b, 100, Some(2_018_047));
    // Instagram uploads go through the Page with `platform=instagram`.
    let (s, b) = upload(&e, PAGE_TOKEN, &image, Some((&png, "image/png")), true).await;
    assert_eq!(s, 200, "{b}");
    let ig_id = b["attachment_id"].as_str().unwrap().to_owned();
    assert_eq!(
        e.fake.messenger_attachment_info(&ig_id).unwrap().platform,
        Platform::Instagram
    );
    let (s, b) = upload(&e, PAGE_TOKEN, &image, Some((&png, "image/webp")), true).await;
    assert_graph_error(s, &b, 100, Some(2_018_047));
    e.fake.register_page(PageSpec {
        page_id: "104550000000003".into(),
        access_token: "EAAPage3".into(),
        name: "No IG".into(),
        instagram_id: None,
        human_agent: false,
    });
    let (s, b) = upload(&e, "EAAPage3", &image, Some((&png, "image/png")), true).await;
    assert_graph_error(s, &b, 100, Some(2_534_013));
    let (s, b) = upload(&e, "bad", &image, Some((&png, "image/png")), false).await;
    assert_graph_error(s, &b, 190, None);
    e.fake.shutdown().await;
}

#[tokio::test]
async fn written_attachments_are_served_and_url_uploads_fetch_them() {
    let e = env().await;
    let jpeg = b"\xff\xd8\xff\xe0 a photo".to_vec();
    let body = e
        .write(
            PAGE,
            PSID,
            WriteKind::Attachment {
                kind: "image".into(),
                mime: "image/jpeg".into(),
                bytes: jpeg.clone(),
            },
        )
        .await;
    let att = &body["entry"][0]["messaging"][0]["message"]["attachments"][0];
    assert_eq!(att["type"], "image");
    let url = att["payload"]["url"].as_str().unwrap().to_owned();
    let resp = e.http.get(&url).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "image/jpeg");
    assert_eq!(resp.bytes().await.unwrap().to_vec(), jpeg);
    // A URL upload is fetched (loopback) and its bytes kept.
    let msg = json!({ "message": { "attachment": { "type": "image", "payload": { "url": url, "is_reusable": true } } } });
    let (s, b) = e
        .send_to("me/message_attachments", Some(PAGE_TOKEN), &msg)
        .await;
    assert_eq!(s, 200, "{b}");
    let id = b["attachment_id"].as_str().unwrap();
    assert_eq!(e.fake.messenger_attachment(id).unwrap().1, jpeg);
    let dead = json!({ "message": { "attachment": { "type": "image", "payload": { "url": "http://127.0.0.1:9/x.jpg" } } } });
    let (s, b) = e
        .send_to("me/message_attachments", Some(PAGE_TOKEN), &dead)
        .await;
    assert_graph_error(s, &b, 100, Some(2_018_008));
    // Instagram files use the lookaside shape; URLs expire.
    e.fake.set_messenger_cdn_ttl(Duration::from_millis(200));
    let body = e
        .write(
            IG,
            IGSID,
            WriteKind::Attachment {
                kind: "audio".into(),
                mime: "audio/mp4".into(),
                bytes: b"m4a".to_vec(),
            },
        )
        .await;
    let url = body["entry"][0]["messaging"][0]["message"]["attachments"][0]["payload"]["url"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(url.contains("/ig_messaging_cdn/?asset_id="), "{url}");
    assert_eq!(e.http.get(&url).send().await.unwrap().status(), 200);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(e.http.get(&url).send().await.unwrap().status(), 403);
    e.fake.shutdown().await;
}

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

#[tokio::test]
async fn whatsapp_endpoints_are_unchanged_beside_pages() {
    let fake = common::fake().await;
    fake.register_page(PageSpec {
        page_id: PAGE.into(),
        access_token: PAGE_TOKEN.into(),
        name: "Acme".into(),
        instagram_id: None,
        human_agent: false,
    });
    let http = client();
    let (s, b) = common::send(
        &http,
        &fake,
        &common::template_body("16505551234", "hello", &[]),
    )
    .await;
    assert_eq!(s, 200, "{b}");
    assert!(
        b["messages"][0]["id"]
            .as_str()
            .unwrap()
            .starts_with("wamid.")
    );
    // An unknown media id with the WhatsApp token is still the media endpoint's 100/33.
    let resp = http
        .get(format!("{}/{VERSION}/999", fake.url()))
        .bearer_auth(common::TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 400);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["type"], "GraphMethodException");
    // A WhatsApp send body over axum's default 2 MB limit is still refused with 413.
    let resp = http
        .post(common::messages_url(&fake, common::PNID))
        .bearer_auth(common::TOKEN)
        .header("content-type", "application/json")
        .body(vec![b' '; 3 * 1024 * 1024])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 413);
    fake.shutdown().await;
}

#[tokio::test]
async fn multipart_send_with_filedata_answers_a_reusable_attachment_id() {
    let e = env().await;
    e.fake.set_echoes(PAGE, true);
    e.text(PAGE, PSID, "send me the video").await;
    let video = vec![7u8; 3 * 1024 * 1024];
    let form = reqwest::multipart::Form::new()
        .text("recipient", format!(r#"{{"id":"{PSID}"}}"#))
        .text("messaging_type", "RESPONSE")
        .text(
            "message",
            r#"{"attachment":{"type":"video","payload":{"is_reusable":true}}}"#,
        )
        .part(
            "filedata",
            reqwest::multipart::Part::bytes(video.clone())
                .file_name("clip.mp4")
                .mime_str("video/mp4")
                .unwrap(),
        );
    let resp = e
        .http
        .post(format!(
            "{}?access_token={PAGE_TOKEN}",
            e.url("me/messages")
        ))
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let b: Value = resp.json().await.unwrap();
    assert_eq!(b["recipient_id"], PSID);
    let id = b["attachment_id"].as_str().unwrap();
    assert_eq!(
        e.fake.messenger_attachment(id),
        Some(("video/mp4".to_owned(), video.clone()))
    );
    // The echo's attachment URL serves the same bytes.
    let got = e.page_rx.wait_for(2, Duration::from_secs(5)).await;
    let echo = got[1].json();
    let att = &echo["entry"][0]["messaging"][0]["message"]["attachments"][0];
    assert_eq!(att["type"], "video");
    let url = att["payload"]["url"].as_str().unwrap();
    let served = e.http.get(url).send().await.unwrap().bytes().await.unwrap();
    assert_eq!(served.to_vec(), video);
    e.fake.shutdown().await;
}

#[tokio::test]
async fn control_api_drives_the_same_fake() {
    let fake = FakeGraph::start(FakeGraphOptions::default()).await.unwrap();
    let rx = Receiver::start(SECRET).await;
    let http = client();
    let base = fake.url();
    let post = |path: &str, body: Value| http.post(format!("{base}{path}")).json(&body).send();
    let page = json!({ "page_id": PAGE, "access_token": PAGE_TOKEN, "name": "Acme" });
    assert_eq!(
        post("/_fake/messenger/pages", page).await.unwrap().status(),
        200
    );
    let resp = http
        .put(format!("{base}/_fake/messenger/webhook/page"))
        .json(&config(&rx.url, 1))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let w = json!({ "account_id": PAGE, "scoped_id": PSID, "kind": { "type": "text", "value": "hey" } });
    let resp = post("/_fake/messenger/write", w).await.unwrap();
    assert_eq!(resp.status(), 200);
    let posted: Value = resp.json().await.unwrap();
    assert!(posted["mids"][0].as_str().unwrap().starts_with("m_"));
    assert_eq!(rx.wait_for(1, Duration::from_secs(5)).await.len(), 1);
    let resp = http
        .post(format!("{base}/{VERSION}/me/messages"))
        .bearer_auth(PAGE_TOKEN)
        .json(&text_to(PSID, "reply"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let sends: Value = http
        .get(format!("{base}/_fake/messenger/sends"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(sends[0]["recipient"], PSID);
    fake.shutdown().await;
}
