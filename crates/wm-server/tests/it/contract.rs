//! Contract corners found by black-box testing: body-less routes refuse a body with
//! properties, a non-JSON body is a 415, a wrong method a JSON 405, every paginated route
//! bounds `page`, U+0000 is refused on both databases, `templateKey` is always a string.

use axum::body::Body;
use axum::http::{Method, Request, header};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::support::{ADMIN, IdOf, Resp, TestApp};

/// Every documented operation, as (method, path with `{…}` parameters).
fn operations() -> Vec<(Method, String, Value)> {
    let doc = wm_server::routes::document();
    let mut out = Vec::new();
    for (path, ops) in doc["paths"].as_object().unwrap() {
        for (method, op) in ops.as_object().unwrap() {
            let Ok(m) = method.to_uppercase().parse::<Method>() else {
                continue;
            };
            out.push((m, path.clone(), op.clone()));
        }
    }
    assert!(out.len() > 40, "the document lists the operations");
    out
}

/// A path with every `{param}` replaced by a fresh UUID.
fn concrete(path: &str) -> String {
    path.split('/')
        .map(|seg| {
            if seg.starts_with('{') {
                Uuid::now_v7().to_string()
            } else {
                seg.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

async fn raw(
    app: &TestApp,
    method: Method,
    path: &str,
    token: &str,
    ctype: &str,
    body: &str,
) -> Resp {
    let req = Request::builder()
        .method(method)
        .uri(format!("/api/v1{path}"))
        .header(header::AUTHORIZATION, format!("Bearer {token}"))
        .header(header::CONTENT_TYPE, ctype)
        .body(Body::from(body.to_owned()))
        .unwrap();
    app.send(req).await
}

#[tokio::test]
async fn routes_without_a_body_refuse_one_with_properties() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let bodiless: Vec<(Method, String)> = operations()
        .into_iter()
        .filter(|(m, _, op)| *m != Method::GET && op.get("requestBody").is_none())
        .map(|(m, p, _)| (m, concrete(&p)))
        .collect();
    assert!(bodiless.len() >= 6, "{bodiless:?}");
    for (m, path) in &bodiless {
        let r = org
            .app
            .call(m.clone(), path, Some(&org.key), Some(json!({"x": 1})))
            .await;
        assert_eq!(
            r.messages(),
            vec!["property x should not exist"],
            "{m} {path}"
        );
        // No body, or `{}`, is accepted (then the unknown id answers 404).
        let r = org
            .app
            .call(m.clone(), path, Some(&org.key), Some(json!({})))
            .await;
        assert_eq!(r.status.as_u16(), 404, "{m} {path}: {:?}", r.body);
        let r = org.app.call(m.clone(), path, Some(&org.key), None).await;
        assert_eq!(r.status.as_u16(), 404, "{m} {path}: {:?}", r.body);
    }
    // The operator's body-less routes too (every operator handler taking `NoBody`; the
    // operator router is plain axum, which cannot list its routes). The organisation is
    // real, since it is checked before the body; the other ids are not, so no body or `{}`
    // reaches the route itself: 404, or for the template sync its business 400 (no secret
    // key to read tokens here), never a validation error.
    let org_path = format!("/admin/organizations/{}", org.id);
    let id = Uuid::now_v7();
    let no_key = "The server has no WM_SECRET_KEY to read tokens.";
    for (m, path, (status, message)) in [
        (
            Method::POST,
            format!("{org_path}/api-keys/{id}/revoke"),
            (404, "API key not found"),
        ),
        (
            Method::DELETE,
            format!("{org_path}/webhooks/{id}"),
            (404, "Webhook not found"),
        ),
        (
            Method::POST,
            format!("{org_path}/webhooks/{id}/deliveries/{id}/retry"),
            (404, "Webhook not found"),
        ),
        (
            Method::POST,
            format!("{org_path}/templates/sync"),
            (400, no_key),
        ),
    ] {
        let r = app
            .call(m.clone(), &path, Some(ADMIN), Some(json!({"x": 1})))
            .await;
        assert_eq!(
            r.messages(),
            vec!["property x should not exist"],
            "{m} {path}"
        );
        for body in [Some(json!({})), None] {
            let r = app.call(m.clone(), &path, Some(ADMIN), body.clone()).await;
            r.assert_error(status, None);
            assert_eq!(r.body["message"], message, "{m} {path} {body:?}");
        }
    }
    // A send with no body still means `now` (here: no recipients yet).
    let s = crate::kit::setup(&org).await;
    let c = crate::kit::campaign(&org, &s, &s.plain).await;
    let r = app
        .call(
            Method::POST,
            &format!("/campaigns/{c}/send"),
            Some(&org.key),
            None,
        )
        .await;
    assert_eq!(r.body["message"], "La campaña no tiene destinatarios.");
}

#[tokio::test]
async fn a_body_that_is_not_json_is_a_415() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let body = r#"{"fullName":"Plain Text"}"#;
    for ctype in [
        "text/plain",
        "application/x-www-form-urlencoded",
        "application/xml",
    ] {
        let r = raw(&app, Method::POST, "/contacts", &org.key, ctype, body).await;
        r.assert_error(415, None);
    }
    let r = raw(
        &app,
        Method::POST,
        "/admin/organizations",
        ADMIN,
        "text/plain",
        r#"{"name":"x"}"#,
    )
    .await;
    r.assert_error(415, None);
    // Nothing was created.
    let list = org.get("/contacts").await.ok(200);
    assert_eq!(list["meta"]["total"], 0);
    // JSON with parameters, and `+json` types, are JSON.
    for ctype in [
        "application/json; charset=utf-8",
        "application/merge-patch+json",
    ] {
        raw(&app, Method::POST, "/contacts", &org.key, ctype, body)
            .await
            .ok(201);
    }
}

#[tokio::test]
async fn a_wrong_method_is_a_json_405_with_allow() {
    let app = TestApp::new().await;
    let org = app.org().await;
    for (m, path, allow) in [
        (Method::PUT, "/contacts".to_owned(), vec!["GET", "POST"]),
        (
            Method::DELETE,
            format!("/campaigns/{}/pause", Uuid::now_v7()),
            vec!["POST"],
        ),
        (
            Method::PATCH,
            "/admin/organizations/x/users".to_owned(),
            vec!["GET", "POST"],
        ),
    ] {
        let token = if path.starts_with("/admin") {
            ADMIN
        } else {
            org.key.as_str()
        };
        let r = app.call(m.clone(), &path, Some(token), None).await;
        r.assert_error(405, None);
        let header = r
            .headers
            .get(header::ALLOW)
            .expect("Allow")
            .to_str()
            .unwrap();
        for a in allow {
            assert!(header.contains(a), "{m} {path}: Allow {header}");
        }
    }
}

#[tokio::test]
async fn every_paginated_route_bounds_page() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let huge = "page=92233720368547760&pageSize=100";
    let mut paths: Vec<String> = operations()
        .into_iter()
        .filter(|(m, _, op)| {
            *m == Method::GET
                && op["parameters"]
                    .as_array()
                    .is_some_and(|ps| ps.iter().any(|p| p["name"] == "page"))
        })
        .map(|(_, p, _)| concrete(&p))
        .collect();
    assert!(paths.len() >= 8, "{paths:?}");
    paths.push(format!(
        "/admin/organizations/{}/webhooks/{}/deliveries",
        org.id,
        Uuid::now_v7()
    ));
    for path in paths {
        let token = if path.starts_with("/admin") {
            ADMIN
        } else {
            org.key.as_str()
        };
        let r = app
            .call(Method::GET, &format!("{path}?{huge}"), Some(token), None)
            .await;
        assert_eq!(
            r.messages(),
            vec!["page must not be greater than 1000000"],
            "{path}"
        );
    }
    // The bound itself is a valid (empty) page.
    let r = org.get("/contacts?page=1000000&pageSize=100").await.ok(200);
    assert_eq!(r["data"], json!([]));
}

#[tokio::test]
async fn nul_characters_are_a_400_naming_the_field_on_every_database() {
    let app = TestApp::new().await;
    let org = app.org().await;
    org.post("/contacts", json!({"fullName": "a\u{0}b"}))
        .await
        .assert_invalid("fullName must not contain a NUL character");
    org.post("/contacts", json!({"fullName": "ok", "tags": ["x\u{0}"]}))
        .await
        .assert_invalid("tags must not contain a NUL character");
    org.get("/contacts?q=%00")
        .await
        .assert_invalid("q must not contain a NUL character");
    let c = org.contact(json!({"fullName": "Ana"})).await;
    let id = c.id();
    org.post(&format!("/contacts/{id}/notes"), json!({"body": "\u{0}"}))
        .await
        .assert_invalid("body must not contain a NUL character");
    org.admin(
        Method::POST,
        "/users",
        Some(json!({"fullName": "N\u{0}", "email": "n@example.com"})),
    )
    .await
    .assert_invalid("fullName must not contain a NUL character");
    // Nothing reached the database.
    assert_eq!(org.get("/contacts").await.ok(200)["meta"]["total"], 1);
}

#[tokio::test]
async fn template_key_is_always_a_string() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let flow = |steps: Value| {
        json!({"name": "Flow", "triggerType": "CAMPAIGN_REPLIED", "createdByUserId": org.user_id,
               "steps": steps})
    };
    let sends = flow(json!([
        {"type": "ACTION", "config": {"kind": "ADD_TAG", "value": "x"}},
        {"type": "ACTION", "config": {"kind": "SEND_TEMPLATE", "value": "welcome"}}
    ]));
    let a = org
        .admin(Method::POST, "/automations", Some(sends))
        .await
        .ok(201);
    let got = org.get(&format!("/automations/{}", a.id())).await.ok(200);
    assert_eq!(got["templateKey"], "welcome");
    let tags_only = flow(json!([{"type": "ACTION", "config": {"kind": "ADD_TAG", "value": "x"}}]));
    let a = org
        .admin(Method::POST, "/automations", Some(tags_only))
        .await
        .ok(201);
    let got = org.get(&format!("/automations/{}", a.id())).await.ok(200);
    assert_eq!(got["templateKey"], "");
    for item in org.get("/automations").await.ok(200)["data"]
        .as_array()
        .unwrap()
    {
        assert!(item["templateKey"].is_string(), "{item}");
    }
}
