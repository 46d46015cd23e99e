//! The SQLite point reader (`db::reader`) reads the same contact the pool does, column for
//! column, keeps tenants apart, and sees each write as soon as it committed. The HTTP tests
//! of `GET /contacts/{id}` go through it too on SQLite; this checks what they cannot see:
//! a field read as its default where the pool reads a value.

use axum::http::Method;
use sea_orm::ConnectionTrait;
use serde_json::json;
use uuid::Uuid;
use wm_server::db;

use crate::support::{IdOf, TestApp};

#[tokio::test]
async fn the_reader_reads_every_column_as_the_pool_does() {
    let app = TestApp::new().await;
    let Some(reader) = app.state.db.reader() else {
        assert!(app.on_postgres(), "a SQLite file has a reader");
        return;
    };
    let org = app.org().await;
    let stage = org.stage("Qualified").await;
    let full = org
        .contact(json!({
            "fullName": "Ana Pérez", "primaryPhone": "+52 55 1234 5678",
            "primaryEmail": "ana@example.com", "company": "Acme", "country": "MX",
            "source": "WEBSITE_FORM", "lifecycleStageId": stage, "ownerId": org.user_id,
            "optedOut": true, "consent": {"given": true, "at": "2026-11-01", "how": "PHONE"},
            "tags": ["VIP", "Lead"]
        }))
        .await;
    org.admin(
        Method::POST,
        "/deals",
        Some(json!({"contactId": full["id"], "title": "Big order", "value": 10})),
    )
    .await
    .ok(201);
    let empty = org.contact(json!({})).await;
    let odd = org.contact(json!({"fullName": "From the future"})).await;
    // A source a newer replica wrote: both read it as UNKNOWN.
    app.state
        .db
        .conn
        .execute_unprepared(
            "UPDATE contacts SET source = 'SOME_NEW_SOURCE' WHERE full_name = 'From the future'",
        )
        .await
        .unwrap();

    let org_id: Uuid = org.id.parse().unwrap();
    for c in [&full, &empty, &odd] {
        let id: Uuid = c.id().parse().unwrap();
        let pooled = db::contacts::find(&app.state.db.conn, org_id, id)
            .await
            .unwrap()
            .expect("the pool reads it");
        let read = reader.contact(org_id, id).unwrap().expect("the reader too");
        assert_eq!(read, pooled);
    }
    let id: Uuid = full.id().parse().unwrap();
    let read = reader.contact(org_id, id).unwrap().unwrap();
    assert!(read.opted_out && read.consent_given && read.consent_at.is_some());
    assert_eq!(read.open_deals, 1);
    assert!(read.lifecycle_stage_id.is_some() && read.owner_id.is_some());
}

#[tokio::test]
async fn the_reader_keeps_tenants_apart_and_sees_writes_at_once() {
    let app = TestApp::new().await;
    let Some(reader) = app.state.db.reader() else {
        assert!(app.on_postgres(), "a SQLite file has a reader");
        return;
    };
    let a = app.org().await;
    let b = app.org().await;
    let c = a.contact(json!({"fullName": "Ana"})).await;
    let id: Uuid = c.id().parse().unwrap();
    let (a_id, b_id): (Uuid, Uuid) = (a.id.parse().unwrap(), b.id.parse().unwrap());

    assert_eq!(
        reader.contact(b_id, id).unwrap(),
        None,
        "another tenant's row"
    );
    b.get(&format!("/contacts/{id}"))
        .await
        .assert_error(404, None);
    assert_eq!(reader.contact(a_id, Uuid::new_v4()).unwrap(), None);

    // Each write, committed on a pooled connection, is read back at once.
    for name in ["Ana María", "Ana M.", "A."] {
        a.patch(&format!("/contacts/{id}"), json!({"fullName": name}))
            .await
            .ok(200);
        let got = a.get(&format!("/contacts/{id}")).await.ok(200);
        assert_eq!(got["fullName"], name);
    }
    a.delete(&format!("/contacts/{id}")).await.ok(200);
    assert_eq!(reader.contact(a_id, id).unwrap(), None);
    a.get(&format!("/contacts/{id}"))
        .await
        .assert_error(404, None);
}
