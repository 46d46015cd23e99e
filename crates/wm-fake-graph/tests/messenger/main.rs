//! Messenger Platform and Instagram-through-a-Page: Send API, uploads, profiles,
//! rate limits, windows and the signed `page` / `instagram` webhooks, over real HTTP.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod attachments;
#[path = "../common/mod.rs"]
mod common;
mod send;
mod webhooks;

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
