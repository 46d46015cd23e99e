//! A conversation's thread through the API (the operator's stand-in for the platform): the
//! messages kept newest first and paged by keyset, the status and assignee changed with an
//! API key, and the events each change announces.

use serde_json::{Value, json};

use crate::support::{IdOf, Org, TestApp};

/// Subscribes a webhook to the conversation and message kinds.
async fn subscribe(org: &Org<'_>) {
    org.post(
        "/webhooks",
        json!({"url": "https://hooks.example.com/wm", "events": [
            "conversation.opened", "conversation.assigned", "conversation.closed",
            "message.received", "message.sent", "campaign.replied"]}),
    )
    .await
    .ok(201);
}

/// The person `external` writes `text` (through the operator's stand-in for the platform).
async fn writes(org: &Org<'_>, external: &str, text: &str) -> Value {
    org.admin(
        axum::http::Method::POST,
        "/inbound",
        Some(
            json!({"channelType": "MESSAGING_APP_A", "externalId": external,
                    "fullName": "Ana", "text": text}),
        ),
    )
    .await
    .ok(200)
}

async fn thread(org: &Org<'_>, conversation: &str, query: &str) -> Value {
    org.get(&format!("/conversations/{conversation}/messages{query}"))
        .await
        .ok(200)
}

fn texts(page: &Value) -> Vec<String> {
    page["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|m| m["text"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test]
async fn messages_are_kept_newest_first_and_paged_once_each() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let mut conversation = String::new();
    for i in 0..7 {
        let r = writes(&org, "5215511110001", &format!("mensaje {i}")).await;
        conversation = r["conversationId"]
            .as_str()
            .expect("conversation")
            .to_owned();
        app.clock.advance(chrono::Duration::seconds(1));
    }
    let all = thread(&org, &conversation, "").await;
    assert_eq!(
        texts(&all),
        (0..7)
            .rev()
            .map(|i| format!("mensaje {i}"))
            .collect::<Vec<_>>()
    );
    assert_eq!(all["meta"], json!({"pageSize": 50, "hasMore": false}));
    let first = &all["data"][0];
    assert_eq!(first["direction"], "INBOUND");
    assert_eq!(first["type"], "TEXT");
    assert_eq!(first["status"], "RECEIVED");
    assert_eq!(first["conversationId"], conversation.as_str());
    assert!(first["sentBy"].is_null());

    // Pages of 3 with `before` walk every message once, newest first.
    let mut walked = Vec::new();
    let mut query = "?pageSize=3".to_owned();
    loop {
        let page = thread(&org, &conversation, &query).await;
        walked.extend(texts(&page));
        if page["meta"]["hasMore"] == false {
            break;
        }
        let last = page["data"]
            .as_array()
            .and_then(|d| d.last())
            .expect("last");
        query = format!("?pageSize=3&before={}", last.id());
    }
    assert_eq!(walked, texts(&all));

    // A `before` of another conversation, an unknown one and a bad page size are 400s.
    let other = writes(&org, "5215511110002", "otra").await;
    let theirs = thread(&org, other["conversationId"].as_str().unwrap(), "").await;
    let theirs = theirs["data"][0].id().to_owned();
    org.get(&format!(
        "/conversations/{conversation}/messages?before={theirs}"
    ))
    .await
    .assert_invalid("before must be the id of a message of this conversation");
    org.get(&format!(
        "/conversations/{conversation}/messages?pageSize=101"
    ))
    .await
    .assert_invalid("pageSize must not be greater than 100");
    // Another organisation's conversation is not found.
    let stranger = app.org().await;
    stranger
        .get(&format!("/conversations/{conversation}/messages"))
        .await
        .assert_error(404, None);
}

#[tokio::test]
async fn the_window_runs_from_the_customers_last_message() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let r = writes(&org, "5215511110001", "hola").await;
    let id = r["conversationId"].as_str().unwrap().to_owned();
    let c = org.get(&format!("/conversations/{id}")).await.ok(200);
    let written = app.state.now_ms();
    let expires = chrono::DateTime::parse_from_rfc3339(c["windowExpiresAt"].as_str().unwrap())
        .unwrap()
        .timestamp_millis();
    assert_eq!(expires, written + 24 * 3_600_000);
    app.clock.advance(chrono::Duration::hours(5));
    writes(&org, "5215511110001", "sigo aquí").await;
    let c = org.get(&format!("/conversations/{id}")).await.ok(200);
    let later = chrono::DateTime::parse_from_rfc3339(c["windowExpiresAt"].as_str().unwrap())
        .unwrap()
        .timestamp_millis();
    assert_eq!(later, expires + 5 * 3_600_000);
}

#[tokio::test]
async fn a_key_resolves_assigns_and_reopens_and_each_change_is_announced() {
    let app = TestApp::new().await;
    let org = app.org().await;
    subscribe(&org).await;
    let r = writes(&org, "5215511110001", "hola").await;
    let id = r["conversationId"].as_str().unwrap().to_owned();
    let path = format!("/conversations/{id}");

    // Without conversations:write the change is refused and nothing moves.
    let reader = org.key_with(&["conversations:read"]).await;
    app.call(
        axum::http::Method::PATCH,
        &path,
        Some(&reader),
        Some(json!({"status": "RESOLVED"})),
    )
    .await
    .assert_scope_missing("conversations:write");
    assert_eq!(org.get(&path).await.ok(200)["status"], "OPEN");

    let writer = org
        .key_with(&["conversations:write", "conversations:read"])
        .await;
    let patch = |body: Value| {
        let (path, writer) = (path.clone(), writer.clone());
        let app = &app;
        async move {
            app.call(axum::http::Method::PATCH, &path, Some(&writer), Some(body))
                .await
        }
    };
    let assigned = patch(json!({"assignedToUserId": org.user_id}))
        .await
        .ok(200);
    assert_eq!(assigned["assignedToUserId"], org.user_id.as_str());
    assert_eq!(assigned["assignedTo"]["id"], org.user_id.as_str());
    let resolved = patch(json!({"status": "RESOLVED"})).await.ok(200);
    assert_eq!(resolved["status"], "RESOLVED");
    let reopened = patch(json!({"status": "OPEN"})).await.ok(200);
    assert_eq!(reopened["status"], "OPEN");
    // Assigning the same user again is no new assignment.
    patch(json!({"assignedToUserId": org.user_id}))
        .await
        .ok(200);
    patch(json!({"assignedToUserId": uuid::Uuid::now_v7()}))
        .await
        .assert_invalid("assignedToUserId must be a user of this organization");
    patch(json!({"status": "CLOSED"}))
        .await
        .assert_invalid("status must be one of the following values: OPEN, PENDING, RESOLVED");

    let events = org.events().await;
    let kinds: Vec<&str> = events.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "message.received",
            "conversation.opened",
            "conversation.assigned",
            "conversation.closed",
            "conversation.opened"
        ]
    );
    let received = &events[0].1;
    assert_eq!(received["organizationId"], org.id.as_str());
    assert_eq!(received["message"]["text"], "hola");
    assert_eq!(received["message"]["direction"], "INBOUND");
    assert_eq!(received["message"]["conversationId"], id.as_str());
    let opened = &events[1].1["conversation"];
    assert_eq!(opened["id"], id.as_str());
    assert_eq!(opened["status"], "OPEN");
    assert_eq!(
        events[2].1["conversation"]["assignedTo"]["id"],
        org.user_id.as_str()
    );
    assert_eq!(events[3].1["conversation"]["status"], "RESOLVED");
    // The body is the conversation as GET shows it at that moment.
    let now = org.get(&path).await.ok(200);
    assert_eq!(events[4].1["conversation"]["id"], now["id"]);
    assert_eq!(events[4].1["conversation"]["status"], "OPEN");
}

#[tokio::test]
async fn a_customer_writing_to_a_pending_conversation_continues_it_and_a_resolved_one_starts_anew()
{
    let app = TestApp::new().await;
    let org = app.org().await;
    let first = writes(&org, "5215511110001", "hola").await;
    let id = first["conversationId"].as_str().unwrap().to_owned();
    let path = format!("/conversations/{id}");
    // The agent asked something and waits on the customer.
    org.patch(&path, json!({"status": "PENDING"})).await.ok(200);
    app.clock.advance(chrono::Duration::minutes(3));
    let answer = writes(&org, "5215511110001", "aquí está el dato").await;
    assert_eq!(answer["conversationId"], id.as_str(), "{answer}");
    let c = org.get(&path).await.ok(200);
    assert_eq!(c["status"], "OPEN", "{c}");
    assert_eq!(
        texts(&thread(&org, &id, "").await),
        ["aquí está el dato", "hola"]
    );
    assert_eq!(org.get("/conversations").await.ok(200)["meta"]["total"], 1);

    // Once resolved, the customer's next message is a new conversation.
    org.patch(&path, json!({"status": "RESOLVED"}))
        .await
        .ok(200);
    let again = writes(&org, "5215511110001", "otra pregunta").await;
    assert_ne!(again["conversationId"], id.as_str());
    assert_eq!(org.get(&path).await.ok(200)["status"], "RESOLVED");
    assert_eq!(org.get("/conversations").await.ok(200)["meta"]["total"], 2);
}

#[tokio::test]
async fn a_message_type_read_from_the_api_is_sent_back_as_it_was_read() {
    let app = TestApp::new().await;
    let org = app.org().await;
    crate::kit::number(&org, "+525500000001").await;
    let first = writes(&org, "5215511110001", "hola").await;
    let id = first["conversationId"].as_str().unwrap().to_owned();
    let read = thread(&org, &id, "").await;
    let kind = read["data"][0]["type"].clone();
    assert_eq!(kind, "TEXT");
    let sent = org
        .post(
            &format!("/conversations/{id}/messages"),
            json!({"type": kind, "text": {"body": "¿En qué le ayudo?"}}),
        )
        .await
        .ok(201);
    assert_eq!(sent["type"], "TEXT");
    // The lower-case spelling of earlier versions is still taken.
    let sent = org
        .post(
            &format!("/conversations/{id}/messages"),
            json!({"type": "text", "text": {"body": "¿Algo más?"}}),
        )
        .await
        .ok(201);
    assert_eq!(sent["type"], "TEXT");
    // Anything else names the capitals.
    org.post(
        &format!("/conversations/{id}/messages"),
        json!({"type": "Text", "text": {"body": "x"}}),
    )
    .await
    .assert_invalid("type must be one of the following values: TEXT, IMAGE, VIDEO, AUDIO, DOCUMENT, STICKER, INTERACTIVE, TEMPLATE");
}
