//! `GET /{version}/{waba_id}/message_templates`: cursor paging over several pages.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use serde_json::Value;
use wm_fake_graph::TemplateStatus;

async fn get(client: &reqwest::Client, url: &str, token: Option<&str>) -> (u16, Value) {
    let mut req = client.get(url);
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    let resp = req.send().await.unwrap();
    (resp.status().as_u16(), resp.json().await.unwrap())
}

#[tokio::test]
async fn pages_follow_next_until_the_end() {
    let fake = fake().await; // 5 templates already
    for i in 0..7 {
        fake.register_template(template(
            &format!("extra_{i}"),
            TemplateStatus::Approved,
            "Body {{1}}",
        ));
    }
    let client = client();
    let mut url = format!(
        "{}/{VERSION}/{WABA}/message_templates?limit=5&fields=name,status,language,category,components",
        fake.url()
    );
    let mut names = Vec::new();
    let mut pages = 0;
    loop {
        let (s, page) = get(&client, &url, Some(TOKEN)).await;
        assert_eq!(s, 200, "{page}");
        pages += 1;
        let data = page["data"].as_array().unwrap();
        assert!(data.len() <= 5);
        for t in data {
            assert!(t["id"].is_string());
            assert_eq!(t["components"][0]["type"], "BODY");
            assert!(t["components"][0]["text"].is_string());
            names.push(t["name"].as_str().unwrap().to_owned());
        }
        assert!(page["paging"]["cursors"]["before"].is_string());
        assert!(page["paging"]["cursors"]["after"].is_string());
        match page["paging"].get("next").and_then(Value::as_str) {
            Some(next) => {
                assert!(
                    next.starts_with(&fake.url()),
                    "next must be absolute: {next}"
                );
                assert!(next.contains("fields=name"), "next keeps the query: {next}");
                url = next.to_owned();
            }
            None => break,
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(names.len(), 12);
    let unique: std::collections::HashSet<_> = names.iter().collect();
    assert_eq!(unique.len(), 12);
    assert_eq!(names[0], "order_update");
    fake.shutdown().await;
}

#[tokio::test]
async fn last_page_has_no_next_and_before_cursor_goes_back() {
    let fake = fake().await;
    let client = client();
    let base = format!("{}/{VERSION}/{WABA}/message_templates", fake.url());
    let (_, first) = get(&client, &format!("{base}?limit=3"), Some(TOKEN)).await;
    assert!(first["paging"].get("previous").is_none());
    let next = first["paging"]["next"].as_str().unwrap().to_owned();
    let (_, second) = get(&client, &next, Some(TOKEN)).await;
    assert_eq!(second["data"].as_array().unwrap().len(), 2);
    assert!(second["paging"].get("next").is_none(), "no further page");
    let prev = second["paging"]["previous"].as_str().unwrap().to_owned();
    let (_, back) = get(&client, &prev, Some(TOKEN)).await;
    assert_eq!(back["data"], first["data"]);
    // Default fields include everything documented.
    let t = &first["data"][0];
    for f in ["id", "name", "language", "status", "category", "components"] {
        assert!(t.get(f).is_some(), "missing {f}: {t}");
    }
    // Filters.
    let (_, paused) = get(&client, &format!("{base}?status=PAUSED"), Some(TOKEN)).await;
    assert_eq!(paused["data"].as_array().unwrap().len(), 1);
    fake.shutdown().await;
}

#[tokio::test]
async fn listing_checks_token_and_object() {
    let fake = fake().await;
    let client = client();
    let url = format!("{}/{VERSION}/{WABA}/message_templates", fake.url());
    let (s, b) = get(&client, &url, None).await;
    assert_error(s, &b, 401, 190);
    let (s, b) = get(&client, &url, Some("nope")).await;
    assert_error(s, &b, 401, 190);
    let (s, b) = get(
        &client,
        &format!("{}/{VERSION}/424242/message_templates", fake.url()),
        Some(TOKEN),
    )
    .await;
    let err = assert_error(s, &b, 400, 100);
    assert_eq!(err["error_subcode"], 33);
    let (s, b) = get(&client, &format!("{url}?fields=bogus"), Some(TOKEN)).await;
    assert_error(s, &b, 400, 100);
    // A WABA-level token without a number.
    fake.register_waba("777", "waba-token");
    fake.register_template(wm_fake_graph::TemplateSpec {
        waba_id: "777".into(),
        ..template("w", TemplateStatus::Approved, "x")
    });
    let (s, b) = get(
        &client,
        &format!("{}/{VERSION}/777/message_templates", fake.url()),
        Some("waba-token"),
    )
    .await;
    assert_eq!(s, 200);
    assert_eq!(b["data"][0]["name"], "w");
    fake.shutdown().await;
}
