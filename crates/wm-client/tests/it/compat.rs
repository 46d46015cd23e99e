//! The first version's calls, exactly as wm-server's TCP test uses them, keep compiling and
//! behaving.

use serde_json::json;
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, ResponseTemplate};
use wm_client::types::contacts::{CreateContact, UpdateContact};
use wm_client::{Client, Error, ErrorCode};

use crate::support::{Harness, api, business, contact, contact_list, id, js, validation};

#[tokio::test]
async fn the_first_versions_calls_still_work() {
    let h = Harness::new().await;
    let c = id(1);
    let one =
        |status: u16, body: serde_json::Value| ResponseTemplate::new(status).set_body_json(body);
    Mock::given(method("POST"))
        .and(path(api("/contacts")))
        .respond_with(one(201, js(&contact(1))))
        .up_to_n_times(1)
        .mount(&h.server)
        .await;
    Mock::given(method("POST"))
        .and(path(api("/contacts")))
        .respond_with(one(409, business(409, Some("CONTACT_PHONE_EXISTS"), "dup")))
        .mount(&h.server)
        .await;
    Mock::given(method("GET"))
        .and(path(api(&format!("/contacts/{c}"))))
        .respond_with(one(200, js(&contact(1))))
        .up_to_n_times(1)
        .mount(&h.server)
        .await;
    Mock::given(method("GET"))
        .and(path(api(&format!("/contacts/{c}"))))
        .respond_with(one(404, business(404, None, "Contact not found")))
        .mount(&h.server)
        .await;
    Mock::given(method("PATCH"))
        .respond_with(one(200, js(&contact(1))))
        .mount(&h.server)
        .await;
    Mock::given(method("DELETE"))
        .respond_with(one(200, json!({"deleted": true})))
        .mount(&h.server)
        .await;
    Mock::given(method("GET"))
        .and(path(api("/contacts")))
        .and(query_param("pageSize", "500"))
        .respond_with(one(
            400,
            validation(&["pageSize must not be greater than 100"]),
        ))
        .mount(&h.server)
        .await;
    Mock::given(method("GET"))
        .and(path(api("/contacts")))
        .and(query_param("tag", "WIRE"))
        .respond_with(one(200, contact_list(vec![js(&contact(1))], 1, 20, 1)))
        .mount(&h.server)
        .await;

    let client: Client = h.client.clone();
    let created = client
        .create_contact(&CreateContact {
            full_name: Some("Over TCP".into()),
            ..Default::default()
        })
        .await
        .expect("create");
    assert_eq!(client.get_contact(created.id).await.expect("get"), created);
    let dup = client
        .create_contact(&CreateContact::default())
        .await
        .expect_err("duplicate phone");
    assert_eq!(dup.code(), Some(ErrorCode::ContactPhoneExists));
    client
        .update_contact(
            created.id,
            &UpdateContact {
                company: Some(Some("Acme".into())),
                ..Default::default()
            },
        )
        .await
        .expect("update");
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
    let anonymous = Client::new(format!("{}/api/v1", h.server.uri()), "wm_live_nope");
    assert!(anonymous.is_ok());
}
