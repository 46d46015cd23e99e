//! Conversations that hold their messages, through the real server and the fake Graph API:
//! what a customer sends (text, location, a button reply, a photo) is kept with its content
//! and read newest first; the photo's bytes are fetched from the platform (retried, given
//! up once the platform no longer has them) and served by `GET /media/{id}`; a campaign's
//! template message joins the thread and follows its statuses.

use axum::body::Body;
use axum::http::{Method, Request};
use serde_json::{Value, json};
use wm_fake_graph::{InboundKind, MediaSpec, StatusOptions};

use crate::support::{IdOf, Org};
use crate::whatsapp_kit::{PNID, Wa, campaign, drive, number, people, synced_template};

const PERSON: &str = "5215512000001";

/// A small JPEG-looking file.
fn photo() -> Vec<u8> {
    let mut b = vec![0xFF, 0xD8, 0xFF, 0xE0];
    b.extend((0..2_000u32).map(|i| (i % 251) as u8));
    b
}

/// The person's conversation (the organisation has one).
async fn the_conversation(org: &Org<'_>) -> String {
    let list = org.get("/conversations").await.ok(200);
    assert_eq!(list["data"].as_array().map(Vec::len), Some(1), "{list}");
    list["data"][0].id().to_owned()
}

async fn thread(org: &Org<'_>, conversation: &str) -> Vec<Value> {
    let page = org
        .get(&format!("/conversations/{conversation}/messages"))
        .await
        .ok(200);
    page["data"].as_array().expect("data").clone()
}

/// `GET /media/{id}`: status, Content-Type and bytes.
async fn download(org: &Org<'_>, id: &str) -> (u16, String, Vec<u8>) {
    let req = Request::builder()
        .method(Method::GET)
        .uri(format!("/api/v1/media/{id}"))
        .header("authorization", format!("Bearer {}", org.key))
        .body(Body::empty())
        .expect("request");
    let res = tower::ServiceExt::oneshot(org.app.router.clone(), req)
        .await
        .expect("response");
    let status = res.status().as_u16();
    let ct = res
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let bytes = axum::body::to_bytes(res.into_body(), usize::MAX)
        .await
        .expect("body")
        .to_vec();
    (status, ct, bytes)
}

#[tokio::test]
async fn what_a_customer_sends_is_kept_with_its_content_and_its_photo_is_served() {
    let wa = Wa::start(StatusOptions::default()).await;
    let org = wa.app.org().await;
    number(&org).await;
    wa.write(
        PERSON,
        InboundKind::Text {
            body: "Hola, ¿tienen catálogo?".into(),
        },
        None,
    )
    .await;
    wa.write(
        PERSON,
        InboundKind::Location {
            latitude: 19.4326,
            longitude: -99.1332,
            name: Some("Zócalo".into()),
            address: Some("Centro, CDMX".into()),
        },
        None,
    )
    .await;
    wa.write(
        PERSON,
        InboundKind::ButtonReply {
            id: "catalogue-yes".into(),
            title: "Sí, envíenlo".into(),
        },
        None,
    )
    .await;
    let media = wa.fake.add_media(MediaSpec {
        phone_number_id: PNID.into(),
        bytes: photo(),
        mime_type: "image/jpeg".into(),
        filename: None,
    });
    let info = wa.fake.media_info(&media).expect("media");
    wa.write(
        PERSON,
        InboundKind::image_of(&info, Some("¿Este modelo?")),
        None,
    )
    .await;
    wa.settle().await;

    let conversation = the_conversation(&org).await;
    let messages = thread(&org, &conversation).await;
    let types: Vec<&str> = messages
        .iter()
        .map(|m| m["type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["IMAGE", "INTERACTIVE", "LOCATION", "TEXT"]);
    assert!(messages.iter().all(|m| m["direction"] == "INBOUND"));
    assert_eq!(messages[3]["text"], "Hola, ¿tienen catálogo?");
    assert_eq!(
        messages[2]["location"],
        json!({"latitude": 19.4326, "longitude": -99.1332, "name": "Zócalo", "address": "Centro, CDMX"})
    );
    assert_eq!(
        messages[1]["interactive"],
        json!({"kind": "button_reply", "replyId": "catalogue-yes", "title": "Sí, envíenlo"})
    );
    let image = &messages[0];
    assert_eq!(image["text"], "¿Este modelo?");
    assert_eq!(image["media"]["mimeType"], "image/jpeg");
    assert_eq!(image["media"]["caption"], "¿Este modelo?");
    assert_eq!(image["media"]["stored"], false);
    let media_id = image["media"]["id"].as_str().unwrap().to_owned();
    let (status, _, _) = download(&org, &media_id).await;
    assert_eq!(status, 409, "not fetched yet");

    // The fetcher takes it from the platform with the number's token.
    wm_server::services::media::fetch_due(&wa.app.state)
        .await
        .expect("fetch");
    let (status, ct, bytes) = download(&org, &media_id).await;
    assert_eq!((status, ct.as_str()), (200, "image/jpeg"));
    assert_eq!(bytes, photo());
    let messages = thread(&org, &conversation).await;
    assert_eq!(messages[0]["media"]["stored"], true);
    assert_eq!(messages[0]["media"]["size"], photo().len());
    assert_eq!(wa.fake.media_requests().downloads, 1);

    // Another organisation's key does not reach it.
    let stranger = wa.app.org().await;
    let (status, _, _) = download(&stranger, &media_id).await;
    assert_eq!(status, 404);
    // A redelivered webhook keeps no second message.
    let c = org
        .get(&format!("/conversations/{conversation}"))
        .await
        .ok(200);
    assert!(c["windowExpiresAt"].is_string());
}

#[tokio::test]
async fn a_photo_is_fetched_again_after_failures_and_given_up_when_the_platform_lost_it() {
    let wa = Wa::start(StatusOptions::default()).await;
    let org = wa.app.org().await;
    number(&org).await;
    let spec = |bytes: Vec<u8>| MediaSpec {
        phone_number_id: PNID.into(),
        bytes,
        mime_type: "image/png".into(),
        filename: None,
    };
    let kept = wa.fake.add_media(spec(vec![1, 2, 3]));
    let lost = wa.fake.add_media(spec(vec![4, 5, 6]));
    for id in [&kept, &lost] {
        let info = wa.fake.media_info(id).unwrap();
        wa.write(PERSON, InboundKind::image_of(&info, None), None)
            .await;
    }
    wa.settle().await;
    let conversation = the_conversation(&org).await;
    let ids: Vec<String> = thread(&org, &conversation)
        .await
        .iter()
        .map(|m| m["media"]["id"].as_str().unwrap().to_owned())
        .collect();
    let (kept_id, lost_id) = (&ids[1], &ids[0]);

    // Two downloads fail (the platform's 500s), the platform forgets the other file.
    wa.fake.fail_media_downloads(2);
    wa.fake.expire_media(&lost);
    let fetch = || wm_server::services::media::fetch_due(&wa.app.state);
    fetch().await.expect("fetch");
    assert_eq!(download(&org, kept_id).await.0, 409);
    assert_eq!(download(&org, lost_id).await.0, 409);
    // Not tried again before its backoff.
    let before = wa.fake.media_requests().downloads;
    fetch().await.expect("fetch");
    assert_eq!(wa.fake.media_requests().downloads, before);
    for _ in 0..4 {
        wa.app.clock.advance(chrono::Duration::minutes(10));
        fetch().await.expect("fetch");
    }
    let (status, ct, bytes) = download(&org, kept_id).await;
    assert_eq!(
        (status, ct.as_str(), bytes),
        (200, "image/png", vec![1, 2, 3])
    );
    let lost = download(&org, lost_id).await;
    assert_eq!(lost.0, 409);
    let body: Value = serde_json::from_slice(&lost.2).unwrap();
    assert_eq!(
        body["message"],
        "The media could not be fetched from the platform."
    );
}

#[tokio::test]
async fn a_campaign_message_joins_the_thread_and_follows_its_statuses() {
    let wa = Wa::start(StatusOptions {
        read: true,
        ..StatusOptions::default()
    })
    .await;
    wa.template("promo", "Hola {{1}}, tenemos ofertas");
    let org = wa.app.org().await;
    org.post(
        "/webhooks",
        json!({"url": "https://hooks.example.com/wm", "events": ["message.sent", "message.received", "campaign.replied"]}),
    )
    .await
    .ok(201);
    let number_id = number(&org).await;
    let tpl = synced_template(&org, "promo").await;
    let person = people(&org, 1).await.remove(0);
    crate::kit::top_up(&org, 10.0).await;
    let id = campaign(&org, &number_id, &tpl, std::slice::from_ref(&person.0)).await;
    org.post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .ok(200);
    let c = drive(&wa, &org, &id, 5).await;
    assert_eq!(c["stats"]["read"], 1, "{c}");
    // No conversation yet: the person has not written.
    let list = org.get("/conversations").await.ok(200);
    assert_eq!(list["data"], json!([]));

    let from = person.1.trim_start_matches('+');
    let wamid = wa.fake.accepted()[0].wamid.clone();
    wa.write(
        from,
        InboundKind::Text {
            body: "Me interesa".into(),
        },
        Some(&wamid),
    )
    .await;
    wa.settle().await;
    let conversation = the_conversation(&org).await;
    let messages = thread(&org, &conversation).await;
    assert_eq!(messages.len(), 2, "{messages:?}");
    let (reply, sent) = (&messages[0], &messages[1]);
    assert_eq!(reply["text"], "Me interesa");
    assert_eq!(reply["replyToMessageId"], sent["id"]);
    assert_eq!(sent["direction"], "OUTBOUND");
    assert_eq!(sent["type"], "TEMPLATE");
    assert_eq!(sent["text"], "Hola Ana, tenemos ofertas");
    assert_eq!(sent["template"]["name"], "promo");
    assert_eq!(sent["template"]["templateId"], tpl.as_str());
    assert_eq!(sent["template"]["variables"], json!(["Ana"]));
    assert_eq!(sent["sentBy"], json!({"kind": "CAMPAIGN", "id": id}));
    assert_eq!(sent["status"], "READ");
    assert_eq!(sent["conversationId"], conversation.as_str());
    assert!(sent["cost"].as_f64().unwrap() > 0.0);

    // Each status was announced once, in order; the reply credited the campaign.
    let events = org.events().await;
    let statuses: Vec<&str> = events
        .iter()
        .filter(|(k, _)| k == "message.sent")
        .map(|(_, d)| d["message"]["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["SENT", "DELIVERED", "READ"]);
    let replied = events
        .iter()
        .find(|(k, _)| k == "campaign.replied")
        .expect("campaign.replied");
    assert_eq!(replied.1["campaignId"], id.as_str());
    assert_eq!(replied.1["contactId"], person.0.as_str());
    assert_eq!(replied.1["messageId"], reply["id"]);
    let received = events
        .iter()
        .find(|(k, _)| k == "message.received")
        .expect("message.received");
    assert_eq!(received.1["message"]["id"], reply["id"]);
}
