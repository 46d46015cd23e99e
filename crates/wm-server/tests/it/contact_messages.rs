//! `GET /contacts/{id}/messages`: a contact's whole history across conversations, with the
//! campaign messages of someone who never wrote (which belong to no conversation), newest
//! first by keyset; read with `contacts:read` or `conversations:read`.

use serde_json::{Value, json};

use crate::kit;
use crate::support::{IdOf, TestApp};

async fn history(org: &crate::support::Org<'_>, contact: &str, query: &str) -> Value {
    org.get(&format!("/contacts/{contact}/messages{query}"))
        .await
        .ok(200)
}

#[tokio::test]
async fn a_campaign_to_someone_who_never_wrote_is_in_their_history_with_its_status() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let s = kit::setup(&org).await;
    kit::top_up(&org, 10.0).await;
    let ids = kit::contacts(&org, 2, "vip").await;
    let id = kit::campaign_to(&org, &s, &s.plain, &ids).await;
    org.post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .ok(200);
    for _ in 0..5 {
        app.send_pass().await;
    }
    // The second contact answers; the first never does.
    let phone = org.get(&format!("/contacts/{}", ids[1])).await.ok(200)["primaryPhone"]
        .as_str()
        .unwrap()
        .trim_start_matches('+')
        .to_owned();
    app.clock.advance(chrono::Duration::seconds(5));
    org.admin(
        axum::http::Method::POST,
        "/inbound",
        Some(json!({"channelType": "MESSAGING_APP_A", "externalId": phone, "text": "¿Precio?"})),
    )
    .await
    .ok(200);

    let silent = history(&org, &ids[0], "").await;
    let data = silent["data"].as_array().unwrap();
    assert_eq!(data.len(), 1, "{silent}");
    let sent = &data[0];
    assert_eq!(sent["direction"], "OUTBOUND");
    assert_eq!(sent["type"], "TEMPLATE");
    assert_eq!(sent["text"], "Promo de temporada");
    assert_eq!(sent["sentBy"], json!({"kind": "CAMPAIGN", "id": id}));
    assert!(sent["conversationId"].is_null(), "{sent}");
    // Its status is the recipient's: the simulated platform delivered it.
    let recipients = kit::recipients(&org, &id, "").await;
    let theirs = recipients
        .iter()
        .find(|r| r["contact"]["id"] == ids[0].as_str())
        .unwrap();
    assert_eq!(sent["status"], theirs["status"], "{sent} {theirs}");
    assert_eq!(sent["status"], "DELIVERED");
    // The thread of a conversation cannot show it: they have none.
    let convs = org
        .get(&format!("/conversations?contactId={}", ids[0]))
        .await
        .ok(200);
    assert_eq!(convs["data"], json!([]));

    // The one who answered has both, newest first, the campaign message now in their
    // conversation.
    let answered = history(&org, &ids[1], "").await;
    let texts: Vec<&str> = answered["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["¿Precio?", "Promo de temporada"]);
    assert_eq!(answered["meta"], json!({"pageSize": 50, "hasMore": false}));
}

#[tokio::test]
async fn the_history_pages_by_keyset_and_is_read_with_either_scope() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let mut contact = String::new();
    for (i, external) in ["5215511110001", "5215511110001", "5215511110001"]
        .iter()
        .enumerate()
    {
        let r = org
            .admin(
                axum::http::Method::POST,
                "/inbound",
                Some(json!({"channelType": "MESSAGING_APP_A", "externalId": external, "text": format!("m{i}")})),
            )
            .await
            .ok(200);
        contact = r["contactId"].as_str().unwrap().to_owned();
        app.clock.advance(chrono::Duration::seconds(1));
    }
    // Resolved, then a new conversation: the history runs across both.
    let first_conversation = org.get("/conversations").await.ok(200)["data"][0]
        .id()
        .to_owned();
    org.patch(
        &format!("/conversations/{first_conversation}"),
        json!({"status": "RESOLVED"}),
    )
    .await
    .ok(200);
    org.admin(
        axum::http::Method::POST,
        "/inbound",
        Some(
            json!({"channelType": "MESSAGING_APP_A", "externalId": "5215511110001", "text": "m3"}),
        ),
    )
    .await
    .ok(200);

    let mut walked = Vec::new();
    let mut query = "?pageSize=3".to_owned();
    loop {
        let page = history(&org, &contact, &query).await;
        let data = page["data"].as_array().unwrap();
        walked.extend(data.iter().map(|m| m["text"].as_str().unwrap().to_owned()));
        if page["meta"]["hasMore"] == false {
            break;
        }
        query = format!("?pageSize=3&before={}", data.last().unwrap().id());
    }
    assert_eq!(walked, ["m3", "m2", "m1", "m0"]);

    // Either scope reads it; a key with neither is refused, naming both.
    for scopes in [["contacts:read"], ["conversations:read"]] {
        let key = org.key_with(&scopes).await;
        let r = app
            .call(
                axum::http::Method::GET,
                &format!("/contacts/{contact}/messages"),
                Some(&key),
                None,
            )
            .await;
        assert_eq!(r.status, 200, "{scopes:?}: {}", r.body);
    }
    let key = org.key_with(&["campaigns:read"]).await;
    let r = app
        .call(
            axum::http::Method::GET,
            &format!("/contacts/{contact}/messages"),
            Some(&key),
            None,
        )
        .await;
    r.assert_error(403, Some("API_KEY_SCOPE_MISSING"));
    let said = r.body["message"].as_str().unwrap();
    assert!(
        said.contains("contacts:read") && said.contains("conversations:read"),
        "{said}"
    );

    // A cursor of another contact is a 400; another organisation's contact a 404.
    let other = org
        .admin(
            axum::http::Method::POST,
            "/inbound",
            Some(json!({"channelType": "MESSAGING_APP_A", "externalId": "5215511110009", "text": "x"})),
        )
        .await
        .ok(200);
    org.get(&format!(
        "/contacts/{contact}/messages?before={}",
        other["messageId"].as_str().unwrap()
    ))
    .await
    .assert_invalid("before must be the id of a message of this contact");
    let stranger = app.org().await;
    stranger
        .get(&format!("/contacts/{contact}/messages"))
        .await
        .assert_error(404, None);
}
