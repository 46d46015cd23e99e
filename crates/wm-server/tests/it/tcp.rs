//! The real server over TCP, driven by wm-client.

use std::net::SocketAddr;

use wm_client::{Client, Error, ErrorCode};
use wm_types::contacts::{CreateContact, UpdateContact};

use crate::support::TestApp;

async fn serve(app: &TestApp) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let router = app.router.clone();
    tokio::spawn(async move {
        axum::serve(listener, router).await.ok();
    });
    addr
}

#[tokio::test]
async fn client_round_trip_over_tcp() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let addr = serve(&app).await;
    let client = Client::new(format!("http://{addr}/api/v1"), org.key.clone()).expect("client");
    let created = client
        .create_contact(&CreateContact {
            full_name: Some("Over TCP".into()),
            primary_phone: Some("+14155550123".into()),
            tags: Some(vec!["wire".into()]),
            ..Default::default()
        })
        .await
        .expect("create");
    assert_eq!(created.primary_phone.as_deref(), Some("+14155550123"));
    let got = client.get_contact(created.id).await.expect("get");
    assert_eq!(got, created);
    let dup = client
        .create_contact(&CreateContact {
            primary_phone: Some("+1 415 555 0123".into()),
            ..Default::default()
        })
        .await
        .expect_err("duplicate phone");
    assert_eq!(dup.code(), Some(ErrorCode::ContactPhoneExists));
    let updated = client
        .update_contact(
            created.id,
            &UpdateContact {
                company: Some(Some("Acme".into())),
                ..Default::default()
            },
        )
        .await
        .expect("update");
    assert_eq!(updated.company.as_deref(), Some("Acme"));
    let list = client
        .list_contacts(&[("tag", "WIRE")])
        .await
        .expect("list");
    assert_eq!(list.meta.total, 1);
    assert!(
        client
            .delete_contact(created.id)
            .await
            .expect("delete")
            .deleted
    );
    let gone = client.get_contact(created.id).await.expect_err("gone");
    assert!(matches!(gone, Error::Api { status: 404, .. }));
    let bad = client
        .list_contacts(&[("pageSize", "500")])
        .await
        .expect_err("invalid");
    assert!(
        matches!(bad, Error::Validation { ref messages } if messages == &["pageSize must not be greater than 100"])
    );
    let anonymous = Client::new(format!("http://{addr}/api/v1"), "wm_live_nope").expect("client");
    assert_eq!(
        anonymous
            .get_contact(created.id)
            .await
            .expect_err("401")
            .code(),
        Some(ErrorCode::ApiKeyInvalid)
    );
}
