//! The OpenAPI document: served, true to the router (routes, scopes, path ids), internally
//! consistent, and equal to the committed `docs/openapi.json` (regenerate with
//! `WM_UPDATE_OPENAPI=1`).

use axum::http::Method;
use serde_json::Value;

use crate::support::{ALL_SCOPES, TestApp};

fn refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if k == "$ref"
                    && let Some(s) = x.as_str()
                {
                    out.push(s.to_owned());
                }
                refs(x, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| refs(x, out)),
        _ => {}
    }
}

#[tokio::test]
async fn the_document_is_served_and_matches_the_committed_copy() {
    let app = TestApp::new().await;
    let served = app
        .call(Method::GET, "/openapi.json", None, None)
        .await
        .ok(200);
    assert_eq!(served["openapi"], "3.1.0");
    let docs = app.call(Method::GET, "/docs", None, None).await;
    assert_eq!(docs.status, 200);
    assert!(
        docs.body
            .as_str()
            .unwrap_or_default()
            .contains("openapi.json")
    );
    let generated = serde_json::to_string_pretty(&wm_server::routes::document()).unwrap() + "\n";
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/openapi.json");
    if std::env::var("WM_UPDATE_OPENAPI").is_ok() {
        std::fs::write(path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        committed == generated,
        "docs/openapi.json is out of date: run `WM_UPDATE_OPENAPI=1 cargo test -p wm-server --test it openapi`"
    );
    // Every reference resolves.
    let mut all = Vec::new();
    refs(&served, &mut all);
    assert!(!all.is_empty());
    for r in all {
        let name = r
            .strip_prefix("#/components/schemas/")
            .unwrap_or_else(|| panic!("unexpected ref {r}"));
        assert!(
            served["components"]["schemas"].get(name).is_some(),
            "dangling {r}"
        );
    }
}

/// Every operation of the document, as (method, path, operation).
fn operations(doc: &Value) -> Vec<(Method, String, Value)> {
    let mut out = Vec::new();
    for (path, ops) in doc["paths"].as_object().expect("paths") {
        for (method, op) in ops.as_object().expect("path item") {
            let m = Method::from_bytes(method.to_uppercase().as_bytes()).expect("method");
            out.push((m, path.clone(), op.clone()));
        }
    }
    out
}

/// `path` with its `{param}`s replaced: `bad` for the one named `bad_param`, a fresh UUID
/// for the others.
fn concrete(path: &str, bad_param: Option<&str>, bad: &str) -> String {
    path.split('/')
        .map(
            |seg| match seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
                Some(name) if Some(name) == bad_param => bad.to_owned(),
                Some(_) => uuid::Uuid::new_v4().to_string(),
                None => seg.to_owned(),
            },
        )
        .collect::<Vec<_>>()
        .join("/")
}

/// The document describes the router: each operation is routed, its scope is the one the
/// handler checks (a key with only that scope gets past the check, a key with every other
/// scope is refused), and each documented path parameter is read as a UUID (a malformed one
/// is the resource's 404, not the router's).
#[tokio::test]
async fn every_documented_operation_is_routed_as_documented() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let doc = wm_server::routes::document();
    let ops = operations(&doc);
    assert!(ops.len() > 40, "the document lists the operations");
    for (method, path, op) in ops {
        // "Requires the scope `a`." or, for a read of two resources, "… `a` or `b`.": each
        // one alone opens the route.
        let scopes: Vec<&str> = op["description"]
            .as_str()
            .and_then(|d| d.strip_prefix("Requires the scope `"))
            .and_then(|d| d.strip_suffix("`."))
            .unwrap_or_else(|| panic!("{method} {path}: no scope in {op}"))
            .split("` or `")
            .collect();
        let others: Vec<&str> = ALL_SCOPES
            .iter()
            .copied()
            .filter(|s| !scopes.contains(s))
            .collect();
        let others = org.key_with(&others).await;
        let body = (method != Method::GET).then(|| serde_json::json!({}));
        let url = concrete(&path, None, "");
        let mut only = String::new();
        for scope in &scopes {
            only = org.key_with(&[scope]).await;
            let r = app
                .call(method.clone(), &url, Some(&only), body.clone())
                .await;
            assert_ne!(r.status.as_u16(), 405, "{method} {path}");
            assert_ne!(r.status.as_u16(), 403, "{method} {path}: {:?}", r.body);
            assert_ne!(r.body["message"], "Route not found", "{method} {path}");
            assert!(r.status.as_u16() < 500, "{method} {path}: {:?}", r.body);
        }
        let r = app
            .call(method.clone(), &url, Some(&others), body.clone())
            .await;
        r.assert_error(403, Some("API_KEY_SCOPE_MISSING"));
        let params = op["parameters"].as_array().cloned().unwrap_or_default();
        for p in params.iter().filter(|p| p["in"] == "path") {
            let name = p["name"].as_str().expect("name");
            assert_eq!(p["schema"]["format"], "uuid", "{method} {path} {name}");
            let url = concrete(&path, Some(name), "not-a-uuid");
            let r = app
                .call(method.clone(), &url, Some(&only), body.clone())
                .await;
            r.assert_error(404, None);
            let message = r.body["message"].as_str().unwrap_or_default();
            assert!(
                message.ends_with(" not found") && message != "Route not found",
                "{method} {path} {name}: {message}"
            );
        }
    }
}

#[test]
fn every_operation_has_a_named_unique_id() {
    let doc = wm_server::routes::document();
    let ops = operations(&doc);
    let mut seen = std::collections::HashSet::new();
    for (method, path, op) in &ops {
        let id = op["operationId"].as_str().unwrap_or_default();
        assert_eq!(
            Some(id),
            wm_server::openapi::operation_id(&method.as_str().to_lowercase(), path),
            "{method} {path}: name it in openapi/ids.rs"
        );
        assert!(
            id.chars().next().is_some_and(|c| c.is_ascii_lowercase())
                && id.chars().all(|c| c.is_ascii_alphanumeric()),
            "{id}: camelCase, verb first"
        );
        assert!(seen.insert(id.to_owned()), "{id} twice");
    }
    assert_eq!(
        ops.len(),
        wm_server::openapi::OPERATION_IDS.len(),
        "no id for a route that is gone"
    );
}
