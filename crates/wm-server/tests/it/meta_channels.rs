//! Instagram and Messenger customers through the real server and the fake Messenger
//! Platform (Meta's webhook shapes, signed): each person becomes one contact with their
//! scoped id and profile, one conversation on their channel, every message readable; agents
//! answer inside the window (sent once, DELIVERED then READ by watermark), a late human
//! reply goes tagged HUMAN_AGENT where the channel may, echoes of replies typed in Meta's
//! inbox appear once as the business's, and redelivered batches change nothing.

use axum::http::Method;
use serde_json::{Value, json};
use wm_fake_graph::{RawSignature, ReactionAction, Write, WriteKind};

use crate::meta_kit::{IG, IGSID, Meta, PAGE, PSID};
use crate::support::{IdOf, Org};

const DAY_MS: i64 = 86_400_000;

fn write(account: &str, scoped: &str, kind: WriteKind) -> Write {
    Write {
        account_id: account.into(),
        scoped_id: scoped.into(),
        mid: None,
        timestamp_ms: None,
        kind,
    }
}

async fn conversations(org: &Org<'_>, query: &str) -> Vec<Value> {
    org.get(&format!("/conversations?pageSize=100{query}"))
        .await
        .ok(200)["data"]
        .as_array()
        .unwrap()
        .clone()
}

async fn thread(org: &Org<'_>, conversation: &str) -> Vec<Value> {
    let mut m = org
        .get(&format!(
            "/conversations/{conversation}/messages?pageSize=100"
        ))
        .await
        .ok(200)["data"]
        .as_array()
        .unwrap()
        .clone();
    m.reverse();
    m
}

async fn reply(org: &Org<'_>, conversation: &str, text: &str) -> crate::support::Resp {
    org.post(
        &format!("/conversations/{conversation}/messages"),
        json!({"type": "TEXT", "text": {"body": text}}),
    )
    .await
}

#[tokio::test]
async fn a_messenger_customer_is_one_contact_and_conversation_answered_inside_the_window() {
    let meta = Meta::start(true).await;
    let org = meta.app.org().await;
    meta.connect(&org, true).await;

    let first = meta
        .write(Write::text(PAGE, PSID, "Hola, ¿tienen envío?"))
        .await;
    meta.write(write(
        PAGE,
        PSID,
        WriteKind::Attachment {
            kind: "image".into(),
            mime: "image/png".into(),
            bytes: [&b"\x89PNG\r\n\x1a\n"[..], &[7u8; 300][..]].concat(),
        },
    ))
    .await;
    meta.write(write(
        PAGE,
        PSID,
        WriteKind::QuickReply {
            text: "Sí".into(),
            payload: "SHIP_YES".into(),
        },
    ))
    .await;
    meta.write(write(
        PAGE,
        PSID,
        WriteKind::Reaction {
            mid: first.clone(),
            emoji: Some("❤️".into()),
            action: ReactionAction::React,
        },
    ))
    .await;

    // One contact, named by the profile read after they wrote, known by their PSID.
    let contacts = org.get("/contacts?pageSize=100").await.ok(200)["data"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(contacts.len(), 1, "{contacts:?}");
    let contact = org
        .get(&format!("/contacts/{}", contacts[0].id()))
        .await
        .ok(200);
    assert_eq!(contact["fullName"], "Peter Chang");
    let ids: Vec<(&str, &str)> = contact["identities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["channelType"].as_str().unwrap(),
                i["externalId"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(ids, vec![("SOCIAL_MSG_A", PSID)]);

    // One conversation on Messenger; every message readable as what it was.
    let list = conversations(&org, "&channelType=SOCIAL_MSG_A").await;
    assert_eq!(list.len(), 1);
    let c = list[0].id().to_owned();
    let m = thread(&org, &c).await;
    let kinds: Vec<&str> = m.iter().map(|m| m["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, vec!["TEXT", "IMAGE", "INTERACTIVE", "REACTION"]);
    assert_eq!(m[0]["text"], "Hola, ¿tienen envío?");
    assert_eq!(m[2]["interactive"]["replyId"], "SHIP_YES");
    assert_eq!(m[3]["reaction"]["messageId"], m[0]["id"]);
    assert_eq!(m[3]["reaction"]["emoji"], "❤️");
    // The picture was fetched from Meta's link into wm's store.
    let media = m[1]["media"]["id"].as_str().unwrap();
    let file = meta
        .app
        .call(
            Method::GET,
            &format!("/media/{media}"),
            Some(&org.key),
            None,
        )
        .await;
    assert_eq!(file.status, 200, "{:?}", file.body);

    // The window is open: the reply goes once, as a RESPONSE, and follows the watermarks.
    let sent = reply(&org, &c, "Sí, a todo México").await.ok(201);
    meta.send_replies().await;
    let sends = meta.fake.messenger_sends();
    assert_eq!(sends.len(), 1, "{sends:?}");
    assert_eq!(sends[0].recipient, PSID);
    assert_eq!(sends[0].messaging_type, "RESPONSE");
    assert_eq!(sends[0].message["text"], "Sí, a todo México");
    let status = |id: &str| {
        let org = &org;
        let id = id.to_owned();
        async move {
            thread(org, &c_of(org).await)
                .await
                .into_iter()
                .find(|m| m["id"] == id.as_str())
                .map(|m| m["status"].as_str().unwrap().to_owned())
        }
    };
    async fn c_of(org: &Org<'_>) -> String {
        conversations(org, "&channelType=SOCIAL_MSG_A").await[0]
            .id()
            .to_owned()
    }
    assert_eq!(status(sent.id()).await.as_deref(), Some("SENT"));
    let later = chrono::Utc::now().timestamp_millis() + 1_000;
    meta.fake
        .messenger_delivered(PAGE, PSID, later, None)
        .await
        .expect("delivery");
    meta.settle().await;
    assert_eq!(status(sent.id()).await.as_deref(), Some("DELIVERED"));
    meta.fake
        .messenger_read(PAGE, PSID, later)
        .await
        .expect("read");
    meta.settle().await;
    assert_eq!(status(sent.id()).await.as_deref(), Some("READ"));

    // A reply typed in Meta's own inbox shows once, as the business's.
    meta.fake
        .inbox_reply(PAGE, PSID, "Te escribo desde Meta")
        .await
        .expect("inbox reply");
    meta.settle().await;
    let m = thread(&org, &c).await;
    let echoed: Vec<&Value> = m
        .iter()
        .filter(|m| m["text"] == "Te escribo desde Meta")
        .collect();
    assert_eq!(echoed.len(), 1, "{m:?}");
    assert_eq!(echoed[0]["direction"], "OUTBOUND");
    // wm's own send echoed back is not a second message.
    assert_eq!(
        m.iter()
            .filter(|m| m["text"] == "Sí, a todo México")
            .count(),
        1
    );

    // The platform redelivers a batch: nothing changes.
    let before = thread(&org, &c).await.len();
    let log = meta.fake.webhook_log();
    for posted in log.iter().filter(|p| p.body.contains(r#""object":"page""#)) {
        let again = meta
            .fake
            .post_raw_messenger(
                wm_fake_graph::Platform::Messenger,
                posted.body.clone().into_bytes(),
                RawSignature::Sign,
            )
            .await
            .expect("redeliver");
        assert_eq!(again.last_status, Some(200));
    }
    meta.settle().await;
    assert_eq!(thread(&org, &c).await.len(), before);
    assert_eq!(conversations(&org, "").await.len(), 1);
    assert_eq!(
        meta.fake.messenger_sends().len(),
        2,
        "the reply and the inbox's"
    );
}

#[tokio::test]
async fn after_the_window_a_late_reply_goes_tagged_only_where_the_channel_may() {
    let meta = Meta::start(true).await;
    let org = meta.app.org().await;
    meta.connect(&org, true).await;
    let now = meta.app.state.now_ms();
    // Three days ago on Messenger (the Page may tag), and on Instagram (its channel may not).
    for (account, scoped) in [(PAGE, PSID), (IG, IGSID)] {
        let mut w = Write::text(account, scoped, "¿Siguen ahí?");
        w.timestamp_ms = Some(now - 3 * DAY_MS);
        meta.write(w).await;
    }
    let on = |kind: &'static str| {
        let org = &org;
        async move {
            conversations(org, &format!("&channelType={kind}")).await[0]
                .id()
                .to_owned()
        }
    };
    let messenger = on("SOCIAL_MSG_A").await;
    let instagram = on("SOCIAL_APP_A").await;

    reply(&org, &messenger, "Perdón la demora").await.ok(201);
    meta.send_replies().await;
    let sends = meta.fake.messenger_sends();
    assert_eq!(sends.len(), 1, "{sends:?}");
    assert_eq!(sends[0].messaging_type, "MESSAGE_TAG");
    assert_eq!(sends[0].tag.as_deref(), Some("HUMAN_AGENT"));

    // The Instagram channel was connected without humanAgent: refused before any call.
    reply(&org, &instagram, "Perdón la demora")
        .await
        .assert_error(400, Some("CONVERSATION_WINDOW_CLOSED"));
    meta.send_replies().await;
    assert_eq!(meta.fake.messenger_sends().len(), 1);

    // Past the tag's 7 days: refused on both.
    meta.app.clock.advance(chrono::Duration::days(5));
    reply(&org, &messenger, "¿Hola?")
        .await
        .assert_error(400, Some("CONVERSATION_WINDOW_CLOSED"));
    assert_eq!(meta.fake.messenger_sends().len(), 1);
}

#[tokio::test]
async fn an_instagram_customer_is_shown_by_username_with_story_replies_and_mentions() {
    let meta = Meta::start(false).await;
    let org = meta.app.org().await;
    meta.connect(&org, false).await;
    meta.write(Write::text(IG, IGSID, "Oi! Vi seu story")).await;
    meta.write(write(
        IG,
        IGSID,
        WriteKind::StoryReply {
            text: "Quero esse".into(),
            story_url: "https://lookaside.fbsbx.com/ig_messaging_cdn/?asset_id=1".into(),
            story_id: "18000000000000001".into(),
        },
    ))
    .await;
    meta.write(write(
        IG,
        IGSID,
        WriteKind::StoryMention {
            url: "https://lookaside.fbsbx.com/ig_messaging_cdn/?asset_id=2".into(),
        },
    ))
    .await;
    let contacts = org.get("/contacts?pageSize=100").await.ok(200)["data"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(contacts.len(), 1);
    let contact = org
        .get(&format!("/contacts/{}", contacts[0].id()))
        .await
        .ok(200);
    assert_eq!(contact["fullName"], "Lia Souza");
    let identity = &contact["identities"][0];
    assert_eq!(identity["channelType"], "SOCIAL_APP_A");
    assert_eq!(identity["externalId"], "lia.souza", "{identity}");
    assert_eq!(identity["scopedId"], IGSID);

    let c = conversations(&org, "&channelType=SOCIAL_APP_A").await;
    assert_eq!(c.len(), 1);
    assert_eq!(c[0]["channel"]["type"], "SOCIAL_APP_A");
    let m = thread(&org, c[0].id()).await;
    assert_eq!(m.len(), 3);
    assert_eq!(m[1]["story"]["kind"], "REPLY");
    assert_eq!(m[1]["text"], "Quero esse");
    assert_eq!(m[2]["type"], "STORY");
    assert_eq!(m[2]["story"]["kind"], "MENTION");

    // The answer goes to the scoped id, through the Page, and is seen by Instagram's `mid`.
    let sent = reply(&org, c[0].id(), "Claro! Qual tamanho?").await.ok(201);
    meta.send_replies().await;
    let sends = meta.fake.messenger_sends();
    assert_eq!(sends.len(), 1);
    assert_eq!(sends[0].recipient, IGSID);
    assert_eq!(sends[0].account_id, IG);
    let mid = sends[0].message_id.clone();
    meta.fake
        .instagram_seen(IG, IGSID, &mid)
        .await
        .expect("seen");
    meta.settle().await;
    let m = thread(&org, c[0].id()).await;
    let ours = m.iter().find(|m| m["id"] == sent["id"]).unwrap();
    assert_eq!(ours["status"], "READ");
    // Instagram takes at most 1000 bytes: refused before any call.
    let long = "ã".repeat(600);
    reply(&org, c[0].id(), &long)
        .await
        .assert_invalid("text.body must be at most 1000 bytes on this conversation's channel");
}

#[tokio::test]
async fn whatsapp_and_instagram_sit_side_by_side_in_one_inbox_filtered_by_channel() {
    let meta = Meta::start(false).await;
    let org = meta.app.org().await;
    meta.connect(&org, false).await;
    meta.write(Write::text(IG, IGSID, "Oi")).await;
    org.admin(
        Method::POST,
        "/inbound",
        Some(
            json!({"channelType": "MESSAGING_APP_A", "externalId": "5215512345678",
            "text": "Hola por WhatsApp"}),
        ),
    )
    .await
    .ok(200);
    let all = conversations(&org, "").await;
    let mut kinds: Vec<&str> = all
        .iter()
        .map(|c| c["channel"]["type"].as_str().unwrap())
        .collect();
    kinds.sort_unstable();
    assert_eq!(kinds, vec!["MESSAGING_APP_A", "SOCIAL_APP_A"]);
    let ig = conversations(&org, "&channelType=SOCIAL_APP_A").await;
    assert_eq!(ig.len(), 1);
    let by_channel = conversations(
        &org,
        &format!("&channelId={}", ig[0]["channelId"].as_str().unwrap()),
    )
    .await;
    assert_eq!(by_channel.len(), 1);
    assert_eq!(by_channel[0]["id"], ig[0]["id"]);
}

#[tokio::test]
async fn bad_signatures_unknown_accounts_and_refused_tokens_are_answered_clearly() {
    let meta = Meta::start(false).await;
    let org = meta.app.org().await;
    let (messenger, _) = meta.connect(&org, false).await;
    let body = br#"{"object":"page","entry":[{"id":"104000000000001","time":1,"messaging":[{"sender":{"id":"24000000000000001"},"recipient":{"id":"104000000000001"},"timestamp":1,"message":{"mid":"m_forged","text":"forged"}}]}]}"#;
    for signature in [
        RawSignature::Unsigned,
        RawSignature::Given("sha256=00".into()),
    ] {
        let posted = meta
            .fake
            .post_raw_messenger(wm_fake_graph::Platform::Messenger, body.to_vec(), signature)
            .await
            .expect("post");
        assert_eq!(posted.last_status, Some(401));
    }
    meta.settle().await;
    assert!(conversations(&org, "").await.is_empty());

    // A Page nobody connected: taken (200), kept for the operator, applied to no one.
    let stranger = br#"{"object":"page","entry":[{"id":"999","time":1,"messaging":[{"sender":{"id":"1"},"recipient":{"id":"999"},"timestamp":1,"message":{"mid":"m_x","text":"hi"}}]}]}"#;
    let posted = meta
        .fake
        .post_raw_messenger(
            wm_fake_graph::Platform::Messenger,
            stranger.to_vec(),
            RawSignature::Sign,
        )
        .await
        .expect("post");
    assert_eq!(posted.last_status, Some(200));
    meta.settle().await;
    assert!(conversations(&org, "").await.is_empty());
    let unapplied = meta
        .app
        .admin(Method::GET, "/platform/unapplied", None)
        .await
        .ok(200);
    assert!(
        unapplied["data"]
            .as_array()
            .unwrap()
            .iter()
            .any(|u| u["account"] == "999" && u["provider"] == "messenger"),
        "{unapplied}"
    );

    // The Page's token expires: the reply fails saying why, the channel shows it.
    meta.write(Write::text(PAGE, PSID, "Hola")).await;
    let c = conversations(&org, "").await[0].id().to_owned();
    meta.fake.expire_page_token(PAGE);
    let sent = reply(&org, &c, "Hola!").await.ok(201);
    meta.send_replies().await;
    let m = thread(&org, &c).await;
    let ours = m.iter().find(|m| m["id"] == sent["id"]).unwrap();
    assert_eq!(ours["status"], "FAILED");
    assert!(
        ours["errorMessage"].as_str().unwrap().contains("(#190)"),
        "{ours}"
    );
    let channels = org.admin(Method::GET, "/channels", None).await.ok(200);
    let ch = channels["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == messenger.as_str())
        .unwrap()
        .clone();
    assert_eq!(ch["status"], "TOKEN_INVALID");
    // A new token makes it ACTIVE again.
    let ch = org
        .admin(
            Method::PATCH,
            &format!("/channels/{messenger}"),
            Some(json!({"accessToken": "EAAP-new"})),
        )
        .await
        .ok(200);
    assert_eq!(ch["status"], "ACTIVE");
    assert!(ch.get("accessToken").is_none());
}

#[tokio::test]
async fn a_channel_is_instagram_automation_runs_for_instagram_people_only() {
    let meta = Meta::start(false).await;
    let org = meta.app.org().await;
    meta.connect(&org, false).await;
    meta.write(Write::text(IG, IGSID, "Oi")).await;
    meta.write(Write::text(PAGE, PSID, "Hola")).await;
    let seen = crate::automations::tag_customers_on(&meta.app, &org, "SOCIAL_APP_A").await;
    assert_eq!(
        seen,
        vec![
            ("SOCIAL_APP_A".to_owned(), true),
            ("SOCIAL_MSG_A".to_owned(), false)
        ]
    );
}
