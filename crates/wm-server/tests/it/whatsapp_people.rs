//! The people behind WhatsApp ids, through the platform's own webhook shapes: a number
//! spelled the old way (Mexico's `521`, Brazil's ninth digit) is still the contact it was
//! stored as, a person's "stop" and "resume" follow their marketing consent, a message of
//! any kind from a stranger opens a conversation, and a number change moves the contact.

use serde_json::{Value, json};
use wm_fake_graph::{InboundKind, StatusOptions};

use crate::events::subscribe_all;
use crate::kit::top_up;
use crate::support::{IdOf, Org};
use crate::whatsapp_kit::{PNID, Wa, campaign, drive, number, synced_template};

/// A consenting contact with `phone`, as the business stored it; its id.
async fn person(org: &Org<'_>, phone: &str) -> String {
    let c = org
        .contact(json!({"fullName": "Ana", "primaryPhone": phone, "consent": {"given": true}}))
        .await;
    c.id().to_owned()
}

/// A campaign to `contact`, sent and delivered; its id and the platform's message id.
async fn delivered_to(wa: &Wa, org: &Org<'_>, contact: &str) -> (String, String) {
    wa.template("promo", "Hola {{1}}");
    let number_id = number(org).await;
    let tpl = synced_template(org, "promo").await;
    top_up(org, 10.0).await;
    let id = campaign(org, &number_id, &tpl, &[contact.to_owned()]).await;
    org.post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .ok(200);
    let c = drive(wa, org, &id, 5).await;
    assert_eq!(c["stats"]["delivered"], 1, "{c}");
    let wamid = wa.fake.accepted().remove(0).wamid;
    (id, wamid)
}

/// The person writes from `from`, quoting `quoted` when given; applied.
async fn write(wa: &Wa, from: &str, kind: InboundKind, quoted: Option<&str>) {
    wa.write(from, kind, quoted).await;
    wa.settle().await;
}

fn text(body: &str) -> InboundKind {
    InboundKind::Text { body: body.into() }
}

/// The organisation's contacts (one page).
async fn contacts(org: &Org<'_>) -> Vec<Value> {
    org.get("/contacts?pageSize=100").await.ok(200)["data"]
        .as_array()
        .unwrap()
        .clone()
}

/// The WhatsApp ids of a contact.
async fn whatsapp_ids(org: &Org<'_>, id: &str) -> Vec<String> {
    let c = org.get(&format!("/contacts/{id}")).await.ok(200);
    c["identities"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["channelType"] == "MESSAGING_APP_A")
        .map(|i| i["externalId"].as_str().unwrap().to_owned())
        .collect()
}

/// A contact's timeline entries of one type.
async fn timeline_of(org: &Org<'_>, id: &str, kind: &str) -> Vec<Value> {
    let timeline = org.get(&format!("/contacts/{id}/timeline")).await.ok(200);
    timeline["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == kind)
        .cloned()
        .collect()
}

/// The organisation's conversations, with the contact of each.
async fn conversation_contacts(org: &Org<'_>) -> Vec<String> {
    org.get("/conversations").await.ok(200)["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["contactId"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn a_mexican_reply_from_the_521_spelling_is_the_stored_contact_and_credits_the_message() {
    let wa = Wa::start(StatusOptions::default()).await;
    let org = wa.app.org().await;
    // Stored as the person gives it today; their WhatsApp account predates the change.
    let id = person(&org, "+52 55 5978 4978").await;
    wa.fake.register_wa_id("+525559784978", "5215559784978");
    let (campaign, wamid) = delivered_to(&wa, &org, &id).await;
    // The send's answer named the account: remembered, the stored number kept.
    let ids = whatsapp_ids(&org, &id).await;
    assert!(ids.contains(&"5215559784978".to_owned()), "{ids:?}");
    write(&wa, "5215559784978", text("Me interesa"), Some(&wamid)).await;
    let all = contacts(&org).await;
    assert_eq!(all.len(), 1, "no second contact: {all:?}");
    assert_eq!(all[0]["primaryPhone"], "+525559784978");
    assert_eq!(conversation_contacts(&org).await, std::slice::from_ref(&id));
    let c = org.get(&format!("/campaigns/{campaign}")).await.ok(200);
    assert_eq!(c["stats"]["replied"], 1, "{c}");
    let r = org
        .get(&format!("/campaigns/{campaign}/recipients?filter=replied"))
        .await
        .ok(200);
    assert_eq!(r["data"][0]["contact"]["id"], id.as_str(), "{r}");
}

#[tokio::test]
async fn a_brazilian_reply_without_the_ninth_digit_is_the_stored_contact() {
    let wa = Wa::start(StatusOptions::default()).await;
    let org = wa.app.org().await;
    let id = person(&org, "+55 31 98765-4321").await;
    let (campaign, wamid) = delivered_to(&wa, &org, &id).await;
    // The account is the 8-digit one: nothing tells wm before the person writes.
    write(&wa, "553187654321", text("Quero o catálogo"), Some(&wamid)).await;
    let all = contacts(&org).await;
    assert_eq!(all.len(), 1, "no second contact: {all:?}");
    assert_eq!(all[0]["primaryPhone"], "+5531987654321");
    assert_eq!(conversation_contacts(&org).await, std::slice::from_ref(&id));
    let c = org.get(&format!("/campaigns/{campaign}")).await.ok(200);
    assert_eq!(c["stats"]["replied"], 1, "{c}");
    assert!(
        whatsapp_ids(&org, &id)
            .await
            .contains(&"553187654321".to_owned())
    );
    // The next message finds them by that id; still one contact, one conversation.
    write(&wa, "553187654321", text("Obrigada"), None).await;
    assert_eq!(contacts(&org).await.len(), 1);
    assert_eq!(conversation_contacts(&org).await, [id]);
}

#[tokio::test]
async fn a_reply_quoting_a_message_credits_it_whoever_the_sender_resolves_to() {
    let wa = Wa::start(StatusOptions::default()).await;
    let org = wa.app.org().await;
    let id = person(&org, "+5215512000001").await;
    let (campaign, wamid) = delivered_to(&wa, &org, &id).await;
    // Forwarded to a colleague, who answers quoting it from their own number.
    write(&wa, "16505551234", text("Interested"), Some(&wamid)).await;
    assert_eq!(contacts(&org).await.len(), 2);
    let c = org.get(&format!("/campaigns/{campaign}")).await.ok(200);
    assert_eq!(c["stats"]["replied"], 1, "{c}");
}

#[tokio::test]
async fn the_persons_stop_and_resume_follow_their_marketing_consent() {
    let wa = Wa::start(StatusOptions::default()).await;
    let org = wa.app.org().await;
    number(&org).await;
    subscribe_all(&org).await;
    let id = person(&org, "+52 55 5978 4978").await;
    let before = org.events().await.len();
    // They stop marketing from the chat, under their old-spelling WhatsApp id.
    let posted = wa
        .fake
        .post_user_preference(PNID, "5215559784978", "stop")
        .await
        .unwrap();
    assert_eq!(posted.last_status, Some(200));
    wa.settle().await;
    let c = org.get(&format!("/contacts/{id}")).await.ok(200);
    assert_eq!(c["optedOut"], true, "{c}");
    let events = org.events().await;
    assert_eq!(events.len(), before + 1, "{events:?}");
    assert_eq!(events[before].0, "contact.updated");
    assert_eq!(events[before].1["changedFields"], json!(["optedOut"]));
    let consent = timeline_of(&org, &id, "consent").await;
    assert_eq!(consent.len(), 1, "{consent:?}");
    assert_eq!(consent[0]["optedOut"], true);
    // A redelivered stop changes nothing more; a resume gives it back.
    wa.fake
        .post_user_preference(PNID, "5215559784978", "stop")
        .await
        .unwrap();
    wa.settle().await;
    assert_eq!(org.events().await.len(), before + 1);
    wa.fake
        .post_user_preference(PNID, "5215559784978", "resume")
        .await
        .unwrap();
    wa.settle().await;
    let c = org.get(&format!("/contacts/{id}")).await.ok(200);
    assert_eq!(c["optedOut"], false, "{c}");
    let events = org.events().await;
    assert_eq!(events.len(), before + 2);
    assert_eq!(events[before + 1].1["changedFields"], json!(["optedOut"]));
    // A stranger's stop creates nobody.
    wa.fake
        .post_user_preference(PNID, "16505550000", "stop")
        .await
        .unwrap();
    wa.settle().await;
    assert_eq!(contacts(&org).await.len(), 1);
}

#[tokio::test]
async fn an_unsupported_message_from_a_stranger_opens_their_conversation() {
    let wa = Wa::start(StatusOptions::default()).await;
    let org = wa.app.org().await;
    number(&org).await;
    write(&wa, "16505551234", InboundKind::Unsupported, None).await;
    let all = contacts(&org).await;
    assert_eq!(all.len(), 1, "{all:?}");
    assert_eq!(all[0]["primaryPhone"], "+16505551234");
    assert_eq!(all[0]["source"], "MESSAGING_APP_A_INBOUND");
    let id = all[0].id().to_owned();
    assert_eq!(conversation_contacts(&org).await, [id]);
}

#[tokio::test]
async fn a_number_change_moves_the_contacts_whatsapp_identity_and_phone() {
    let wa = Wa::start(StatusOptions::default()).await;
    let org = wa.app.org().await;
    number(&org).await;
    subscribe_all(&org).await;
    let id = person(&org, "+16505551234").await;
    let before = org.events().await.len();
    let posted = wa
        .fake
        .post_number_change(PNID, "16505551234", "16505559999")
        .await
        .unwrap();
    assert_eq!(posted.last_status, Some(200));
    wa.settle().await;
    let c = org.get(&format!("/contacts/{id}")).await.ok(200);
    assert_eq!(c["primaryPhone"], "+16505559999", "{c}");
    // The new number comes with the new business-scoped user id Meta makes for it.
    let new_user_id = wa.fake.user("16505559999").unwrap().user_id;
    let mut ids = whatsapp_ids(&org, &id).await;
    ids.sort();
    let mut want = vec!["16505559999".to_owned(), new_user_id];
    want.sort();
    assert_eq!(ids, want);
    let phone = timeline_of(&org, &id, "phone").await;
    assert_eq!(phone.len(), 1, "{phone:?}");
    let phone = &phone[0];
    assert_eq!(phone["from"], "+16505551234");
    assert_eq!(phone["to"], "+16505559999");
    let events = org.events().await;
    assert_eq!(events.len(), before + 1, "{events:?}");
    assert_eq!(events[before].1["changedFields"], json!(["primaryPhone"]));
    // Their next message, from the new number, is theirs.
    write(&wa, "16505559999", text("Hi, new number"), None).await;
    assert_eq!(contacts(&org).await.len(), 1);
    assert_eq!(conversation_contacts(&org).await, [id]);
}
