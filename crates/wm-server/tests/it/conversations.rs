//! Conversations: opened by inbound messages, changed by the operator, listed with every
//! filter, tab and summary figure; contacts see them.

use axum::http::Method;
use chrono::Duration;
use serde_json::{Value, json};

use crate::support::{IdOf, Org, TestApp};

fn at(s: &str) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::parse_from_rfc3339(s)
        .unwrap()
        .with_timezone(&chrono::Utc)
}

async fn inbound(org: &Org<'_>, channel: &str, external: &str, name: &str) -> Value {
    org.admin(
        Method::POST,
        "/inbound",
        Some(json!({"channelType": channel, "externalId": external, "fullName": name})),
    )
    .await
    .ok(200)
}

#[tokio::test]
async fn inbound_messages_open_and_reuse_conversations() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let first = inbound(&org, "MESSAGING_APP_A", "5215511110001", "Ana").await;
    assert_eq!(first["created"], true);
    let again = inbound(&org, "MESSAGING_APP_A", "5215511110001", "Ana").await;
    assert_eq!(again["created"], false);
    assert_eq!(
        again["conversationId"], first["conversationId"],
        "the OPEN conversation is reused"
    );
    let id = first["conversationId"].as_str().unwrap();
    let c = org.get(&format!("/conversations/{id}")).await.ok(200);
    assert_eq!(c["status"], "OPEN");
    assert_eq!(c["initiatedBy"], "CONTACT");
    assert_eq!(c["channel"]["type"], "MESSAGING_APP_A");
    assert_eq!(c["contact"]["fullName"], "Ana");
    assert_eq!(c["contact"]["primaryPhone"], "+5215511110001");
    assert_eq!(c["assignedTo"], Value::Null);
    assert!(c["externalConversationId"].as_str().unwrap().len() > 8);
    let contact = first["contactId"].as_str().unwrap();
    let detail = org.get(&format!("/contacts/{contact}")).await.ok(200);
    assert_eq!(detail["source"], "MESSAGING_APP_A_INBOUND");
    // Contacts see it.
    let list = org.get(&format!("/contacts?ids={contact}")).await.ok(200);
    assert_eq!(list["data"][0]["lastConversation"]["id"], id);
    assert_eq!(list["data"][0]["lastConversation"]["status"], "OPEN");
    assert_eq!(
        list["data"][0]["lastConversation"]["channelType"],
        "MESSAGING_APP_A"
    );
    let t = org
        .get(&format!("/contacts/{contact}/timeline?type=conversations"))
        .await
        .ok(200);
    assert_eq!(t["meta"]["total"], 1);
    assert_eq!(
        t["data"][0]["conversation"],
        json!({"id": id, "channelType": "MESSAGING_APP_A", "status": "OPEN"})
    );
    org.delete(&format!("/contacts/{contact}"))
        .await
        .assert_error(409, Some("CONTACT_HAS_HISTORY"));
    // Resolved, a new message opens a new one.
    let r = org
        .admin(
            Method::PATCH,
            &format!("/conversations/{id}"),
            Some(json!({"status": "RESOLVED"})),
        )
        .await
        .ok(200);
    assert_eq!(r["status"], "RESOLVED");
    let third = inbound(&org, "MESSAGING_APP_A", "5215511110001", "Ana").await;
    assert_ne!(third["conversationId"], first["conversationId"]);
}

#[tokio::test]
async fn list_filters_tabs_and_summary() {
    let app = TestApp::new().await;
    // Midday: the half hour the test waits must not cross into tomorrow, which would make
    // today's conversations yesterday's (a CI run after 23:30 UTC failed so).
    app.clock.set(at("2026-11-20T12:00:00Z"));
    let org = app.org().await;
    let other_user = org
        .admin(
            Method::POST,
            "/users",
            Some(json!({"fullName": "Bea", "email": "bea@example.com"})),
        )
        .await
        .ok(201)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    // Yesterday (in the organisation's UTC calendar): one conversation, resolved today.
    app.clock.advance(Duration::days(-1));
    let y = inbound(&org, "MESSAGING_APP_A", "5215522220001", "Yesterday").await;
    app.clock.advance(Duration::days(1));
    let a = inbound(&org, "MESSAGING_APP_A", "5215522220002", "Mine").await;
    let b = inbound(&org, "MESSAGING_APP_A", "5215522220003", "Bea's").await;
    let c = inbound(&org, "MESSAGING_APP_A", "5215522220004", "Nobody").await;
    let id = |v: &Value| v["conversationId"].as_str().unwrap().to_owned();
    org.admin(
        Method::PATCH,
        &format!("/conversations/{}", id(&a)),
        Some(json!({"assignedToUserId": org.user_id})),
    )
    .await
    .ok(200);
    app.clock.advance(Duration::seconds(1));
    org.admin(
        Method::PATCH,
        &format!("/conversations/{}", id(&b)),
        Some(json!({"assignedToUserId": other_user, "status": "PENDING"})),
    )
    .await
    .ok(200);
    app.clock.advance(Duration::seconds(1));
    org.admin(
        Method::PATCH,
        &format!("/conversations/{}", id(&y)),
        Some(json!({"status": "RESOLVED"})),
    )
    .await
    .ok(200);
    app.clock.advance(Duration::minutes(30));
    let all = org.get("/conversations").await.ok(200);
    assert_eq!(
        all["tabs"],
        json!({"all": 4, "unassigned": 1, "mine": 1, "resolved": 1})
    );
    let s = &all["summary"];
    assert_eq!(s["open"], 2);
    assert_eq!(s["newInPeriod"], 3);
    assert_eq!(s["newInPreviousPeriod"], 1);
    assert_eq!(s["unassigned"], 1);
    assert_eq!(s["resolvedToday"], 1);
    assert_eq!(s["resolvedYesterday"], 0);
    assert!(s["oldestWaitingMinutes"].as_u64().unwrap() >= 30);
    let only = |path: String| {
        let org = &org;
        async move { crate::support::ids(&org.get(&path).await.ok(200)) }
    };
    assert_eq!(
        only("/conversations?filter=mine".into()).await,
        vec![id(&a)]
    );
    assert_eq!(
        only("/conversations?filter=unassigned".into()).await,
        vec![id(&c)]
    );
    assert_eq!(
        only("/conversations?filter=resolved".into()).await,
        vec![id(&y)]
    );
    assert_eq!(
        only("/conversations?status=PENDING".into()).await,
        vec![id(&b)]
    );
    assert_eq!(
        only(format!("/conversations?assignedToUserId={other_user}")).await,
        vec![id(&b)]
    );
    assert_eq!(
        only(format!(
            "/conversations?contactId={}",
            c["contactId"].as_str().unwrap()
        ))
        .await,
        vec![id(&c)]
    );
    assert_eq!(only("/conversations?q=nobody".into()).await, vec![id(&c)]);
    assert_eq!(
        only("/conversations?channelType=EMAIL".into()).await,
        Vec::<String>::new()
    );
    assert_eq!(all["data"][0]["id"], id(&y), "latest activity first");
    assert_eq!(all["data"][1]["id"], id(&b));
    org.get("/conversations?filter=starred")
        .await
        .assert_invalid(
            "filter must be one of the following values: all, unassigned, mine, resolved",
        );
    org.get(&format!("/conversations?q={}", "x".repeat(101)))
        .await
        .assert_invalid("q must be shorter than or equal to 100 characters");
    // Scope and tenancy.
    let no_scope = org.key_with(&["contacts:read"]).await;
    app.call(Method::GET, "/conversations", Some(&no_scope), None)
        .await
        .assert_error(403, Some("API_KEY_SCOPE_MISSING"));
    let other = app.org().await;
    other
        .get(&format!("/conversations/{}", id(&a)))
        .await
        .assert_error(404, None);
    assert_eq!(other.get("/conversations").await.ok(200)["tabs"]["all"], 0);
}

#[tokio::test]
async fn summary_days_follow_the_organisation_time_zone() {
    let app = TestApp::new().await;
    // An organisation in Mexico City; the clock set to 03:00 UTC, i.e. 21:00 the day before
    // there: a conversation from 02:00 UTC is "today" in Mexico City, while one at 05:00 UTC
    // the previous day is "yesterday".
    let o = app
        .admin(
            Method::POST,
            "/organizations",
            Some(json!({"name": "MX", "timezone": "America/Mexico_City"})),
        )
        .await
        .ok(201);
    let org_id = o.id().to_owned();
    let user = app
        .admin(
            Method::POST,
            &format!("/organizations/{org_id}/users"),
            Some(json!({"fullName": "U", "email": "u@example.com"})),
        )
        .await
        .ok(201);
    let key = app
        .admin(
            Method::POST,
            &format!("/organizations/{org_id}/api-keys"),
            Some(json!({"name": "k", "userId": user["id"], "scopes": ["conversations:read"]})),
        )
        .await
        .ok(201)["key"]
        .as_str()
        .unwrap()
        .to_owned();
    let post = |ext: &'static str| {
        let app = &app;
        let org_id = org_id.clone();
        async move {
            app.admin(
                Method::POST,
                &format!("/organizations/{org_id}/inbound"),
                Some(json!({"channelType": "MESSAGING_APP_A", "externalId": ext})),
            )
            .await
            .ok(200)
        }
    };
    app.clock.set(at("2026-11-20T05:00:00Z"));
    post("5215533330001").await;
    app.clock.set(at("2026-11-21T02:00:00Z"));
    post("5215533330002").await;
    app.clock.set(at("2026-11-21T03:00:00Z"));
    let s = app
        .call(Method::GET, "/conversations", Some(&key), None)
        .await
        .ok(200)["summary"]
        .clone();
    assert_eq!(
        (s["newInPeriod"].as_u64(), s["newInPreviousPeriod"].as_u64()),
        (Some(1), Some(1))
    );
}
