//! The console's open thread is pushed its changes (Server-Sent Events on the contact bell)
//! instead of polling: a customer's new message, an agent's reply, each reaches the stream
//! of a signed-in page at once.

use std::time::Duration;

use futures::StreamExt;

use crate::console::{Browser, customer_writes, id_of};
use crate::support::TestApp;

/// The next `changed` event of a console stream within 5 s.
async fn changed(
    body: &mut (impl futures::Stream<Item = reqwest::Result<axum::body::Bytes>> + Unpin),
) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    let mut seen = String::new();
    loop {
        let chunk = tokio::time::timeout_at(deadline, body.next())
            .await
            .expect("a change pushed in time")
            .expect("the stream is open")
            .expect("a chunk");
        seen.push_str(&String::from_utf8_lossy(&chunk));
        // A browser dispatches an event only when it has data.
        if seen.contains("event: changed\ndata: changed\n") {
            return;
        }
    }
}

#[tokio::test]
async fn an_open_thread_is_pushed_each_change() {
    let app = TestApp::new().await;
    let served = app.serve().await;
    let org = app.org().await;
    let first = customer_writes(&org, "5215512345678", "Ana", "Hola").await;
    let conversation = id_of(&first, "conversationId");
    let mut browser = Browser::new(&served);
    browser.sign_in(&org.key).await;
    let origin = served.base.trim_end_matches("/api/v1").to_owned();
    let res = reqwest::Client::new()
        .get(format!("{origin}/console/inbox/{conversation}/events"))
        .header("cookie", browser.cookie_header())
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["content-type"], "text/event-stream");
    let mut body = res.bytes_stream();

    customer_writes(&org, "5215512345678", "Ana", "¿Siguen ahí?").await;
    changed(&mut body).await;
    org.post(
        &format!("/conversations/{conversation}/read"),
        serde_json::json!({}),
    )
    .await;
    customer_writes(&org, "5215512345678", "Ana", "¿Hola?").await;
    changed(&mut body).await;

    // Another organisation's conversation is not streamed to this session.
    let other = app.org().await;
    let theirs = customer_writes(&other, "5215599999999", "Bea", "Hola").await;
    let res = reqwest::Client::new()
        .get(format!(
            "{origin}/console/inbox/{}/events",
            id_of(&theirs, "conversationId")
        ))
        .header("cookie", browser.cookie_header())
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 404);
}

#[tokio::test]
async fn the_inbox_list_is_pushed_a_new_conversation_and_reads_it_back() {
    let app = TestApp::new().await;
    let served = app.serve().await;
    let org = app.org().await;
    let mut browser = Browser::new(&served);
    browser.sign_in(&org.key).await;
    let origin = served.base.trim_end_matches("/api/v1").to_owned();
    let http = reqwest::Client::new();
    let res = http
        .get(format!("{origin}/console/inbox/events"))
        .header("cookie", browser.cookie_header())
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    let mut body = res.bytes_stream();

    // A customer of this organisation writes (and one of another).
    let other = app.org().await;
    customer_writes(&other, "5215599999999", "Bea", "Hola").await;
    customer_writes(&org, "5215512345678", "Ana", "Hola").await;
    changed(&mut body).await;
    // The part the page then fetches lists the new conversation.
    let part = http
        .get(format!("{origin}/console/inbox/part?filter=all"))
        .header("cookie", browser.cookie_header())
        .send()
        .await
        .unwrap();
    assert_eq!(part.status(), 200);
    let html = part.text().await.unwrap();
    assert!(html.starts_with("<div id=\"inbox-part\""), "{html}");
    assert!(html.contains("Ana"), "{html}");
    assert!(!html.contains("Bea"), "{html}");
}
