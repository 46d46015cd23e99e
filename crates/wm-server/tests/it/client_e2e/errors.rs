//! The typed errors a caller matches on: validation messages, business codes, 404, 401 and
//! 429 with `Retry-After`, through the client against the real server.

use axum::http::Method;
use chrono::Duration;
use serde_json::{Value, json};
use uuid::Uuid;
use wm_client::types::contacts::CreateContact;
use wm_client::{Error, ErrorCode};

use crate::support::TestApp;

use super::{client, day, serve};

#[tokio::test]
async fn typed_errors_end_to_end() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let base = serve(&app).await;
    let c = client(&base, &org.key);
    let ana = c
        .contacts()
        .create(&CreateContact {
            full_name: Some("Ana".into()),
            primary_phone: Some("+14155550123".into()),
            ..Default::default()
        })
        .await
        .expect("create");

    // 409 with the extra fields of the body.
    let dup = c
        .contacts()
        .create(&CreateContact {
            primary_phone: Some("+1 (415) 555-0123".into()),
            ..Default::default()
        })
        .await
        .expect_err("duplicate phone");
    assert_eq!(dup.code(), Some(ErrorCode::ContactPhoneExists));
    assert_eq!(dup.status(), Some(409));
    assert!(!dup.is_retryable());
    match &dup {
        Error::Api { body, .. } => {
            assert_eq!(body["contactId"], ana.id.to_string());
            assert_eq!(body["fullName"], "Ana");
        }
        other => panic!("{other:?}"),
    }

    // 400 validation: the messages, one per failed constraint.
    let bad = c
        .contacts()
        .list()
        .page_size(500)
        .send()
        .await
        .expect_err("pageSize");
    assert!(
        matches!(&bad, Error::Validation { messages } if messages == &["pageSize must not be greater than 100"]),
        "{bad:?}"
    );
    let bad = c
        .contacts()
        .create(&CreateContact {
            lifecycle_stage_id: Some(Uuid::new_v4()),
            owner_id: Some(Uuid::new_v4()),
            ..Default::default()
        })
        .await
        .expect_err("unknown stage and owner");
    let Error::Validation { messages } = &bad else {
        panic!("{bad:?}")
    };
    assert!(
        messages.contains(
            &"lifecycleStageId must be a lifecycle stage of this organization".to_owned()
        )
    );
    assert!(messages.contains(&"ownerId must be a user of this organization".to_owned()));
    assert_eq!(bad.status(), Some(400));
    let bad = c
        .reports()
        .wallet()
        .from(day(2026, 11, 12))
        .to(day(2026, 11, 1))
        .send()
        .await
        .expect_err("period");
    assert!(
        matches!(&bad, Error::Validation { messages } if messages == &["from must not be after to"]),
        "{bad:?}"
    );

    // 404 on every kind of resource.
    let nobody = Uuid::new_v4();
    for err in [
        c.contacts().get(nobody).await.expect_err("contact"),
        c.campaigns()
            .get(nobody)
            .await
            .map(|_| ())
            .expect_err("campaign"),
        c.webhooks()
            .get(nobody)
            .await
            .map(|_| ())
            .expect_err("webhook"),
        c.conversations()
            .get(nobody)
            .await
            .map(|_| ())
            .expect_err("conversation"),
        c.automations()
            .get(nobody)
            .await
            .map(|_| ())
            .expect_err("automation"),
    ] {
        assert!(
            matches!(
                err,
                Error::Api {
                    status: 404,
                    code: None,
                    ..
                }
            ),
            "{err:?}"
        );
    }

    // 403: a key without the scope; the message names it.
    let read_only = client(&base, &org.key_with(&["contacts:read"]).await);
    assert_eq!(
        read_only
            .contacts()
            .list()
            .send()
            .await
            .expect("allowed")
            .meta
            .total,
        1
    );
    let denied = read_only
        .contacts()
        .create(&CreateContact::default())
        .await
        .expect_err("write");
    assert_eq!(denied.code(), Some(ErrorCode::ApiKeyScopeMissing));
    assert!(
        matches!(&denied, Error::Api { status: 403, message, .. } if message.contains("contacts:write")),
        "{denied:?}"
    );
    for (scope, err) in [
        (
            "campaigns:read",
            read_only.campaigns().list().send().await.map(|_| ()),
        ),
        (
            "conversations:read",
            read_only.conversations().list().send().await.map(|_| ()),
        ),
        (
            "automations:read",
            read_only.automations().list().send().await.map(|_| ()),
        ),
        (
            "reports:read",
            read_only.reports().team().send().await.map(|_| ()),
        ),
        (
            "webhooks:read",
            read_only.webhooks().list().await.map(|_| ()),
        ),
    ] {
        let err = err.expect_err(scope);
        assert_eq!(err.code(), Some(ErrorCode::ApiKeyScopeMissing), "{scope}");
        assert!(err.to_string().contains(scope), "{scope}: {err}");
    }

    // 403 on a route not open to keys (reached with the raw GET).
    let admin = c
        .get::<Value>("/admin/organizations", &[])
        .await
        .expect_err("operator route");
    assert_eq!(admin.code(), Some(ErrorCode::ApiKeyNotAllowedHere));

    // 401: unknown, then expired.
    let unknown = client(&base, "wm_live_nope");
    assert_eq!(
        unknown
            .contacts()
            .get(ana.id)
            .await
            .expect_err("401")
            .code(),
        Some(ErrorCode::ApiKeyInvalid)
    );
    let expires = (app.clock_now() + Duration::hours(1)).to_rfc3339();
    let short = org
        .admin(
            Method::POST,
            "/api-keys",
            Some(json!({"name": "short", "userId": org.user_id, "scopes": ["contacts:read"], "expiresAt": expires})),
        )
        .await
        .ok(201)["key"]
        .as_str()
        .expect("key")
        .to_owned();
    let short = client(&base, &short);
    short.contacts().get(ana.id).await.expect("still valid");
    app.clock.advance(Duration::hours(2));
    let expired = short.contacts().get(ana.id).await.expect_err("expired");
    assert_eq!(expired.code(), Some(ErrorCode::ApiKeyExpired));
    assert_eq!(expired.status(), Some(401));
}
