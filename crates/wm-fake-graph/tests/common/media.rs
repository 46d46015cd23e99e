//! Media helpers shared by `tests/media.rs` and `tests/media_upload.rs`: a second
//! number, a held JPEG, and GET helpers for retrieval and download.

use serde_json::Value;
use wm_fake_graph::{FakeGraph, MediaSpec, NumberSpec};

use super::*;

pub const OTHER_PNID: &str = "109999999999999";
pub const OTHER_TOKEN: &str = "EAAGothertoken";

pub const JPEG: &[u8] = b"\xff\xd8\xff\xe0fake-jpeg-bytes\xff\xd9";

/// The default fake plus a second number (another WABA, another token).
pub async fn two_numbers() -> FakeGraph {
    let fake = fake().await;
    fake.register_number(NumberSpec {
        phone_number_id: OTHER_PNID.into(),
        waba_id: "109999999999000".into(),
        display_phone_number: "15550001111".into(),
        access_token: OTHER_TOKEN.into(),
    });
    fake
}

pub fn jpeg_spec() -> MediaSpec {
    MediaSpec {
        phone_number_id: PNID.into(),
        bytes: JPEG.to_vec(),
        mime_type: "image/jpeg".into(),
        filename: None,
    }
}

pub fn media_url(fake: &FakeGraph, id: &str) -> String {
    format!("{}/{VERSION}/{id}", fake.url())
}

pub async fn get_json(url: &str, token: Option<&str>) -> (u16, Value) {
    let mut req = client().get(url);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap())
}

/// Downloads `url`; returns (status, content type, bytes).
pub async fn download(url: &str, token: Option<&str>) -> (u16, Option<String>, Vec<u8>) {
    let mut req = client().get(url);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    let ct = resp
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned());
    (status, ct, resp.bytes().await.unwrap().to_vec())
}

/// Retrieves `id` with the default token and returns the download URL.
pub async fn retrieve_url(fake: &FakeGraph, id: &str) -> String {
    let (s, b) = get_json(&media_url(fake, id), Some(TOKEN)).await;
    assert_eq!(s, 200, "{b}");
    b["url"].as_str().unwrap().to_owned()
}

pub fn assert_unknown_object(status: u16, body: &Value, id: &str) {
    let err = assert_error(status, body, 400, 100);
    assert_eq!(err["error_subcode"], 33, "{body}");
    assert_eq!(err["type"], "GraphMethodException");
    let msg = err["message"].as_str().unwrap();
    assert!(
        msg.starts_with(&format!("Unsupported get request. Object with ID '{id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation.")),
        "{msg}"
    );
}
