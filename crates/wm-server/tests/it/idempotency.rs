//! `Idempotency-Key` through a real server (a TCP listener, reqwest): a client retrying a
//! send or a create gets the first answer again and never a second effect, across
//! concurrent retries, a restart and two replicas.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::kit::{campaign_to, contacts, setup, top_up};
use crate::replicas_harness::serve;
use crate::support::{IdOf, Org, TestApp};

/// A POST with an `Idempotency-Key`: (status, replayed, body).
async fn post(
    http: &reqwest::Client,
    base: &str,
    key: &str,
    path: &str,
    idempotency: &str,
    body: &Value,
) -> (StatusCode, bool, Value) {
    let r = http
        .post(format!("{base}{path}"))
        .bearer_auth(key)
        .header("idempotency-key", idempotency)
        .json(body)
        .send()
        .await
        .expect("request");
    let status = r.status();
    let replayed = r
        .headers()
        .get("idempotent-replayed")
        .is_some_and(|v| v == "true");
    let body = r.json::<Value>().await.unwrap_or(Value::Null);
    (status, replayed, body)
}

async fn charges(org: &Org<'_>) -> usize {
    let w = org.get("/wallet").await.ok(200);
    w["recentEntries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "CHARGE")
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_concurrent_sends_with_one_key_send_and_charge_once() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let s = setup(&org).await;
    let ids = contacts(&org, 5, "t").await;
    let id = campaign_to(&org, &s, &s.plain, &ids).await;
    top_up(&org, 10.0).await;
    let base = app.listen().await;
    let http = reqwest::Client::new();
    let path = format!("/campaigns/{id}/send");
    let empty = json!({});
    let answers = futures::future::join_all(
        (0..20).map(|_| post(&http, &base, &org.key, &path, "send-once-7f3a", &empty)),
    )
    .await;
    let fresh: Vec<&(StatusCode, bool, Value)> = answers
        .iter()
        .filter(|(s, replayed, _)| *s == StatusCode::OK && !replayed)
        .collect();
    assert_eq!(fresh.len(), 1, "{answers:?}");
    let first = &fresh[0].2;
    for (status, replayed, body) in &answers {
        match *status {
            StatusCode::OK => assert_eq!(body, first, "a replay is the first answer"),
            StatusCode::CONFLICT => {
                assert!(!replayed);
                assert_eq!(body["code"], "IDEMPOTENCY_KEY_IN_USE", "{body}");
            }
            other => panic!("unexpected {other}: {body}"),
        }
    }
    assert_eq!(charges(&org).await, 1, "charged once");
    // Once it answered, every retry is its answer again.
    let (status, replayed, body) =
        post(&http, &base, &org.key, &path, "send-once-7f3a", &json!({})).await;
    assert_eq!((status, replayed), (StatusCode::OK, true));
    assert_eq!(&body, first);
    // Without a key, a second send is the business rule's refusal, not a second charge.
    let again = org.post(&path, json!({})).await;
    again.assert_error(400, None);
    assert_eq!(charges(&org).await, 1);
}

#[tokio::test]
async fn a_key_replays_after_a_restart_and_refuses_another_body() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let base = app.listen().await;
    let http = reqwest::Client::new();
    let ana = json!({"fullName": "Ana Retry", "primaryPhone": "+5215500000101"});
    let (status, replayed, created) =
        post(&http, &base, &org.key, "/contacts", "c-101", &ana).await;
    assert_eq!(
        (status, replayed),
        (StatusCode::CREATED, false),
        "{created}"
    );

    // Another process on the same database.
    let restarted = app.restart(None);
    let router = axum::Router::new().nest("/api/v1", wm_server::router(restarted));
    let base = format!("{}/api/v1", serve(router).await);
    let (status, replayed, again) = post(&http, &base, &org.key, "/contacts", "c-101", &ana).await;
    assert_eq!((status, replayed), (StatusCode::CREATED, true));
    assert_eq!(again, created);
    let list = org.get("/contacts?q=Retry").await.ok(200);
    assert_eq!(list["data"].as_array().unwrap().len(), 1, "one contact");

    // The same key with another body, or on another route, is refused and does nothing.
    let bea = json!({"fullName": "Bea Retry", "primaryPhone": "+5215500000102"});
    let (status, _, body) = post(&http, &base, &org.key, "/contacts", "c-101", &bea).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["code"], "IDEMPOTENCY_KEY_REUSED");
    let (status, _, body) = post(&http, &base, &org.key, "/webhooks", "c-101", &ana).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let list = org.get("/contacts?q=Retry").await.ok(200);
    assert_eq!(list["data"].as_array().unwrap().len(), 1);

    // Keys are the API key's own: another key of the organisation starts afresh.
    let other = org.key_with(&["contacts:write"]).await;
    let (status, replayed, _) = post(&http, &base, &other, "/contacts", "c-101", &bea).await;
    assert_eq!((status, replayed), (StatusCode::CREATED, false));

    // A refusal is an answer too; a key over 255 characters is not a key.
    let bad = json!({"foo": 1});
    let (status, replayed, _) = post(&http, &base, &org.key, "/contacts", "c-bad", &bad).await;
    assert_eq!((status, replayed), (StatusCode::BAD_REQUEST, false));
    let (status, replayed, _) = post(&http, &base, &org.key, "/contacts", "c-bad", &bad).await;
    assert_eq!((status, replayed), (StatusCode::BAD_REQUEST, true));
    let long = "k".repeat(256);
    let (status, _, body) = post(&http, &base, &org.key, "/contacts", &long, &bea).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_given_one_key_create_one_contact() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let other = app.replica();
    let (a, b) = (app.listen().await, other.listen().await);
    let http = reqwest::Client::new();
    let body = json!({"fullName": "Ana Twice", "primaryPhone": "+5215500000201"});
    let ((s1, r1, c1), (s2, r2, c2)) = tokio::join!(
        post(&http, &a, &org.key, "/contacts", "twice-1", &body),
        post(&http, &b, &org.key, "/contacts", "twice-1", &body),
    );
    let created: Vec<&Value> = [(s1, r1, &c1), (s2, r2, &c2)]
        .iter()
        .filter(|(s, ..)| *s == StatusCode::CREATED)
        .map(|(.., c)| *c)
        .collect();
    assert!(!created.is_empty());
    for (s, r, c) in [(s1, r1, &c1), (s2, r2, &c2)] {
        assert!(
            (s == StatusCode::CREATED && (r || created[0] == c))
                || (s == StatusCode::CONFLICT && c["code"] == "IDEMPOTENCY_KEY_IN_USE"),
            "{s} {c}"
        );
    }
    // A 409 is retried as a client would: the first answer.
    let (s, r, c) = post(&http, &b, &org.key, "/contacts", "twice-1", &body).await;
    assert_eq!((s, r), (StatusCode::CREATED, true));
    assert_eq!(c.id(), created[0].id());
    let list = org.get("/contacts?q=Twice").await.ok(200);
    assert_eq!(list["data"].as_array().unwrap().len(), 1, "one contact");
}

#[tokio::test]
async fn a_retried_import_with_a_new_boundary_is_the_same_request() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let base = app.listen().await;
    let http = reqwest::Client::new();
    let upload = |key: &'static str| {
        let form = reqwest::multipart::Form::new().text("options", "{}").part(
            "file",
            reqwest::multipart::Part::bytes(
                b"fullName,primaryPhone\nAna,+5215500000301\n".to_vec(),
            )
            .file_name("people.csv")
            .mime_str("text/csv")
            .unwrap(),
        );
        http.post(format!("{base}/contacts/imports"))
            .bearer_auth(&org.key)
            .header("idempotency-key", key)
            .multipart(form)
            .send()
    };
    let first = upload("import-1").await.unwrap();
    assert_eq!(first.status(), StatusCode::ACCEPTED);
    let first: Value = first.json().await.unwrap();
    // reqwest draws a new random boundary for every form.
    let again = upload("import-1").await.unwrap();
    assert_eq!(again.status(), StatusCode::ACCEPTED);
    assert_eq!(again.headers()["idempotent-replayed"], "true");
    let again: Value = again.json().await.unwrap();
    assert_eq!(again.id(), first.id());
    let jobs = org.get("/contacts/imports").await.ok(200);
    assert_eq!(jobs["data"].as_array().unwrap().len(), 1, "{jobs}");
}

#[tokio::test]
async fn an_operator_top_up_retried_with_its_key_credits_once() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let base = app.listen().await;
    let http = reqwest::Client::new();
    let path = format!("/admin/organizations/{}/wallet/top-ups", org.id);
    let amount = json!({"amount": 5.0});
    let token = crate::support::ADMIN;
    let (status, replayed, first) = post(&http, &base, token, &path, "top-up-1", &amount).await;
    assert_eq!((status, replayed), (StatusCode::CREATED, false), "{first}");
    let (status, replayed, again) = post(&http, &base, token, &path, "top-up-1", &amount).await;
    assert_eq!((status, replayed), (StatusCode::CREATED, true));
    assert_eq!(again, first);
    let wallet = org.get("/wallet").await.ok(200);
    assert_eq!(wallet["balance"], json!(5.0), "credited once: {wallet}");
    // The operator's keys are not an API key's: the same key there is a new request.
    let (status, replayed, _) = post(
        &http,
        &base,
        &org.key,
        "/contacts",
        "top-up-1",
        &json!({"fullName": "Ana"}),
    )
    .await;
    assert_eq!((status, replayed), (StatusCode::CREATED, false));
}
