//! What is retried, how long the client waits, and what comes back when it gives up.

use std::time::{Duration, Instant};

use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};
use wm_client::types::contacts::CreateContact;
use wm_client::{Client, Error, ErrorCode, RetryPolicy};

use crate::support::{Harness, api, business, contact, id, js, validation};

fn rate_limited(retry_after: &str) -> ResponseTemplate {
    ResponseTemplate::new(429)
        .insert_header("Retry-After", retry_after)
        .set_body_json(business(
            429,
            Some("API_KEY_RATE_LIMITED"),
            "Too many requests",
        ))
}

#[tokio::test]
async fn a_429_waits_retry_after_then_succeeds() {
    let h = Harness::new().await;
    Mock::given(method("GET"))
        .and(path(api(&format!("/contacts/{}", id(1)))))
        .respond_with(rate_limited("1"))
        .up_to_n_times(1)
        .expect(1)
        .mount(&h.server)
        .await;
    Mock::given(method("GET"))
        .and(path(api(&format!("/contacts/{}", id(1)))))
        .respond_with(ResponseTemplate::new(200).set_body_json(js(&contact(1))))
        .expect(1)
        .mount(&h.server)
        .await;

    let got = h.client.contacts().get(id(1)).await.expect("retried");
    assert_eq!(got, contact(1));
    assert_eq!(h.sleeps(), vec![Duration::from_secs(1)]);
}

#[tokio::test]
async fn the_default_sleeper_really_waits_for_retry_after() {
    let h = Harness::new().await;
    Mock::given(method("GET"))
        .respond_with(rate_limited("1"))
        .up_to_n_times(1)
        .mount(&h.server)
        .await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_body_json(js(&contact(1))))
        .mount(&h.server)
        .await;
    // Same server, the real tokio sleep: only a lower bound is asserted (a sleep never ends
    // early), so a slow machine cannot make this fail.
    let client = Client::new(format!("{}/api/v1", h.server.uri()), "k").expect("client");
    let started = Instant::now();
    client.contacts().get(id(1)).await.expect("retried");
    assert!(started.elapsed() >= Duration::from_millis(950));
}

#[tokio::test]
async fn a_429_on_a_write_is_retried_with_the_same_body() {
    let h = Harness::new().await;
    Mock::given(method("POST"))
        .and(path(api("/contacts")))
        .respond_with(rate_limited("0"))
        .up_to_n_times(1)
        .mount(&h.server)
        .await;
    Mock::given(method("POST"))
        .and(path(api("/contacts")))
        .respond_with(ResponseTemplate::new(201).set_body_json(js(&contact(1))))
        .mount(&h.server)
        .await;

    let body = CreateContact {
        full_name: Some("Ana".into()),
        ..Default::default()
    };
    h.client.contacts().create(&body).await.expect("created");
    let reqs = h.requests().await;
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0].body, reqs[1].body);
    assert_eq!(h.sleeps(), vec![Duration::ZERO]);
}

#[tokio::test]
async fn a_503_is_retried_up_to_max_retries_with_capped_jittered_backoff() {
    let h = Harness::new().await;
    Mock::given(method("GET"))
        .and(path(api("/campaigns")))
        .respond_with(ResponseTemplate::new(503).set_body_string("upstream down"))
        .expect(4)
        .mount(&h.server)
        .await;

    let err = h.client.campaigns().list().send().await.expect_err("503");
    assert!(matches!(err, Error::Api { status: 503, .. }), "{err:?}");
    assert!(err.is_retryable());
    let sleeps = h.sleeps();
    assert_eq!(sleeps.len(), 3);
    let policy = RetryPolicy::default();
    for (n, wait) in sleeps.iter().enumerate() {
        let n = u32::try_from(n).expect("small");
        assert!(*wait <= policy.ceiling(n), "retry {n} waited {wait:?}");
    }
}

#[tokio::test]
async fn a_503_with_retry_after_waits_that_long() {
    let h = Harness::with(|b| b.max_retries(1)).await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(503).insert_header("Retry-After", "3"))
        .expect(2)
        .mount(&h.server)
        .await;
    let err = h.client.lookups().wallet().await.expect_err("503");
    assert_eq!(err.retry_after(), Some(Duration::from_secs(3)));
    assert_eq!(h.sleeps(), vec![Duration::from_secs(3)]);
}

#[tokio::test]
async fn a_retry_after_beyond_the_limit_is_returned_at_once() {
    let h = Harness::new().await;
    Mock::given(method("GET"))
        .respond_with(rate_limited("120"))
        .expect(1)
        .mount(&h.server)
        .await;
    let err = h.client.lookups().users().await.expect_err("429");
    assert!(matches!(err, Error::Api { status: 429, .. }));
    assert_eq!(err.code(), Some(ErrorCode::ApiKeyRateLimited));
    assert_eq!(err.retry_after(), Some(Duration::from_secs(120)));
    assert!(h.sleeps().is_empty());
}

/// The `Idempotency-Key` of each request the server got.
async fn keys(h: &Harness) -> Vec<Option<String>> {
    h.server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|r| {
            r.headers
                .get("idempotency-key")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        })
        .collect()
}

#[tokio::test]
async fn a_post_is_retried_on_5xx_with_its_one_idempotency_key_and_a_patch_is_not() {
    let h = Harness::new().await;
    // Two POSTs of four attempts each.
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(503))
        .expect(8)
        .mount(&h.server)
        .await;
    let err = h.client.campaigns().send_now(id(5)).await.expect_err("503");
    assert!(matches!(err, Error::Api { status: 503, .. }));
    assert_eq!(h.sleeps().len(), 3);
    let sent = keys(&h).await;
    assert_eq!(sent.len(), 4);
    assert!(sent[0].is_some(), "a POST carries a key");
    assert!(
        sent.iter().all(|k| *k == sent[0]),
        "one key for every attempt: {sent:?}"
    );
    // The next POST has a key of its own.
    let _ = h.client.campaigns().send_now(id(5)).await;
    let after = keys(&h).await;
    assert_ne!(after.last(), sent.last());

    let h = Harness::new().await;
    Mock::given(method("PATCH"))
        .respond_with(ResponseTemplate::new(503))
        .expect(1)
        .mount(&h.server)
        .await;
    let patch = wm_client::types::contacts::UpdateContact::default();
    let err = h
        .client
        .contacts()
        .update(id(1), &patch)
        .await
        .expect_err("503");
    assert!(matches!(err, Error::Api { status: 503, .. }));
    assert!(h.sleeps().is_empty());
    assert_eq!(keys(&h).await, [None], "only a POST carries a key");
}

#[tokio::test]
async fn a_post_whose_first_attempt_still_runs_is_waited_for() {
    let h = Harness::new().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(409).set_body_json(business(
            409,
            Some("IDEMPOTENCY_KEY_IN_USE"),
            "A request with this Idempotency-Key is still running; try again shortly.",
        )))
        .up_to_n_times(1)
        .mount(&h.server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(201).set_body_json(js(&contact(1))))
        .mount(&h.server)
        .await;
    let created = h.client.contacts().create(&CreateContact::default()).await;
    assert!(created.is_ok(), "{created:?}");
    assert_eq!(h.sleeps().len(), 1);
}

#[tokio::test]
async fn a_400_validation_error_is_typed_and_never_retried() {
    let h = Harness::new().await;
    Mock::given(method("GET"))
        .and(path(api("/contacts")))
        .respond_with(
            ResponseTemplate::new(400)
                .set_body_json(validation(&["pageSize must not be greater than 100"])),
        )
        .expect(1)
        .mount(&h.server)
        .await;
    let err = h
        .client
        .contacts()
        .list()
        .page_size(500)
        .send()
        .await
        .expect_err("400");
    assert!(
        matches!(err, Error::Validation { ref messages } if messages == &["pageSize must not be greater than 100"]),
        "{err:?}"
    );
    assert!(!err.is_retryable());
    assert_eq!(err.status(), Some(400));
    assert!(h.sleeps().is_empty());
}

#[tokio::test]
async fn a_404_is_typed_and_never_retried() {
    let h = Harness::new().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(404).set_body_json(business(
            404,
            None,
            "Contact not found",
        )))
        .expect(1)
        .mount(&h.server)
        .await;
    let err = h.client.get_contact(id(9)).await.expect_err("404");
    assert!(
        matches!(err, Error::Api { status: 404, code: None, ref message, .. } if message == "Contact not found"),
        "{err:?}"
    );
    assert!(h.sleeps().is_empty());
}

#[tokio::test]
async fn business_codes_and_extra_fields_are_kept() {
    let h = Harness::new().await;
    let mut body = business(409, Some("CONTACT_PHONE_EXISTS"), "Phone in use");
    body["contactId"] = json!(id(3));
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(409).set_body_json(body))
        .expect(1)
        .mount(&h.server)
        .await;
    let err = h
        .client
        .create_contact(&CreateContact::default())
        .await
        .expect_err("409");
    assert_eq!(err.code(), Some(ErrorCode::ContactPhoneExists));
    let Error::Api { body, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(body["contactId"], json!(id(3)));
}

#[tokio::test]
async fn unknown_codes_are_kept_as_other() {
    let h = Harness::new().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(403).set_body_json(business(
            403,
            Some("BRAND_NEW"),
            "nope",
        )))
        .expect(1)
        .mount(&h.server)
        .await;
    let err = h.client.webhooks().list().await.expect_err("403");
    assert_eq!(err.code(), Some(ErrorCode::Unknown));
    assert!(
        matches!(err, wm_client::Error::Api { ref body, .. } if body["code"] == "BRAND_NEW"),
        "{err:?}"
    );
}

#[tokio::test]
async fn timeouts_are_retried_then_returned_as_transport_errors() {
    let h = Harness::with(|b| b.timeout(Duration::from_millis(200)).max_retries(2)).await;
    Mock::given(method("GET"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(js(&contact(1)))
                .set_delay(Duration::from_secs(3)),
        )
        .expect(3)
        .mount(&h.server)
        .await;
    let err = h.client.contacts().get(id(1)).await.expect_err("timeout");
    assert!(matches!(err, Error::Transport(_)), "{err:?}");
    assert!(err.is_timeout());
    assert!(err.is_retryable());
    assert_eq!(h.sleeps().len(), 2);
}

#[tokio::test]
async fn timeouts_on_posts_are_retried_with_their_key_and_on_patches_are_not() {
    let h = Harness::with(|b| b.timeout(Duration::from_millis(200))).await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(201).set_delay(Duration::from_secs(3)))
        .expect(4)
        .mount(&h.server)
        .await;
    let err = h
        .client
        .contacts()
        .create(&CreateContact::default())
        .await
        .expect_err("timeout");
    assert!(err.is_timeout(), "{err:?}");
    assert_eq!(h.sleeps().len(), 3);
    let sent = keys(&h).await;
    assert!(sent[0].is_some() && sent.iter().all(|k| *k == sent[0]));

    let h = Harness::with(|b| b.timeout(Duration::from_millis(200))).await;
    Mock::given(method("PATCH"))
        .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_secs(3)))
        .expect(1)
        .mount(&h.server)
        .await;
    let patch = wm_client::types::contacts::UpdateContact::default();
    let err = h
        .client
        .contacts()
        .update(id(1), &patch)
        .await
        .expect_err("timeout");
    assert!(err.is_timeout(), "{err:?}");
    assert!(h.sleeps().is_empty());
}

#[tokio::test]
async fn connection_errors_are_retried_even_for_writes() {
    // A port that was just free: connecting is refused, so nothing was sent.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let sleeps = std::sync::Arc::new(std::sync::Mutex::new(0u32));
    let count = sleeps.clone();
    let client = Client::builder()
        .base_url(format!("http://127.0.0.1:{port}/api/v1"))
        .api_key("k")
        .max_retries(2)
        .sleep_with(move |_| {
            *count.lock().expect("lock") += 1;
            async {}
        })
        .build()
        .expect("client");
    let err = client
        .contacts()
        .create(&CreateContact::default())
        .await
        .expect_err("refused");
    assert!(err.is_connect(), "{err:?}");
    assert_eq!(*sleeps.lock().expect("lock"), 2);
}

#[tokio::test]
async fn max_retries_zero_disables_retries() {
    let h = Harness::with(|b| b.max_retries(0)).await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(500))
        .expect(1)
        .mount(&h.server)
        .await;
    let err = h.client.lookups().stages().await.expect_err("500");
    assert_eq!(err.status(), Some(500));
    assert_eq!(h.client.retry_policy().max_retries, 0);
}
