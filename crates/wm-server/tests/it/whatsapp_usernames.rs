//! People who hide their phone behind a WhatsApp username, through the platform's own
//! webhook shapes (Meta's business-scoped user ids, BSUID, since April 2026) and a real
//! server: a username-only person is a contact with their BSUID and its messages one
//! conversation; a known person gains their BSUID beside their phone; `user_id_update` and
//! `user_changed_user_id` move it; replies, templates and campaigns to a BSUID go out with
//! the Send API's `recipient` and are settled by their statuses.

use serde_json::{Value, json};
use wm_fake_graph::{InboundKind, StatusOptions, UserSpec};

use crate::kit::top_up;
use crate::support::{IdOf, Org};
use crate::whatsapp_kit::{PNID, Wa, campaign, drive, number, synced_template};

const SHEENA: &str = "US.13491208655302741918";
const PARENT: &str = "US.ENT.11815799212886844830";

fn text(body: &str) -> InboundKind {
    InboundKind::Text { body: body.into() }
}

/// A username-only person the platform knows (no phone shared).
fn username_only(user_id: &str, username: &str) -> UserSpec {
    UserSpec {
        phone: None,
        user_id: user_id.into(),
        parent_user_id: Some(PARENT.into()),
        username: Some(username.into()),
        phone_shared: false,
    }
}

async fn contacts(org: &Org<'_>) -> Vec<Value> {
    org.get("/contacts?pageSize=100").await.ok(200)["data"]
        .as_array()
        .unwrap()
        .clone()
}

async fn conversations(org: &Org<'_>) -> Vec<Value> {
    org.get("/conversations?pageSize=100").await.ok(200)["data"]
        .as_array()
        .unwrap()
        .clone()
}

/// A contact's MESSAGING_APP_A identities, `(externalId, username)`, sorted.
async fn identities(org: &Org<'_>, id: &str) -> Vec<(String, Option<String>)> {
    let c = org.get(&format!("/contacts/{id}")).await.ok(200);
    let mut out: Vec<(String, Option<String>)> = c["identities"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["channelType"] == "MESSAGING_APP_A")
        .map(|i| {
            (
                i["externalId"].as_str().unwrap().to_owned(),
                i["username"].as_str().map(str::to_owned),
            )
        })
        .collect();
    out.sort();
    out
}

async fn write(wa: &Wa, from: &str, body: &str) {
    wa.write(from, text(body), None).await;
    wa.settle().await;
}

/// Sends the replies that are due (the reply worker's pass) and lets their statuses land.
async fn send_replies(wa: &Wa) {
    for _ in 0..3 {
        wm_server::services::replies::deliver::run_once(&wa.app.state)
            .await
            .unwrap();
        wa.settle().await;
    }
}

#[tokio::test]
async fn a_username_only_person_is_one_contact_with_one_conversation() {
    let wa = Wa::start(StatusOptions::default()).await;
    let org = wa.app.org().await;
    number(&org).await;
    wa.fake
        .register_user(username_only(SHEENA, "realsheenanelson"));
    write(&wa, SHEENA, "Does it come in another color?").await;
    write(&wa, SHEENA, "And in size M?").await;

    let all = contacts(&org).await;
    assert_eq!(all.len(), 1, "{all:?}");
    let c = &all[0];
    assert!(c["primaryPhone"].is_null(), "{c}");
    assert_eq!(c["fullName"], "Ana");
    assert_eq!(c["source"], "MESSAGING_APP_A_INBOUND");
    assert_eq!(
        identities(&org, c.id()).await,
        [(SHEENA.to_owned(), Some("realsheenanelson".to_owned()))]
    );
    // The parent id is kept with it.
    let parent = crate::support::query_n(
        &wa.app.state.db.conn,
        &format!(
            "SELECT COUNT(*) AS n FROM contact_identities WHERE external_id = '{SHEENA}' AND parent_id = '{PARENT}'"
        ),
    )
    .await;
    assert_eq!(parent, 1);
    let convs = conversations(&org).await;
    assert_eq!(convs.len(), 1, "{convs:?}");
    let thread = org
        .get(&format!("/conversations/{}/messages", convs[0].id()))
        .await
        .ok(200);
    let texts: Vec<&str> = thread["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["And in size M?", "Does it come in another color?"]);
}

#[tokio::test]
async fn a_known_person_gains_their_business_scoped_id_and_is_found_by_it() {
    let wa = Wa::start(StatusOptions::default()).await;
    let org = wa.app.org().await;
    number(&org).await;
    let c = org
        .contact(
            json!({"fullName": "Ana", "primaryPhone": "+16505551234", "consent": {"given": true}}),
        )
        .await;
    let id = c.id().to_owned();
    write(&wa, "16505551234", "Hola").await;
    let bsuid = wa.fake.user("16505551234").unwrap().user_id;
    assert_eq!(contacts(&org).await.len(), 1, "no second contact");
    assert_eq!(
        identities(&org, &id).await,
        [("16505551234".to_owned(), None), (bsuid.clone(), None)]
            .into_iter()
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect::<Vec<_>>()
    );
    // They adopt a username and the platform stops sharing their phone: their next message
    // names only the BSUID, and lands with the same contact and conversation.
    wa.fake.register_user(UserSpec {
        phone: Some("16505551234".into()),
        user_id: bsuid.clone(),
        parent_user_id: None,
        username: Some("ana.g".into()),
        phone_shared: false,
    });
    write(&wa, &bsuid, "Soy yo otra vez").await;
    assert_eq!(contacts(&org).await.len(), 1);
    let convs = conversations(&org).await;
    assert_eq!(convs.len(), 1, "{convs:?}");
    assert_eq!(convs[0]["contactId"], id.as_str());
    // The username they now show is kept with the id.
    let shown = identities(&org, &id).await;
    assert!(
        shown.contains(&(bsuid.clone(), Some("ana.g".to_owned()))),
        "{shown:?}"
    );
}

#[tokio::test]
async fn user_id_updates_and_user_id_changes_move_the_id_without_a_second_contact() {
    let wa = Wa::start(StatusOptions::default()).await;
    let org = wa.app.org().await;
    number(&org).await;
    wa.fake
        .register_user(username_only(SHEENA, "realsheenanelson"));
    write(&wa, SHEENA, "Hola").await;
    let id = contacts(&org).await[0].id().to_owned();

    // `user_id_update`: the id moves.
    let second = "US.22222222222222222222";
    let posted = wa
        .fake
        .post_user_id_update(PNID, SHEENA, second)
        .await
        .unwrap();
    assert_eq!(posted.last_status, Some(200));
    wa.settle().await;
    assert_eq!(identities(&org, &id).await[0].0, second);
    write(&wa, second, "¿Me recuerdas?").await;
    assert_eq!(contacts(&org).await.len(), 1);

    // A `user_changed_user_id` system message: it moves again.
    let third = "US.33333333333333333333";
    wa.fake
        .post_user_changed_user_id(PNID, second, third)
        .await
        .unwrap();
    wa.settle().await;
    assert_eq!(identities(&org, &id).await[0].0, third);
    write(&wa, third, "Sigo aquí").await;
    assert_eq!(contacts(&org).await.len(), 1);
    let convs = conversations(&org).await;
    assert_eq!(convs.len(), 1, "{convs:?}");
    let thread = org
        .get(&format!("/conversations/{}/messages", convs[0].id()))
        .await
        .ok(200);
    assert_eq!(thread["data"].as_array().unwrap().len(), 3);
}

#[tokio::test]
async fn a_reply_to_a_business_scoped_id_goes_out_with_recipient_and_is_settled() {
    let wa = Wa::start(StatusOptions {
        read: true,
        ..StatusOptions::default()
    })
    .await;
    let org = wa.app.org().await;
    number(&org).await;
    wa.fake
        .register_user(username_only(SHEENA, "realsheenanelson"));
    write(&wa, SHEENA, "¿Tienen envío?").await;
    let c = conversations(&org).await[0].id().to_owned();
    let sent = org
        .post(
            &format!("/conversations/{c}/messages"),
            json!({"type": "TEXT", "text": {"body": "Sí, a todo el país"}}),
        )
        .await
        .ok(201);
    send_replies(&wa).await;
    let accepted = wa.fake.accepted();
    assert_eq!(accepted.len(), 1, "sent once");
    assert!(accepted[0].by_user_id, "{:?}", accepted[0]);
    assert_eq!(accepted[0].to, SHEENA);
    let thread = org
        .get(&format!("/conversations/{c}/messages"))
        .await
        .ok(200);
    let reply = thread["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["id"] == sent["id"])
        .cloned()
        .unwrap();
    assert_eq!(reply["status"], "READ", "settled by its statuses: {reply}");

    // An authentication template cannot go to a BSUID: refused before any call or charge.
    wa.fake.register_template(wm_fake_graph::TemplateSpec {
        waba_id: crate::whatsapp_kit::WABA.into(),
        name: "codigo".into(),
        language: "es_MX".into(),
        category: "AUTHENTICATION".into(),
        status: wm_fake_graph::TemplateStatus::Approved,
        body_text: "Tu código".into(),
    });
    let tpl = synced_template(&org, "codigo").await;
    top_up(&org, 10.0).await;
    let r = org
        .post(
            &format!("/conversations/{c}/messages"),
            json!({"type": "TEMPLATE", "template": {"templateId": tpl}}),
        )
        .await;
    r.assert_error(400, None);
    assert!(
        r.body["message"].as_str().unwrap().contains("131062"),
        "{}",
        r.body
    );
    assert_eq!(wa.fake.accepted_count(), 1);
    assert_eq!(
        org.get("/wallet").await.ok(200)["balance"],
        10.0,
        "nothing charged"
    );
}

#[tokio::test]
async fn a_campaign_reaches_a_business_scoped_id_priced_by_its_country() {
    let wa = Wa::start(StatusOptions::default()).await;
    wa.template("promo", "Hola {{1}}");
    let org = wa.app.org().await;
    let number_id = number(&org).await;
    let brazilian = "BR.1502576394655843";
    wa.fake.register_user(username_only(brazilian, "joao"));
    write(&wa, brazilian, "Oi").await;
    let id = contacts(&org).await[0].id().to_owned();
    org.patch(
        &format!("/contacts/{id}"),
        json!({"consent": {"given": true, "how": "MESSAGING_APP_A_REPLY"}}),
    )
    .await
    .ok(200);
    let tpl = synced_template(&org, "promo").await;
    top_up(&org, 10.0).await;
    let campaign_id = campaign(&org, &number_id, &tpl, std::slice::from_ref(&id)).await;
    let preview = org
        .get(&format!("/campaigns/{campaign_id}/preview-cost"))
        .await
        .ok(200);
    assert_eq!(preview["byMarket"][0]["market"], "BR", "{preview}");
    org.post(&format!("/campaigns/{campaign_id}/send"), json!({}))
        .await
        .ok(200);
    let done = drive(&wa, &org, &campaign_id, 5).await;
    assert_eq!(done["stats"]["delivered"], 1, "{done}");
    let accepted = wa.fake.accepted();
    assert_eq!(accepted.len(), 1);
    assert!(accepted[0].by_user_id);
    assert_eq!(accepted[0].to, brazilian);
    // Listed under the contact, who has no phone, with the market of their country.
    let recipients = org
        .get(&format!("/campaigns/{campaign_id}/recipients"))
        .await
        .ok(200);
    let r = &recipients["data"][0];
    assert_eq!(
        (r["market"].as_str(), &r["contact"]["primaryPhone"]),
        (Some("BR"), &Value::Null)
    );
}
