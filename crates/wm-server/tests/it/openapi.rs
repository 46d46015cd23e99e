//! The OpenAPI document: served, complete against the router, internally consistent, and
//! equal to the committed `docs/openapi.json` (regenerate with `WM_UPDATE_OPENAPI=1`).

use axum::http::Method;
use serde_json::Value;

use crate::support::TestApp;

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
    let generated = serde_json::to_string_pretty(&wm_server::openapi::document()).unwrap() + "\n";
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

#[tokio::test]
async fn every_documented_operation_is_routed() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let id = uuid::Uuid::new_v4().to_string();
    for (method, path) in wm_server::openapi::routes() {
        let concrete = path.replace("{id}", &id).replace("{deliveryId}", &id);
        let m = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
        let body = matches!(method, "post" | "patch").then(|| serde_json::json!({}));
        let r = app.call(m, &concrete, Some(&org.key), body).await;
        assert_ne!(r.status.as_u16(), 405, "{method} {path}");
        assert_ne!(r.body["message"], "Route not found", "{method} {path}");
        assert!(r.status.as_u16() < 500, "{method} {path}: {:?}", r.body);
    }
}
