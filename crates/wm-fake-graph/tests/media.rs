//! Media: retrieve URL, download, lifetimes, fault injection, delete, routing and the
//! control API, all through real HTTP (uploads and webhooks: `media_upload.rs`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use common::media::*;
use common::*;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use wm_fake_graph::MediaOrigin;

#[tokio::test]
async fn retrieve_then_download_round_trips_the_bytes() {
    let fake = fake().await;
    let id = fake.add_media(jpeg_spec());
    assert!(
        id.len() >= 16 && id.chars().all(|c| c.is_ascii_digit()),
        "{id}"
    );
    let info = fake.media_info(&id).unwrap();
    assert_eq!(info.origin, MediaOrigin::Inbound);
    let digest = Sha256::digest(JPEG);
    assert_eq!(info.sha256_hex, hex::encode(digest));
    assert_eq!(info.sha256_b64, STANDARD.encode(digest));
    let (s, b) = get_json(&media_url(&fake, &id), Some(TOKEN)).await;
    assert_eq!(s, 200, "{b}");
    let url = b["url"].as_str().unwrap();
    assert!(
        url.starts_with(&format!(
            "{}/whatsapp_business/attachments/?mid={id}&ext=",
            fake.url()
        )),
        "{url}"
    );
    assert!(url.contains("&hash="));
    let mut keys: Vec<_> = b.as_object().unwrap().keys().cloned().collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "file_size",
            "id",
            "messaging_product",
            "mime_type",
            "sha256",
            "url"
        ]
    );
    assert_eq!(b["messaging_product"], "whatsapp");
    assert_eq!(b["mime_type"], "image/jpeg");
    assert_eq!(b["sha256"], hex::encode(digest));
    assert_eq!(b["file_size"], json!(JPEG.len()));
    assert_eq!(b["id"], id.as_str());
    let (s, ct, bytes) = download(url, Some(TOKEN)).await;
    assert_eq!(s, 200);
    assert_eq!(ct.as_deref(), Some("image/jpeg"));
    assert_eq!(bytes, JPEG);
    // The ownership filter of the reference.
    let filtered = format!("{}?phone_number_id={PNID}", media_url(&fake, &id));
    assert_eq!(get_json(&filtered, Some(TOKEN)).await.0, 200);
    let stats = fake.media_requests();
    assert_eq!((stats.retrievals, stats.downloads), (2, 1));
    fake.shutdown().await;
}

#[tokio::test]
async fn tokens_are_checked_like_graph() {
    let fake = two_numbers().await;
    let id = fake.add_media(jpeg_spec());
    // Another number's (valid) token cannot see the media: 100/33.
    let (s, b) = get_json(&media_url(&fake, &id), Some(OTHER_TOKEN)).await;
    assert_unknown_object(s, &b, &id);
    // No token or an unknown one: 401, 190.
    for token in [None, Some("nope")] {
        let (s, b) = get_json(&media_url(&fake, &id), token).await;
        let err = assert_error(s, &b, 401, 190);
        assert_eq!(err["type"], "OAuthException");
    }
    // Unknown id; a phone_number_id filter naming another number.
    let (s, b) = get_json(&media_url(&fake, "1234567890123456"), Some(TOKEN)).await;
    assert_unknown_object(s, &b, "1234567890123456");
    let filtered = format!("{}?phone_number_id={OTHER_PNID}", media_url(&fake, &id));
    let (s, b) = get_json(&filtered, Some(TOKEN)).await;
    assert_unknown_object(s, &b, &id);
    // The download URL needs the owner's token.
    let url = retrieve_url(&fake, &id).await;
    assert_eq!(download(&url, None).await.0, 401);
    assert_eq!(download(&url, Some(OTHER_TOKEN)).await.0, 401);
    assert_eq!(download(&url, Some(TOKEN)).await.0, 200);
    // A tampered URL is not found.
    let tampered = url.replace("hash=", "hash=x");
    assert_eq!(download(&tampered, Some(TOKEN)).await.0, 404);
    fake.shutdown().await;
}

#[tokio::test]
async fn expired_media_is_gone_for_retrieval_and_download() {
    let fake = fake().await;
    let id = fake.add_media(jpeg_spec());
    let url = retrieve_url(&fake, &id).await;
    assert!(fake.expire_media(&id));
    assert!(!fake.expire_media("42"));
    assert!(fake.media_info(&id).unwrap().expired);
    let (s, b) = get_json(&media_url(&fake, &id), Some(TOKEN)).await;
    assert_unknown_object(s, &b, &id);
    assert_eq!(download(&url, Some(TOKEN)).await.0, 404);
    fake.shutdown().await;
}

#[tokio::test]
async fn download_urls_expire_after_their_lifetime() {
    let fake = fake().await;
    fake.set_media_url_ttl(Duration::from_millis(300));
    let id = fake.add_media(jpeg_spec());
    let url = retrieve_url(&fake, &id).await;
    tokio::time::sleep(Duration::from_millis(450)).await;
    assert_eq!(download(&url, Some(TOKEN)).await.0, 404);
    // A fresh retrieval gives a working URL.
    let url = retrieve_url(&fake, &id).await;
    assert_eq!(download(&url, Some(TOKEN)).await.2, JPEG);
    fake.shutdown().await;
}

#[tokio::test]
async fn injected_download_failures_then_success_are_counted() {
    let fake = fake().await;
    let id = fake.add_media(jpeg_spec());
    let url = retrieve_url(&fake, &id).await;
    fake.fail_media_downloads(2);
    assert_eq!(download(&url, Some(TOKEN)).await.0, 500);
    assert_eq!(download(&url, Some(TOKEN)).await.0, 500);
    let (s, _, bytes) = download(&url, Some(TOKEN)).await;
    assert_eq!((s, bytes.as_slice()), (200, JPEG));
    let stats = fake.media_requests();
    assert_eq!((stats.retrievals, stats.downloads), (1, 3));
    // A dropped connection is a transport error, not an HTTP answer.
    fake.drop_media_downloads(1);
    assert!(client().get(&url).bearer_auth(TOKEN).send().await.is_err());
    assert_eq!(download(&url, Some(TOKEN)).await.0, 200);
    assert_eq!(fake.media_requests().downloads, 5);
    fake.reset_logs();
    assert_eq!(fake.media_requests().downloads, 0);
    fake.shutdown().await;
}

#[tokio::test]
async fn delete_removes_the_media() {
    let fake = fake().await;
    let id = fake.add_media(jpeg_spec());
    let url = retrieve_url(&fake, &id).await;
    let resp = client()
        .delete(media_url(&fake, &id))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    assert_eq!(
        resp.json::<Value>().await.unwrap(),
        json!({ "success": true })
    );
    assert!(fake.media_info(&id).is_none());
    let (s, b) = get_json(&media_url(&fake, &id), Some(TOKEN)).await;
    assert_unknown_object(s, &b, &id);
    assert_eq!(download(&url, Some(TOKEN)).await.0, 404);
    fake.shutdown().await;
}

#[tokio::test]
async fn media_routes_do_not_shadow_the_other_routes() {
    let fake = fake().await;
    let client = client();
    // Edges under /{version}/{id}/... keep their handlers.
    let (s, _) = send(&client, &fake, &template_body("16505551234", "hello", &[])).await;
    assert_eq!(s, 200);
    let (s, b) = get_json(
        &format!("{}/{VERSION}/{WABA}/message_templates", fake.url()),
        Some(TOKEN),
    )
    .await;
    assert_eq!(s, 200, "{b}");
    assert!(b["data"].is_array());
    // The control API and unversioned two-segment paths.
    let (s, b) = get_json(&format!("{}/_fake/stats", fake.url()), None).await;
    assert_eq!((s, b["accepted"].as_u64()), (200, Some(1)));
    for path in [
        "/_fake/nonsense",
        "/whatsapp_business/attachments",
        "/nope/123",
    ] {
        let (s, b) = get_json(&format!("{}{path}", fake.url()), Some(TOKEN)).await;
        assert_eq!(
            (s, b["error"]["code"].as_i64()),
            (400, Some(2500)),
            "{path}"
        );
    }
    // A plain object GET on a number id is not media: 100/33.
    let (s, b) = get_json(&media_url(&fake, PNID), Some(TOKEN)).await;
    assert_unknown_object(s, &b, PNID);
    fake.shutdown().await;
}

#[tokio::test]
async fn the_control_api_drives_media() {
    let fake = fake().await;
    let client = client();
    let base = fake.url();
    let resp = client
        .post(format!("{base}/_fake/media"))
        .json(&json!({
            "phone_number_id": PNID,
            "bytes": STANDARD.encode(JPEG),
            "mime_type": "image/jpeg",
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let info: Value = resp.json().await.unwrap();
    let id = info["id"].as_str().unwrap().to_owned();
    assert_eq!(info["sha256_b64"], STANDARD.encode(Sha256::digest(JPEG)));
    assert_eq!(info["file_size"], json!(JPEG.len()));
    assert_eq!(fake.media_bytes(&id).unwrap(), JPEG);
    let (s, got) = get_json(&format!("{base}/_fake/media/{id}"), None).await;
    assert_eq!((s, &got), (200, &info));
    let url = retrieve_url(&fake, &id).await;
    let post = |path: &str, body: Value| client.post(format!("{base}{path}")).json(&body).send();
    assert_eq!(
        post("/_fake/media/fail_downloads", json!({ "count": 1 }))
            .await
            .unwrap()
            .status()
            .as_u16(),
        200
    );
    assert_eq!(download(&url, Some(TOKEN)).await.0, 500);
    assert_eq!(download(&url, Some(TOKEN)).await.0, 200);
    let (_, stats) = get_json(&format!("{base}/_fake/media/stats"), None).await;
    assert_eq!(
        stats,
        json!({ "retrievals": 1, "downloads": 2, "uploads": 0 })
    );
    let ttl = client
        .put(format!("{base}/_fake/media/url_ttl"))
        .json(&json!({ "ms": 1 }))
        .send()
        .await
        .unwrap();
    assert_eq!(ttl.status().as_u16(), 200);
    let short = retrieve_url(&fake, &id).await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(download(&short, Some(TOKEN)).await.0, 404);
    let expire = post(&format!("/_fake/media/{id}/expire"), json!({}))
        .await
        .unwrap();
    assert_eq!(expire.status().as_u16(), 200);
    let missing = post("/_fake/media/42/expire", json!({})).await.unwrap();
    assert_eq!(missing.status().as_u16(), 404);
    let (s, b) = get_json(&media_url(&fake, &id), Some(TOKEN)).await;
    assert_unknown_object(s, &b, &id);
    fake.shutdown().await;
}
