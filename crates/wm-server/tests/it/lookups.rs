//! GET /lifecycle-stages and GET /users.

use axum::http::Method;
use serde_json::json;

use crate::support::TestApp;

#[tokio::test]
async fn stages_list_the_defaults_in_order() {
    let app = TestApp::new().await;
    let org = app.org().await;
    org.admin(
        Method::POST,
        "/lifecycle-stages",
        Some(json!({"name": "Churned", "order": 5, "category": "INACTIVE"})),
    )
    .await
    .ok(201);
    let s = org.get("/lifecycle-stages").await.ok(200);
    let got: Vec<(String, String, i64)> = s["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().into(),
                s["category"].as_str().unwrap().into(),
                s["order"].as_i64().unwrap(),
            )
        })
        .collect();
    let want = [
        ("Lead", "LEAD", 1),
        ("Qualified", "IN_PROGRESS", 2),
        ("Customer", "CUSTOMER", 3),
        ("Inactive", "INACTIVE", 4),
        ("Churned", "INACTIVE", 5),
    ];
    assert_eq!(
        got,
        want.iter()
            .map(|(a, b, c)| ((*a).into(), (*b).into(), *c))
            .collect::<Vec<_>>()
    );
    // Another organisation sees only its own.
    let other = app.org().await;
    assert_eq!(
        other.get("/lifecycle-stages").await.ok(200)["data"]
            .as_array()
            .unwrap()
            .len(),
        4
    );
}

#[tokio::test]
async fn users_list_the_organisations_users() {
    let app = TestApp::new().await;
    let org = app.org().await;
    org.admin(
        Method::POST,
        "/users",
        Some(json!({"fullName": "Second", "email": "second@example.com"})),
    )
    .await
    .ok(201);
    let u = org.get("/users").await.ok(200);
    let names: Vec<&str> = u["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["fullName"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["Tess Tester", "Second"]);
    org.get("/users?page=1")
        .await
        .assert_invalid("property page should not exist");
}
