//! Media upload (multipart, validation) and the inbound media, location and reaction
//! webhooks, through real HTTP.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use common::media::*;
use common::*;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use wm_fake_graph::{
    FakeGraph, InboundKind, InboundMessage, MediaOrigin, MediaSpec, StatusOptions,
};

/// One multipart part: (name, filename, content type, bytes).
type Part<'a> = (&'a str, Option<&'a str>, Option<&'a str>, &'a [u8]);

/// A multipart/form-data body (reqwest is built without its `multipart` feature).
fn multipart(parts: &[Part<'_>]) -> (String, Vec<u8>) {
    let boundary = "----wmfakegraphboundary7MA4YWxkTrZu0gW";
    let mut body = Vec::new();
    for (name, filename, ct, bytes) in parts {
        body.extend_from_slice(format!("--{boundary}\r\n").as_bytes());
        let mut disp = format!("Content-Disposition: form-data; name=\"{name}\"");
        if let Some(f) = filename {
            disp.push_str(&format!("; filename=\"{f}\""));
        }
        body.extend_from_slice(format!("{disp}\r\n").as_bytes());
        if let Some(ct) = ct {
            body.extend_from_slice(format!("Content-Type: {ct}\r\n").as_bytes());
        }
        body.extend_from_slice(b"\r\n");
        body.extend_from_slice(bytes);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

async fn upload(fake: &FakeGraph, token: Option<&str>, parts: &[Part<'_>]) -> (u16, Value) {
    let (ct, body) = multipart(parts);
    let mut req = client()
        .post(format!("{}/{VERSION}/{PNID}/media", fake.url()))
        .header("content-type", ct)
        .body(body);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap())
}

fn file_parts<'a>(mime: &'a str, bytes: &'a [u8]) -> Vec<Part<'a>> {
    vec![
        ("messaging_product", None, None, b"whatsapp".as_slice()),
        ("type", None, None, mime.as_bytes()),
        ("file", Some("upload.bin"), Some(mime), bytes),
    ]
}

#[tokio::test]
async fn uploaded_media_can_be_retrieved_and_downloaded() {
    let fake = fake().await;
    let pdf = b"%PDF-1.4 fake invoice".as_slice();
    let parts = vec![
        ("messaging_product", None, None, b"whatsapp".as_slice()),
        ("type", None, None, b"application/pdf".as_slice()),
        ("file", Some("invoice.pdf"), Some("application/pdf"), pdf),
    ];
    let (s, b) = upload(&fake, Some(TOKEN), &parts).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b.as_object().unwrap().len(), 1, "only the id: {b}");
    let id = b["id"].as_str().unwrap().to_owned();
    assert!(id.chars().all(|c| c.is_ascii_digit()));
    let info = fake.media_info(&id).unwrap();
    assert_eq!(info.origin, MediaOrigin::Uploaded);
    assert_eq!(info.filename.as_deref(), Some("invoice.pdf"));
    assert_eq!(fake.media_bytes(&id).unwrap(), pdf);
    let url = retrieve_url(&fake, &id).await;
    let (s, ct, bytes) = download(&url, Some(TOKEN)).await;
    assert_eq!(
        (s, ct.as_deref(), bytes.as_slice()),
        (200, Some("application/pdf"), pdf)
    );
    assert_eq!(fake.media_requests().uploads, 1);
    fake.shutdown().await;
}

#[tokio::test]
async fn uploads_are_validated_like_the_platform() {
    let fake = two_numbers().await;
    // Missing messaging_product: Graph's wording in `message`.
    let parts = vec![
        ("type", None, None, b"image/jpeg".as_slice()),
        ("file", Some("a.jpg"), Some("image/jpeg"), JPEG),
    ];
    let (s, b) = upload(&fake, Some(TOKEN), &parts).await;
    let err = assert_error(s, &b, 400, 100);
    assert_eq!(
        err["message"],
        "(#100) The parameter messaging_product is required."
    );
    // Missing file, missing type.
    let (s, b) = upload(&fake, Some(TOKEN), &file_parts("image/jpeg", JPEG)[..2]).await;
    assert_eq!(
        assert_error(s, &b, 400, 100)["message"],
        "(#100) The parameter file is required."
    );
    let no_type = [
        file_parts("image/jpeg", JPEG)[0],
        file_parts("image/jpeg", JPEG)[2],
    ];
    let (s, b) = upload(&fake, Some(TOKEN), &no_type).await;
    assert_eq!(
        assert_error(s, &b, 400, 100)["message"],
        "(#100) The parameter type is required."
    );
    // Unsupported type.
    let (s, b) = upload(&fake, Some(TOKEN), &file_parts("image/gif", b"GIF89a")).await;
    let err = assert_error(s, &b, 400, 131053);
    assert_eq!(err["message"], "(#131053) Media upload error");
    assert!(
        err["error_data"]["details"]
            .as_str()
            .unwrap()
            .contains("Unsupported file type image/gif")
    );
    // Size limits: image 5 MB, static sticker 100 KB, animated sticker 500 KB.
    let big = vec![0u8; 5 * 1024 * 1024 + 1];
    let (s, b) = upload(&fake, Some(TOKEN), &file_parts("image/png", &big)).await;
    assert_error(s, &b, 400, 131053);
    let ok = vec![0u8; 5 * 1024 * 1024];
    assert_eq!(
        upload(&fake, Some(TOKEN), &file_parts("image/png", &ok))
            .await
            .0,
        200
    );
    let mut sticker = b"RIFF\0\0\0\0WEBPVP8X\0\0\0\0\0".to_vec();
    sticker.resize(200 * 1024, 0);
    let (s, b) = upload(&fake, Some(TOKEN), &file_parts("image/webp", &sticker)).await;
    assert_error(s, &b, 400, 131053);
    sticker[20] = 0x02; // VP8X animation flag
    assert_eq!(
        upload(&fake, Some(TOKEN), &file_parts("image/webp", &sticker))
            .await
            .0,
        200
    );
    // Voice notes' `audio/ogg; codecs=opus` is audio/ogg.
    let (s, b) = upload(
        &fake,
        Some(TOKEN),
        &file_parts("audio/ogg; codecs=opus", b"OggS"),
    )
    .await;
    assert_eq!(s, 200, "{b}");
    // Auth: no token 401/190; another number's token 100/33.
    let (s, b) = upload(&fake, None, &file_parts("image/jpeg", JPEG)).await;
    assert_error(s, &b, 401, 190);
    let (s, b) = upload(&fake, Some(OTHER_TOKEN), &file_parts("image/jpeg", JPEG)).await;
    assert_eq!(assert_error(s, &b, 400, 100)["error_subcode"], 33);
    // A body that is not multipart reads as an empty form.
    let resp = client()
        .post(format!("{}/{VERSION}/{PNID}/media", fake.url()))
        .bearer_auth(TOKEN)
        .json(&json!({ "messaging_product": "whatsapp" }))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 400);
    assert_eq!(fake.media_requests().uploads, 12);
    fake.shutdown().await;
}

#[tokio::test]
async fn inbound_media_location_and_reaction_webhooks_have_metas_shape() {
    let (fake, rx) = fake_with_receiver(StatusOptions {
        enabled: false,
        ..StatusOptions::default()
    })
    .await;
    let image = fake.media_info(&fake.add_media(jpeg_spec())).unwrap();
    let doc = fake
        .media_info(&fake.add_media(MediaSpec {
            phone_number_id: PNID.into(),
            bytes: b"%PDF-1.4".to_vec(),
            mime_type: "application/pdf".into(),
            filename: Some("invoice.pdf".into()),
        }))
        .unwrap();
    let voice = fake
        .media_info(&fake.add_media(MediaSpec {
            phone_number_id: PNID.into(),
            bytes: b"OggS voice".to_vec(),
            mime_type: "audio/ogg; codecs=opus".into(),
            filename: None,
        }))
        .unwrap();
    let kinds = vec![
        InboundKind::image_of(&image, Some("the receipt")),
        InboundKind::Location {
            latitude: 37.483_307,
            longitude: -122.148_981,
            name: Some("Philz Coffee".into()),
            address: Some("101 Forest Ave, Palo Alto, CA 94301".into()),
        },
        InboundKind::document_of(&doc, None),
        InboundKind::audio_of(&voice, true),
        InboundKind::video_of(&image, None),
        InboundKind::sticker_of(&image, false),
        InboundKind::Reaction {
            message_id: "wamid.HBgLMTY1MDM4Nzk0MzkVAgARGBI=".into(),
            emoji: Some("👍".into()),
        },
        InboundKind::Reaction {
            message_id: "wamid.HBgLMTY1MDM4Nzk0MzkVAgARGBI=".into(),
            emoji: None,
        },
        InboundKind::Location {
            latitude: 1.5,
            longitude: 2.0,
            name: None,
            address: None,
        },
    ];
    let n = kinds.len();
    for kind in kinds {
        let posted = fake
            .post_inbound(InboundMessage {
                phone_number_id: PNID.into(),
                from: "16505551234".into(),
                profile_name: Some("Sheena Nelson".into()),
                kind,
                context: None,
            })
            .await
            .unwrap();
        assert!(posted.acked);
    }
    let got = rx.wait_for(n, Duration::from_secs(5)).await;
    assert_eq!(got.len(), n);
    assert!(got.iter().all(|r| r.signature_valid));
    let msgs: Vec<Value> = got
        .iter()
        .map(|r| {
            let v = r.json();
            assert_eq!(v["object"], "whatsapp_business_account");
            assert_eq!(v["entry"][0]["changes"][0]["field"], "messages");
            let value = &v["entry"][0]["changes"][0]["value"];
            assert_eq!(value["metadata"]["phone_number_id"], PNID);
            assert_eq!(value["contacts"][0]["wa_id"], "16505551234");
            value["messages"][0].clone()
        })
        .collect();
    for m in &msgs {
        assert_eq!(m["from"], "16505551234");
        assert!(m["id"].as_str().unwrap().starts_with("wamid."));
        assert!(m["timestamp"].as_str().unwrap().parse::<i64>().is_ok());
        assert!(m.get("context").is_none());
    }
    let sha = STANDARD.encode(Sha256::digest(JPEG));
    assert_eq!(msgs[0]["type"], "image");
    assert_eq!(
        msgs[0]["image"],
        json!({ "caption": "the receipt", "mime_type": "image/jpeg", "sha256": sha, "id": image.id })
    );
    assert_eq!(msgs[1]["type"], "location");
    assert_eq!(
        msgs[1]["location"],
        json!({
            "latitude": 37.483_307,
            "longitude": -122.148_981,
            "name": "Philz Coffee",
            "address": "101 Forest Ave, Palo Alto, CA 94301",
        })
    );
    assert_eq!(
        (msgs[2]["type"].as_str(), &msgs[2]["document"]),
        (
            Some("document"),
            &json!({ "filename": "invoice.pdf", "mime_type": "application/pdf", "sha256": doc.sha256_b64, "id": doc.id })
        )
    );
    assert_eq!(
        msgs[3]["audio"],
        json!({ "mime_type": "audio/ogg; codecs=opus", "sha256": voice.sha256_b64, "id": voice.id, "voice": true })
    );
    assert_eq!(msgs[4]["type"], "video");
    assert!(msgs[4]["video"].get("caption").is_none());
    assert_eq!(msgs[5]["sticker"]["animated"], false);
    assert_eq!(
        (msgs[6]["type"].as_str(), &msgs[6]["reaction"]),
        (
            Some("reaction"),
            &json!({ "message_id": "wamid.HBgLMTY1MDM4Nzk0MzkVAgARGBI=", "emoji": "👍" })
        )
    );
    assert_eq!(
        msgs[7]["reaction"],
        json!({ "message_id": "wamid.HBgLMTY1MDM4Nzk0MzkVAgARGBI=" })
    );
    assert_eq!(
        msgs[8]["location"],
        json!({ "latitude": 1.5, "longitude": 2.0 })
    );
    // The media an image webhook points at can be fetched with the number's token.
    let url = retrieve_url(&fake, msgs[0]["image"]["id"].as_str().unwrap()).await;
    assert_eq!(download(&url, Some(TOKEN)).await.2, JPEG);
    fake.shutdown().await;
}

#[tokio::test]
async fn inbound_kinds_round_trip_through_the_control_api() {
    let (fake, rx) = fake_with_receiver(StatusOptions::default()).await;
    let body = json!({
        "phone_number_id": PNID,
        "from": "16505551234",
        "type": "location",
        "latitude": 10.25,
        "longitude": -3.5,
        "name": "HQ",
    });
    let resp = client()
        .post(format!("{}/_fake/inbound", fake.url()))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let got = rx.wait_for(1, Duration::from_secs(5)).await;
    let m = &got[0].json()["entry"][0]["changes"][0]["value"]["messages"][0];
    assert_eq!(
        m["location"],
        json!({ "latitude": 10.25, "longitude": -3.5, "name": "HQ" })
    );
    let parsed: InboundMessage = serde_json::from_value(json!({
        "phone_number_id": PNID,
        "from": "1",
        "type": "audio",
        "media_id": "1",
        "mime_type": "audio/ogg",
        "sha256": "x",
    }))
    .unwrap();
    assert!(matches!(
        parsed.kind,
        InboundKind::Audio { voice: false, .. }
    ));
    fake.shutdown().await;
}
