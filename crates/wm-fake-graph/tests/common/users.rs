//! BSUID helpers shared by `tests/users.rs` and `tests/user_changes.rs`: Meta's
//! username-only example user, and readers for the webhooks the receiver got.

use serde_json::{Value, json};
use wm_fake_graph::{FakeGraph, StatusOptions, UserSpec};

use super::*;

pub const SHEENA: &str = "US.13491208655302741918";
pub const SHEENA_PARENT: &str = "US.ENT.11815799212886844830";
pub const SHEENA_PHONE: &str = "16505550101";

/// Meta's username-only user: a username, a parent BSUID and a phone the business may
/// not see.
pub fn sheena() -> UserSpec {
    UserSpec {
        phone: Some(SHEENA_PHONE.into()),
        user_id: SHEENA.into(),
        parent_user_id: Some(SHEENA_PARENT.into()),
        username: Some("realsheenanelson".into()),
        phone_shared: false,
    }
}

pub fn quiet() -> StatusOptions {
    StatusOptions {
        enabled: false,
        ..StatusOptions::default()
    }
}

pub fn with_read() -> StatusOptions {
    StatusOptions {
        read: true,
        ..StatusOptions::default()
    }
}

/// The `value` and `field` of every webhook received so far.
pub fn changes(rx: &Receiver) -> Vec<(String, Value)> {
    rx.received()
        .iter()
        .map(|r| {
            let j = r.json();
            let c = &j["entry"][0]["changes"][0];
            (c["field"].as_str().unwrap().to_owned(), c["value"].clone())
        })
        .collect()
}

/// The values of the webhooks carrying statuses of `wamid`, in arrival order.
pub async fn status_values(fake: &FakeGraph, rx: &Receiver, n: usize) -> Vec<Value> {
    rx.wait_for(n, Duration::from_secs(5)).await;
    assert!(fake.wait_webhooks_idle(Duration::from_secs(5)).await);
    let mut v: Vec<Value> = changes(rx)
        .into_iter()
        .map(|(_, v)| v)
        .filter(|v| v["statuses"].is_array())
        .collect();
    let order = |v: &Value| match v["statuses"][0]["status"].as_str() {
        Some("sent") => 0,
        Some("delivered") => 1,
        Some("read") => 2,
        _ => 3,
    };
    v.sort_by_key(order);
    v
}

pub fn text_to(key: &str, to: &str, body: &str) -> Value {
    let mut b = json!({
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "type": "text",
        "text": { "body": body },
    });
    b[key] = json!(to);
    b
}

pub fn template_to_recipient(recipient: &str, name: &str) -> Value {
    let mut b = template_body("16505550000", name, &[]);
    let o = b.as_object_mut().unwrap();
    o.remove("to");
    o.insert("recipient".into(), json!(recipient));
    b
}
