//! Attachments: uploads (by URL, by file, reusable), what people sent served back, and
//! a send carrying its file.

use super::*;

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
