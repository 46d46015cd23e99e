//! The website chat through the real server over TCP (workers running): a chat embedded
//! only by its sites; a visitor who writes becomes a contact whose conversation is in the
//! inbox; an agent's reply (buttons included) reaches the visitor's event stream live; a
//! dropped stream resumes with every message once; files are typed by their content; forged
//! tokens and wrong hashes get nothing; the limits answer 429 with `Retry-After`; and on
//! PostgreSQL a reply posted on one replica reaches a visitor connected to another.

use std::time::Duration;

use axum::http::Method;
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::support::{Org, TestApp};

const SITE: &str = "https://shop.example";

/// An SSE event: its id, name and JSON data.
#[derive(Debug, Clone)]
struct Sse {
    id: Option<String>,
    event: String,
    data: Value,
}

/// Reads an event stream in the background; its events arrive on the receiver.
async fn listen(url: &str, last_event_id: Option<&str>) -> mpsc::UnboundedReceiver<Sse> {
    let mut req = reqwest::Client::new().get(url).header("origin", SITE);
    if let Some(id) = last_event_id {
        req = req.header("last-event-id", id);
    }
    let res = req.send().await.expect("open the stream");
    assert_eq!(res.status(), 200, "{url}");
    assert_eq!(
        res.headers()["content-type"].to_str().unwrap(),
        "text/event-stream"
    );
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut body = res.bytes_stream();
        let mut buf = String::new();
        while let Some(Ok(chunk)) = body.next().await {
            buf.push_str(&String::from_utf8_lossy(&chunk));
            while let Some(end) = buf.find("\n\n") {
                let block: String = buf.drain(..end + 2).collect();
                let mut e = Sse {
                    id: None,
                    event: "message".into(),
                    data: Value::Null,
                };
                let mut data = String::new();
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("id:") {
                        e.id = Some(v.trim().to_owned());
                    } else if let Some(v) = line.strip_prefix("event:") {
                        e.event = v.trim().to_owned();
                    } else if let Some(v) = line.strip_prefix("data:") {
                        data.push_str(v.trim_start());
                    }
                }
                if data.is_empty() {
                    continue;
                }
                e.data = serde_json::from_str(&data).unwrap_or(Value::Null);
                if tx.send(e).is_err() {
                    return;
                }
            }
        }
    });
    rx
}

/// The next event within 5 s.
async fn next(rx: &mut mpsc::UnboundedReceiver<Sse>) -> Sse {
    tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .expect("an event in time")
        .expect("the stream is open")
}

/// A served chat: the server's root URL, the chat's token and secret.
struct Chat {
    root: String,
    site: String,
    secret: String,
    http: reqwest::Client,
}

impl Chat {
    async fn create(app: &TestApp, org: &Org<'_>) -> (Chat, crate::support::Served) {
        let ch = org
            .admin(
                Method::POST,
                "/channels/webchat",
                Some(
                    json!({"name": "Tienda", "allowedOrigins": [SITE, "https://shop.example:8443/"],
                    "greeting": "¡Hola!"}),
                ),
            )
            .await
            .ok(201);
        assert_eq!(ch["type"], "WEBCHAT");
        let served = app.serve().await;
        let root = served.base.trim_end_matches("/api/v1").to_owned();
        (
            Chat {
                root,
                site: ch["websiteToken"].as_str().unwrap().to_owned(),
                secret: ch["identitySecret"].as_str().unwrap().to_owned(),
                http: reqwest::Client::new(),
            },
            served,
        )
    }

    fn url(&self, path: &str) -> String {
        format!("{}/webchat/v1/{}{path}", self.root, self.site)
    }

    async fn call(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> (u16, Value, reqwest::header::HeaderMap) {
        let mut req = self
            .http
            .request(method, self.url(path))
            .header("origin", SITE);
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        if let Some(b) = body {
            req = req.json(&b);
        }
        let res = req.send().await.unwrap();
        let status = res.status().as_u16();
        let headers = res.headers().clone();
        let body = res.json::<Value>().await.unwrap_or(Value::Null);
        (status, body, headers)
    }

    async fn visitor(&self) -> String {
        let (s, b, _) = self.call(Method::POST, "/visitors", None, None).await;
        assert_eq!(s, 201, "{b}");
        b["visitorToken"].as_str().unwrap().to_owned()
    }

    async fn write(&self, token: &str, text: &str, client: &str) -> Value {
        let (s, b, _) = self
            .call(
                Method::POST,
                "/messages",
                Some(token),
                Some(json!({"text": text, "clientId": client})),
            )
            .await;
        assert_eq!(s, 201, "{b}");
        b
    }

    fn events_url(&self, token: &str) -> String {
        self.url(&format!("/events?token={token}"))
    }

    async fn upload(&self, token: &str, bytes: Vec<u8>, mime: &str, name: &str) -> (u16, Value) {
        let part = reqwest::multipart::Part::bytes(bytes)
            .file_name(name.to_owned())
            .mime_str(mime)
            .unwrap();
        let form = reqwest::multipart::Form::new()
            .text("clientId", uuid::Uuid::new_v4().to_string())
            .part("file", part);
        let res = self
            .http
            .post(self.url("/files"))
            .header("origin", SITE)
            .bearer_auth(token)
            .multipart(form)
            .send()
            .await
            .unwrap();
        let status = res.status().as_u16();
        (status, res.json::<Value>().await.unwrap_or(Value::Null))
    }
}

fn png() -> Vec<u8> {
    // A valid 1×1 PNG.
    let b64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(b64)
        .unwrap()
}

async fn webchat_conversation(org: &Org<'_>) -> String {
    let list = org.get("/conversations?channelType=WEBCHAT").await.ok(200);
    list["data"][0]["id"]
        .as_str()
        .expect("a website chat conversation")
        .to_owned()
}

#[tokio::test]
async fn a_visitor_and_an_agent_talk_live_and_a_dropped_stream_resumes_once() {
    let app = TestApp::whatsapp("http://127.0.0.1:9", |_| {}).await;
    let org = app.org().await;
    let (chat, _served) = Chat::create(&app, &org).await;

    // The script is served from the binary, pointed at this server and chat.
    let js = chat
        .http
        .get(format!("{}/widget/{}.js", chat.root, chat.site))
        .send()
        .await
        .unwrap();
    assert_eq!(js.status(), 200);
    let js = js.text().await.unwrap();
    assert!(js.starts_with("window.__wmWidget = {"), "{}", &js[..80]);
    assert!(js.contains(&chat.site));
    // A browser that takes gzip gets it, about a third of the size.
    let zipped = chat
        .http
        .get(format!("{}/widget/{}.js", chat.root, chat.site))
        .header("accept-encoding", "gzip")
        .send()
        .await
        .unwrap();
    assert_eq!(zipped.headers()["content-encoding"], "gzip");
    let zipped = zipped.bytes().await.unwrap();
    assert!(
        zipped.len() < js.len() / 2,
        "{} of {}",
        zipped.len(),
        js.len()
    );
    let missing = chat
        .http
        .get(format!("{}/widget/wct_nope.js", chat.root))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);

    let (s, config, headers) = chat.call(Method::GET, "/config", None, None).await;
    assert_eq!(s, 200);
    assert_eq!(config["greeting"], "¡Hola!");
    assert_eq!(headers["access-control-allow-origin"], SITE);

    // A visitor writes: a contact, a conversation in the inbox.
    let visitor = chat.visitor().await;
    let mut stream = listen(&chat.events_url(&visitor), None).await;
    let first = chat.write(&visitor, "Hola, ¿hacen envíos?", "c-1").await;
    assert_eq!(first["direction"], "INBOUND");
    assert_eq!(first["clientId"], "c-1");
    // The same message again (a retry) is the first one, not a second.
    let again = chat.write(&visitor, "Hola, ¿hacen envíos?", "c-1").await;
    assert_eq!(again["id"], first["id"]);
    let e = next(&mut stream).await;
    assert_eq!(e.data["id"], first["id"]);
    let first_event = e.id.clone().expect("an event id");

    let c = webchat_conversation(&org).await;
    let thread = org
        .get(&format!("/conversations/{c}/messages"))
        .await
        .ok(200);
    assert_eq!(thread["data"].as_array().unwrap().len(), 1);
    let contact = org.get(&format!("/conversations/{c}")).await.ok(200)["contactId"].clone();
    let contact = org
        .get(&format!("/contacts/{}", contact.as_str().unwrap()))
        .await
        .ok(200);
    assert_eq!(contact["source"], "WEBSITE_FORM");
    assert_eq!(contact["identities"][0]["channelType"], "WEBCHAT");

    // The agent answers with text, then with a button: both reach the stream at once.
    org.post(
        &format!("/conversations/{c}/messages"),
        json!({"type": "TEXT", "text": {"body": "¡Sí! A todo el país."}}),
    )
    .await
    .ok(201);
    org.post(
        &format!("/conversations/{c}/messages"),
        json!({"type": "INTERACTIVE", "interactive": {"body": "¿Te lo envío?",
            "buttons": [{"id": "yes", "title": "Sí, envíalo"}]}}),
    )
    .await
    .ok(201);
    let mut got = Vec::new();
    while got.len() < 2 {
        let e = next(&mut stream).await;
        if e.data["direction"] == "OUTBOUND" && !got.iter().any(|g: &Value| g["id"] == e.data["id"])
        {
            got.push(e.data);
        }
    }
    assert_eq!(got[0]["text"], "¡Sí! A todo el país.");
    assert_eq!(got[0]["author"], "Tess Tester");
    assert_eq!(got[1]["buttons"][0]["title"], "Sí, envíalo");

    // The visitor taps the button: the agent reads it as the customer's answer.
    let (s, tapped, _) = chat
        .call(
            Method::POST,
            "/buttons",
            Some(&visitor),
            Some(json!({"messageId": got[1]["id"], "buttonId": "yes"})),
        )
        .await;
    assert_eq!(s, 201, "{tapped}");
    let thread = org
        .get(&format!("/conversations/{c}/messages"))
        .await
        .ok(200);
    let latest = &thread["data"][0];
    assert_eq!(latest["type"], "INTERACTIVE");
    assert_eq!(latest["interactive"]["replyId"], "yes");
    assert_eq!(latest["text"], "Sí, envíalo");

    // The stream drops; reconnecting after the first event brings every later message once.
    drop(stream);
    let mut resumed = listen(&chat.events_url(&visitor), Some(&first_event)).await;
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(
            next(&mut resumed).await.data["id"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 3, "{ids:?}");
    assert!(!ids.contains(&first["id"].as_str().unwrap().to_owned()));
    assert!(
        tokio::time::timeout(Duration::from_millis(500), resumed.recv())
            .await
            .is_err(),
        "nothing more"
    );

    // History when they come back.
    let (s, history, _) = chat
        .call(Method::GET, "/messages", Some(&visitor), None)
        .await;
    assert_eq!(s, 200);
    assert_eq!(history["data"].as_array().unwrap().len(), 4);
    assert_eq!(history["data"][0]["id"], first["id"]);
}

#[tokio::test]
async fn strangers_forgeries_and_bad_files_get_nothing() {
    let app = TestApp::whatsapp("http://127.0.0.1:9", |_| {}).await;
    let org = app.org().await;
    let (chat, _served) = Chat::create(&app, &org).await;

    // A page of another site cannot start a chat.
    let res = chat
        .http
        .post(chat.url("/visitors"))
        .header("origin", "https://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 403);
    // Not even the refusal is readable from that page: no CORS grant on it.
    assert!(res.headers().get("access-control-allow-origin").is_none());
    // An unknown chat.
    let res = chat
        .http
        .get(format!("{}/webchat/v1/wct_unknown/config", chat.root))
        .header("origin", SITE)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 404);

    // Missing, forged or foreign tokens.
    let visitor = chat.visitor().await;
    for token in [None, Some("forged.token"), Some(&*format!("{visitor}x"))] {
        let (s, _, _) = chat
            .call(
                Method::POST,
                "/messages",
                token,
                Some(json!({"text": "hola"})),
            )
            .await;
        assert_eq!(s, 401, "{token:?}");
    }

    // Files: typed by content, limits named; nothing kept of a refused one.
    let (s, m) = chat.upload(&visitor, png(), "image/png", "foto.png").await;
    assert_eq!(s, 201, "{m}");
    assert_eq!(m["type"], "IMAGE");
    let url = format!(
        "{}{}?token={visitor}",
        chat.root,
        m["media"]["url"].as_str().unwrap()
    );
    let file = chat
        .http
        .get(url)
        .header("origin", SITE)
        .send()
        .await
        .unwrap();
    assert_eq!(file.status(), 200);
    assert_eq!(file.bytes().await.unwrap().to_vec(), png());
    let pdf = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF".to_vec();
    let (s, body) = chat.upload(&visitor, pdf, "image/png", "foto.png").await;
    assert_eq!(s, 400, "{body}");
    assert!(
        body["message"].to_string().contains("application/pdf"),
        "{body}"
    );
    let (s, _) = chat
        .upload(&visitor, b"just text".to_vec(), "text/plain", "a.txt")
        .await;
    assert_eq!(s, 400);
    let mut big = png();
    big.resize(10 * 1024 * 1024 + 10, 0);
    let (s, body) = chat.upload(&visitor, big, "image/png", "big.png").await;
    assert_eq!(s, 413, "{body}");
    let c = webchat_conversation(&org).await;
    let thread = org
        .get(&format!("/conversations/{c}/messages"))
        .await
        .ok(200);
    assert_eq!(
        thread["data"].as_array().unwrap().len(),
        1,
        "only the good file"
    );

    // An oversized text names its limit.
    let (s, body, _) = chat
        .call(
            Method::POST,
            "/messages",
            Some(&visitor),
            Some(json!({"text": "x".repeat(5000)})),
        )
        .await;
    assert_eq!(s, 400, "{body}");
}

#[tokio::test]
async fn a_vouched_for_visitor_finds_their_chat_in_another_browser_and_a_wrong_hash_does_not() {
    use hmac::{Hmac, KeyInit, Mac};
    let app = TestApp::whatsapp("http://127.0.0.1:9", |_| {}).await;
    let org = app.org().await;
    let (chat, _served) = Chat::create(&app, &org).await;
    let hash = |id: &str| {
        let mut m =
            <Hmac<sha2::Sha256> as KeyInit>::new_from_slice(chat.secret.as_bytes()).unwrap();
        m.update(id.as_bytes());
        hex::encode(m.finalize().into_bytes())
    };
    let identify = |id: &str, h: String| {
        chat.call(
            Method::POST,
            "/identify",
            None,
            Some(json!({"identifier": id, "identifierHash": h, "email": "ana@example.com"})),
        )
    };
    let (s, t, _) = identify("user-42", hash("user-42")).await;
    assert_eq!(s, 200, "{t}");
    let first_browser = t["visitorToken"].as_str().unwrap().to_owned();
    chat.write(&first_browser, "Soy Ana, ¿mi pedido?", "a-1")
        .await;

    // Another browser, the same person vouched for: their chat is there.
    let (_, t, _) = identify("user-42", hash("user-42")).await;
    let second = t["visitorToken"].as_str().unwrap().to_owned();
    let (_, history, _) = chat
        .call(Method::GET, "/messages", Some(&second), None)
        .await;
    assert_eq!(history["data"][0]["text"], "Soy Ana, ¿mi pedido?");
    // Their e-mail was filled in when they came back vouched for.
    let c = webchat_conversation(&org).await;
    let contact = org.get(&format!("/conversations/{c}")).await.ok(200)["contactId"].clone();
    let contact = org
        .get(&format!("/contacts/{}", contact.as_str().unwrap()))
        .await
        .ok(200);
    assert_eq!(contact["primaryEmail"], "ana@example.com");

    // A guess: a wrong hash, or another identifier's, gets nothing.
    let (s, _, _) = identify("user-42", hash("user-43")).await;
    assert_eq!(s, 401);
    let (s, _, _) = identify("user-42", "0".repeat(64)).await;
    assert_eq!(s, 401);
    let anonymous = chat.visitor().await;
    let (_, history, _) = chat
        .call(Method::GET, "/messages", Some(&anonymous), None)
        .await;
    assert!(history["data"].as_array().unwrap().is_empty());
}

#[tokio::test]
async fn the_limits_answer_429_with_retry_after() {
    let app = TestApp::whatsapp("http://127.0.0.1:9", |_| {}).await;
    let org = app.org().await;
    let (chat, _served) = Chat::create(&app, &org).await;
    let visitor = chat.visitor().await;
    let mut refused = None;
    for i in 0..25 {
        let (s, body, headers) = chat
            .call(
                Method::POST,
                "/messages",
                Some(&visitor),
                Some(json!({"text": format!("mensaje {i}")})),
            )
            .await;
        if s == 429 {
            refused = Some((i, body, headers));
            break;
        }
        assert_eq!(s, 201, "{body}");
    }
    let (i, body, headers) = refused.expect("the visitor was limited");
    assert_eq!(i, 20, "{body}");
    let retry: u64 = headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry));

    // Six conversations in 12 hours, then no seventh.
    let other = chat.visitor().await;
    for round in 0..6 {
        chat.write(&other, "otra vez", &format!("r-{round}")).await;
        let c = org
            .get("/conversations?channelType=WEBCHAT&status=OPEN")
            .await
            .ok(200)["data"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"].is_string())
            .map(|c| c["id"].as_str().unwrap().to_owned())
            .unwrap();
        org.patch(
            &format!("/conversations/{c}"),
            json!({"status": "RESOLVED"}),
        )
        .await
        .ok(200);
    }
    let (s, body, headers) = chat
        .call(
            Method::POST,
            "/messages",
            Some(&other),
            Some(json!({"text": "la séptima"})),
        )
        .await;
    assert_eq!(s, 429, "{body}");
    assert!(headers.contains_key("retry-after"));
}

#[tokio::test]
async fn a_reply_posted_on_one_replica_reaches_a_visitor_connected_to_another() {
    let app = TestApp::whatsapp("http://127.0.0.1:9", |_| {}).await;
    let Some(other) = app.separate_replica().await else {
        // Replicas share PostgreSQL; SQLite is one process's.
        return;
    };
    let org = app.org().await;
    let (chat, _served) = Chat::create(&app, &org).await;
    let _other_served = other.serve().await;
    let visitor = chat.visitor().await;
    chat.write(&visitor, "Hola", "h-1").await;
    let mut stream = listen(&chat.events_url(&visitor), None).await;
    let c = webchat_conversation(&org).await;
    // Posted to the other replica (its own pool and bell).
    let reply = other
        .call(
            Method::POST,
            &format!("/conversations/{c}/messages"),
            Some(&org.key),
            Some(json!({"type": "TEXT", "text": {"body": "Desde la otra réplica"}})),
        )
        .await
        .ok(201);
    // Within `next`'s few seconds: the ring, not the stream's own look every 15 s.
    let e = loop {
        let e = next(&mut stream).await;
        if e.data["id"] == reply["id"] {
            break e;
        }
    };
    assert_eq!(e.data["text"], "Desde la otra réplica");
}

#[tokio::test]
async fn a_channel_is_webchat_automation_runs_for_visitors() {
    let app = TestApp::whatsapp("http://127.0.0.1:9", |_| {}).await;
    let org = app.org().await;
    let (chat, _served) = Chat::create(&app, &org).await;
    let visitor = chat.visitor().await;
    chat.write(&visitor, "Hola desde la web", "c-1").await;
    org.admin(
        Method::POST,
        "/inbound",
        Some(json!({"channelType": "MESSAGING_APP_A", "externalId": "5215512345678", "text": "Hola"})),
    )
    .await
    .ok(200);
    let seen = crate::automations::tag_customers_on(&app, &org, "WEBCHAT").await;
    assert_eq!(
        seen,
        vec![
            ("MESSAGING_APP_A".to_owned(), false),
            ("WEBCHAT".to_owned(), true)
        ]
    );
}
