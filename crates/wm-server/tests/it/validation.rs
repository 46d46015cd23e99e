//! Validation: class-validator messages, every bound of the Limits table at the bound and
//! one past it, malformed JSON and wrong types.

use axum::body::Body;
use axum::http::Request;
use serde_json::json;

use crate::support::TestApp;

#[tokio::test]
async fn contact_field_limits() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let ok = json!({
        "fullName": "x".repeat(160), "company": "c".repeat(160), "country": "MX",
        "primaryPhone": format!("+525512345678{}", " ".repeat(19)),
        "tags": (0..50).map(|i| format!("{i}{}", "t".repeat(58))).collect::<Vec<_>>(),
        "note": "n".repeat(4000)
    });
    assert_eq!(ok["primaryPhone"].as_str().unwrap().len(), 32);
    org.post("/contacts", ok).await.ok(201);
    let r = org
        .post(
            "/contacts",
            json!({
                "fullName": "x".repeat(161), "company": "c".repeat(161), "country": "MEX",
                "primaryPhone": format!("+525512345679{}", " ".repeat(20)),
                "tags": (0..51).map(|i| format!("t{i}")).collect::<Vec<_>>(),
                "note": "n".repeat(4001)
            }),
        )
        .await;
    for m in [
        "fullName must be shorter than or equal to 160 characters",
        "company must be shorter than or equal to 160 characters",
        "country must be shorter than or equal to 2 characters",
        "primaryPhone must be shorter than or equal to 32 characters",
        "tags must contain no more than 50 elements",
        "note must be shorter than or equal to 4000 characters",
    ] {
        r.assert_invalid(m);
    }
    org.post("/contacts", json!({"tags": ["t".repeat(61)]}))
        .await
        .assert_invalid("each value in tags must be shorter than or equal to 60 characters");
}

#[tokio::test]
async fn wrong_types_unknown_fields_and_enums() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let r = org
        .post(
            "/contacts",
            json!({"fullName": 5, "optedOut": "yes", "primaryEmail": "nope", "lifecycleStageId": "abc",
                   "consent": {"given": "no", "how": "SMOKE"}, "tags": "vip", "source": "FAX", "foo": 1,
                   "primaryPhone": "5512345678"}),
        )
        .await;
    for m in [
        "property foo should not exist",
        "fullName must be a string",
        "optedOut must be a boolean value",
        "primaryEmail must be an email",
        "lifecycleStageId must be a UUID",
        "consent.given must be a boolean value",
        "consent.how must be one of the following values: OTHER, WEBSITE_FORM, PHONE, MESSAGING_APP_A_REPLY, CONTRACT",
        "tags must be an array",
        "source must be one of the following values: OTHER, MANUAL, IMPORT, MESSAGING_APP_A_INBOUND, CAMPAIGN, WEBSITE_FORM, REFERRAL",
        "primaryPhone must be a phone number in international format (+ followed by 6 to 15 digits)",
    ] {
        r.assert_invalid(m);
    }
    org.post("/contacts", json!({"consent": {"at": "2026-01-01"}}))
        .await
        .assert_invalid("consent.given must be a boolean value");
    org.post(
        "/contacts",
        json!({"consent": {"given": true, "at": "yesterday"}}),
    )
    .await
    .assert_invalid("consent.at must be a valid ISO 8601 date string");
    org.post("/contacts", json!([1, 2]))
        .await
        .assert_invalid("request body must be a JSON object");
}

#[tokio::test]
async fn malformed_json_is_a_400_of_the_validation_shape() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let req = Request::post("/api/v1/contacts")
        .header("authorization", format!("Bearer {}", org.key))
        .header("content-type", "application/json")
        .body(Body::from("{\"fullName\": "))
        .unwrap();
    let r = app.send(req).await;
    let m = r.messages();
    assert!(m[0].starts_with("request body is not valid JSON"), "{m:?}");
    let req = Request::post("/api/v1/contacts")
        .header("authorization", format!("Bearer {}", org.key))
        .header("content-type", "application/json")
        .body(Body::from(vec![0xff, 0xfe, 0x00]))
        .unwrap();
    assert_eq!(app.send(req).await.status, 400);
    // The same bytes without a JSON content type are not JSON at all.
    let req = Request::post("/api/v1/contacts")
        .header("authorization", format!("Bearer {}", org.key))
        .body(Body::from(vec![0xff, 0xfe, 0x00]))
        .unwrap();
    assert_eq!(app.send(req).await.status, 415);
}

#[tokio::test]
async fn list_query_limits() {
    let app = TestApp::new().await;
    let org = app.org().await;
    for ok in [
        "pageSize=100".to_owned(),
        "pageSize=1".to_owned(),
        "page=1".to_owned(),
        format!("q={}", "q".repeat(120)),
        format!("search={}", "s".repeat(120)),
        format!("tag={}", "t".repeat(60)),
        "days=7".to_owned(),
        "days=30".to_owned(),
        "days=90".to_owned(),
        "ownerId=none".to_owned(),
        format!(
            "ids={}",
            (0..500)
                .map(|_| uuid::Uuid::new_v4().to_string())
                .collect::<Vec<_>>()
                .join(",")
        ),
        "tab=no_consent".to_owned(),
        "source=REFERRAL&channelType=VOICE".to_owned(),
    ] {
        assert_eq!(
            org.get(&format!("/contacts?{ok}")).await.status,
            200,
            "{ok}"
        );
    }
    let cases = [
        (
            "pageSize=101".to_owned(),
            "pageSize must not be greater than 100",
        ),
        ("pageSize=0".to_owned(), "pageSize must not be less than 1"),
        ("page=0".to_owned(), "page must not be less than 1"),
        ("page=two".to_owned(), "page must be an integer number"),
        (
            format!("q={}", "q".repeat(121)),
            "q must be shorter than or equal to 120 characters",
        ),
        (
            format!("search={}", "s".repeat(121)),
            "search must be shorter than or equal to 120 characters",
        ),
        (
            format!("tag={}", "t".repeat(61)),
            "tag must be shorter than or equal to 60 characters",
        ),
        (
            "days=8".to_owned(),
            "days must be one of the following values: 7, 30, 90",
        ),
        (
            "ownerId=someone".to_owned(),
            "ownerId must be the word none or a lowercase UUID",
        ),
        (
            "lifecycleStageId=1".to_owned(),
            "lifecycleStageId must be a UUID",
        ),
        ("ids=1,2".to_owned(), "each value in ids must be a UUID"),
        (
            format!(
                "ids={}",
                (0..501)
                    .map(|_| uuid::Uuid::new_v4().to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            "ids must contain no more than 500 elements",
        ),
        ("limit=5".to_owned(), "property limit should not exist"),
        ("q=a&q=b".to_owned(), "q must be a string"),
    ];
    for (q, msg) in cases {
        org.get(&format!("/contacts?{q}")).await.assert_invalid(msg);
    }
}

#[tokio::test]
async fn routes_without_a_query_refuse_parameters() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let id = org.contact(json!({})).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    org.get(&format!("/contacts/{id}?expand=all"))
        .await
        .assert_invalid("property expand should not exist");
    org.post("/contacts?dryRun=true", json!({}))
        .await
        .assert_invalid("property dryRun should not exist");
    org.get(&format!("/contacts/{id}/notes?pageSize=101"))
        .await
        .assert_invalid("pageSize must not be greater than 100");
}
