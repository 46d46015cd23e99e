//! The webhook parser on Meta's own documented payloads (the messages, statuses, system
//! and user-preference examples of the webhook reference, usernames and business-scoped
//! ids), and the signature and handshake checks.

use super::*;
use crate::provider::meta_hub::{verify_signature, verify_token_matches};
use wm_core::platform::{InboundMessage as Received, Person};

const SECRET: &str = "app-secret";

/// The status example of the messages webhook reference, with a failure.
const DOCUMENTED_FAILED: &str = r#"{"object":"whatsapp_business_account","entry":[{"id":"102290129340398","changes":[{"value":{"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550783881","phone_number_id":"106540352242922"},"statuses":[{"id":"wamid.HBgLMTY0Njc=","status":"failed","timestamp":"1750263773","recipient_id":"16462665656","biz_opaque_callback_data":"c-9","errors":[{"code":131049,"title":"This message was not delivered to maintain healthy ecosystem engagement.","message":"This message was not delivered to maintain healthy ecosystem engagement.","error_data":{"details":"In order to maintain a healthy ecosystem engagement, the message failed to be delivered."},"href":"https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes/"}]},{"id":"wamid.X","status":"deleted","timestamp":"1750263774","recipient_id":"1"},{"id":"wamid.Y","status":"warning","timestamp":"1750263774","recipient_id":"1"}]},"field":"messages"}]}]}"#;

#[test]
fn documented_failed_status() {
    let events = parse(DOCUMENTED_FAILED.as_bytes()).unwrap();
    assert_eq!(events.len(), 3, "{events:?}");
    // `deleted` and `warning` are no step of the funnel: kept as not applied, never lost.
    for e in &events[1..] {
        assert!(
            matches!(e, PlatformEvent::Unapplied(u) if u.reason == "status not handled"
                && u.account.as_deref() == Some("106540352242922")),
            "{e:?}"
        );
    }
    let PlatformEvent::Status { update, code, .. } = &events[0] else {
        panic!()
    };
    assert_eq!(*code, Some(131049));
    assert_eq!(update.at_ms, Some(1_750_263_773_000));
    assert_eq!(update.correlation_id.as_deref(), Some("c-9"));
    assert!(!update.opt_out);
    assert_eq!(
        update.error.as_deref(),
        Some(
            "(#131049) This message was not delivered to maintain healthy ecosystem engagement.: In order to maintain a healthy ecosystem engagement, the message failed to be delivered."
        )
    );
}

#[test]
fn documented_inbound_text_and_unknowns() {
    let body = r#"{"object":"whatsapp_business_account","entry":[{"id":"8856996819413533","changes":[
      {"value":{"messaging_product":"whatsapp","metadata":{"display_phone_number":"16505553333","phone_number_id":"27681414235104944"},
        "contacts":[{"profile":{"name":"Kerry Fisher"},"wa_id":"16315551234"}],
        "messages":[{"from":"16315551234","id":"wamid.ABGGFlCGg0cvAgo-sJQh43L5Pe4W","timestamp":"1603059201","text":{"body":"Hello this is an answer"},"type":"text","new_field":1},
          {"from":"16315551234","id":"wamid.2","timestamp":"1603059202","type":"image","image":{"caption":"see\u0000this","mime_type":"image/jpeg","id":"m1"}},
          {"from":"16315551234","id":"wamid.3","timestamp":"1603059203","type":"unsupported","errors":[{"code":131051}]},
          {"from":"16315551234","id":"wamid.4","type":"some_future_type"}]},"field":"messages"},
      {"value":{"anything":true},"field":"account_update"},
      {"value":{"event":"APPROVED","message_template_id":1,"message_template_name":"t","message_template_language":"en_US","reason":"NONE"},"field":"message_template_status_update"},
      {"value":{"display_phone_number":"16505553333","event":"UPGRADE","current_limit":"TIER_10K"},"field":"phone_number_quality_update"}
    ]}]}"#;
    let events = parse(body.as_bytes()).unwrap();
    assert_eq!(events.len(), 7, "{events:?}");
    assert_eq!(
        events[0],
        PlatformEvent::Inbound(Box::new(Received {
            account: "27681414235104944".into(),
            message_id: "wamid.ABGGFlCGg0cvAgo-sJQh43L5Pe4W".into(),
            from: Person {
                name: Some("Kerry Fisher".into()),
                ..Person::by_phone("16315551234")
            },
            at_ms: Some(1_603_059_201_000),
            content: Content {
                text: Some("Hello this is an answer".into()),
                ..Content::of(MessageType::Text, "text")
            },
            context_id: None,
        }))
    );
    let PlatformEvent::Inbound(m) = &events[1] else {
        panic!()
    };
    let content = &m.content;
    assert_eq!(
        (content.kind, content.text.as_deref()),
        (MessageType::Image, Some("see\u{FFFD}this"))
    );
    assert_eq!(
        content
            .media
            .as_ref()
            .map(|m| (m.platform_id.as_str(), m.mime_type.as_deref())),
        Some(("m1", Some("image/jpeg")))
    );
    // An unsupported message and a type added later are still someone writing.
    for (event, (want_id, want_kind)) in events[2..4]
        .iter()
        .zip([("wamid.3", "unsupported"), ("wamid.4", "some_future_type")])
    {
        let PlatformEvent::Inbound(m) = event else {
            panic!("{event:?}")
        };
        let Received {
            message_id,
            content,
            from,
            ..
        } = m.as_ref();
        assert_eq!(
            (
                message_id.as_str(),
                content.kind,
                content.platform_type.as_str(),
                &content.text,
                from.phone.as_deref().unwrap_or_default()
            ),
            (
                want_id,
                MessageType::Unsupported,
                want_kind,
                &None,
                "16315551234"
            )
        );
    }
    // A field wm does not read is kept as not applied, whole.
    assert!(
        matches!(&events[4], PlatformEvent::Unapplied(u) if u.reason == "field not handled"
            && u.part.contains("account_update")),
        "{:?}",
        events[4]
    );
    assert!(
        matches!(&events[5], PlatformEvent::TemplateStatus { status, reason: None, .. } if status == "APPROVED")
    );
    assert!(
        matches!(&events[6], PlatformEvent::Quality { rating: None, event, .. } if event == "UPGRADE")
    );
}

/// Meta's system-message reference (`user_changed_number`, no `contacts`), and the older
/// `customer_changed_number` with `new_wa_id`; an identity change is kept as not applied.
#[test]
fn documented_number_changes() {
    let body = r#"{"object":"whatsapp_business_account","entry":[{"id":"102290129340398","changes":[{"value":{"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550783881","phone_number_id":"106540352242922"},
      "messages":[
        {"from":"16505551234","id":"wamid.S1","timestamp":"1739321024","type":"system","system":{"body":"User Sheena Nelson changed from 16505551234 to 16505559999","wa_id":"16505559999","type":"user_changed_number"}},
        {"from":"16505551234","id":"wamid.S2","timestamp":"1739321025","type":"system","system":{"body":"changed","new_wa_id":"16505558888","type":"customer_changed_number"}},
        {"from":"16505551234","id":"wamid.S3","timestamp":"1739321026","type":"system","system":{"body":"identity changed","identity":"abc","customer":"16505551234","type":"customer_identity_changed"}}
      ]},"field":"messages"}]}]}"#;
    let events = parse(body.as_bytes()).unwrap();
    let changed = |id: &str, to: &str| PlatformEvent::NumberChanged {
        account: "106540352242922".into(),
        message_id: id.into(),
        from: Person::by_phone("16505551234"),
        to: to.into(),
        user_id: None,
    };
    assert_eq!(
        events[..2],
        [
            changed("wamid.S1", "16505559999"),
            changed("wamid.S2", "16505558888")
        ]
    );
    assert!(
        matches!(&events[2], PlatformEvent::Unapplied(u) if u.reason == "system message not handled"),
        "{:?}",
        events[2]
    );
}

/// Meta's `user_preferences` reference: marketing messages stopped and resumed.
#[test]
fn documented_user_preferences() {
    let body = r#"{"object":"whatsapp_business_account","entry":[{"id":"102290129340398","changes":[{"value":{"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550783881","phone_number_id":"106540352242922"},
      "contacts":[{"profile":{"name":"Sheena Nelson"},"wa_id":"16505551234"}],
      "user_preferences":[
        {"wa_id":"16505551234","detail":"User requested to stop marketing messages","category":"marketing_messages","value":"stop","timestamp":1731705721},
        {"wa_id":"16505551234","detail":"User requested to resume marketing messages","category":"marketing_messages","value":"resume","timestamp":1731705722},
        {"wa_id":"16505551234","category":"something_else","value":"stop","timestamp":1731705723}
      ]},"field":"user_preferences"}]}]}"#;
    let events = parse(body.as_bytes()).unwrap();
    let pref = |stop| PlatformEvent::Preference {
        account: "106540352242922".into(),
        person: Person::by_phone("16505551234"),
        stop,
    };
    assert_eq!(events[..2], [pref(true), pref(false)]);
    assert!(
        matches!(&events[2], PlatformEvent::Unapplied(u) if u.reason == "preference not handled"),
        "{:?}",
        events[2]
    );
}

#[test]
fn only_a_body_that_is_not_the_envelope_is_an_error() {
    for bad in [
        "",
        "[]",
        "{}",
        r#"{"object":"page","entry":[]}"#,
        r#"{"object":"whatsapp_business_account"}"#,
    ] {
        assert!(parse(bad.as_bytes()).is_err(), "{bad}");
    }
    let empty = r#"{"object":"whatsapp_business_account","entry":[{"id":"1"},{"changes":[{"field":"messages"}]}]}"#;
    let events = parse(empty.as_bytes()).unwrap();
    assert!(
        matches!(&events[..], [PlatformEvent::Unapplied(u)] if u.reason == "change without a value"),
        "{events:?}"
    );
}

#[test]
fn signatures() {
    let body = br#"{"object":"whatsapp_business_account","entry":[]}"#;
    let good = wm_fake_graph::sign(SECRET, body);
    assert!(verify_signature(SECRET, Some(&good), body));
    assert!(!verify_signature(SECRET, Some(&good), b"{}"));
    assert!(!verify_signature("other", Some(&good), body));
    assert!(!verify_signature(
        "",
        Some(&wm_fake_graph::sign("", body)),
        body
    ));
    assert!(!verify_signature(SECRET, None, body));
    for bad in [
        "",
        "sha256=",
        "sha256=zz",
        "sha1=00",
        &good[7..],
        &good[..good.len() - 2],
    ] {
        assert!(!verify_signature(SECRET, Some(bad), body), "{bad}");
    }
}

#[test]
fn verify_tokens() {
    assert!(verify_token_matches("tok-123", "tok-123"));
    assert!(!verify_token_matches("tok-123", "tok-124"));
    assert!(!verify_token_matches("tok-123", "tok-1234"));
    assert!(!verify_token_matches("", ""));
}

/// The inbound examples of Meta's messages webhook reference (location, contacts, a
/// document, a sticker, a reaction, a list reply, a quick-reply button, an order), trimmed to
/// one envelope.
#[test]
fn documented_inbound_kinds() {
    let body = r#"{"object":"whatsapp_business_account","entry":[{"id":"102290129340398","changes":[{"field":"messages","value":{"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550783881","phone_number_id":"106540352242922"},
      "contacts":[{"profile":{"name":"Sheena Nelson"},"wa_id":"16505551234"}],
      "messages":[
        {"from":"16505551234","id":"wamid.L","timestamp":"1749416383","type":"location","location":{"address":"1 Hacker Way, Menlo Park, CA 94025","latitude":37.483253479003906,"longitude":-122.14960479736328,"name":"Main Campus","url":"https://www.meta.com"}},
        {"from":"16505551234","id":"wamid.C","timestamp":"1749416383","type":"contacts","contacts":[{"name":{"first_name":"Jessica","formatted_name":"Jessica Laverdetman"},"phones":[{"phone":"+1 (650) 555-1234","type":"MOBILE","wa_id":"16505551234"}]}]},
        {"from":"16505551234","id":"wamid.D","timestamp":"1749416383","type":"document","document":{"caption":"Lucky Shrub Invoice","filename":"lucky-shrub-invoice.pdf","mime_type":"application/pdf","sha256":"JfFdcc8pRo6jCJ8nd2KyBZGz4YgXlk4sY2SEgudyF+4=","id":"1003383421387256"}},
        {"from":"16505551234","id":"wamid.S","timestamp":"1749416383","type":"sticker","sticker":{"mime_type":"image/webp","sha256":"Y2k4=","id":"1003383421387257","animated":false}},
        {"from":"16505551234","id":"wamid.R","timestamp":"1749416383","type":"reaction","reaction":{"message_id":"wamid.OUT","emoji":"\ud83d\udc4d"}},
        {"context":{"from":"15550783881","id":"wamid.OUT"},"from":"16505551234","id":"wamid.I","timestamp":"1749416383","type":"interactive","interactive":{"type":"list_reply","list_reply":{"id":"priority_express","title":"Express Shipping","description":"Next Day to 2 Days"}}},
        {"context":{"from":"15550783881","id":"wamid.OUT"},"from":"16505551234","id":"wamid.B","timestamp":"1749416383","type":"button","button":{"payload":"Unsubscribe","text":"Unsubscribe from promos"}},
        {"from":"16505551234","id":"wamid.O","timestamp":"1749416383","type":"order","order":{"catalog_id":"194836987003835","text":"Three of these, please","product_items":[{"product_retailer_id":"di9ozbzfi4","quantity":3,"item_price":30,"currency":"USD"}]}}
      ]}}]}]}"#;
    let events = parse(body.as_bytes()).unwrap();
    let contents: Vec<&Content> = events
        .iter()
        .map(|e| match e {
            PlatformEvent::Inbound(m) => &m.content,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(contents.len(), 8);
    let l = contents[0].location.as_ref().unwrap();
    assert_eq!(
        (l.latitude, l.longitude, l.name.as_deref()),
        (37.483253479003906, -122.14960479736328, Some("Main Campus"))
    );
    assert_eq!(contents[1].kind, MessageType::Contacts);
    assert_eq!(contents[1].contacts.as_ref().map(Vec::len), Some(1));
    let d = contents[2].media.as_ref().unwrap();
    assert_eq!(
        (
            contents[2].kind,
            d.platform_id.as_str(),
            d.filename.as_deref(),
            contents[2].text.as_deref()
        ),
        (
            MessageType::Document,
            "1003383421387256",
            Some("lucky-shrub-invoice.pdf"),
            Some("Lucky Shrub Invoice")
        )
    );
    assert_eq!(contents[3].kind, MessageType::Sticker);
    assert_eq!(
        contents[4].reaction,
        Some(("wamid.OUT".to_owned(), Some("\u{1F44D}".to_owned())))
    );
    let i = contents[5].interactive.as_ref().unwrap();
    assert_eq!(
        (i.kind.as_str(), i.reply_id.as_deref(), i.title.as_deref()),
        (
            "list_reply",
            Some("priority_express"),
            Some("Express Shipping")
        )
    );
    assert_eq!(
        (contents[6].kind, contents[6].text.as_deref()),
        (MessageType::Button, Some("Unsubscribe from promos"))
    );
    assert_eq!(contents[7].kind, MessageType::Order);
    assert_eq!(contents[7].text.as_deref(), Some("Three of these, please"));
}

/// Meta's example of a username-only person (business-scoped user ids guide, June 2026):
/// no `from`, no `wa_id`; the BSUID in `from_user_id` and `contacts[].user_id`, the
/// username in the profile, a parent id.
#[test]
fn documented_username_only_person() {
    let body = r#"{"object":"whatsapp_business_account","entry":[{"id":"102290129340398","changes":[{"value":{"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550783881","phone_number_id":"106540352242922"},
      "contacts":[{"profile":{"name":"Sheena Nelson","username":"realsheenanelson"},"user_id":"US.13491208655302741918","parent_user_id":"US.ENT.11815799212886844830"}],
      "messages":[{"from_user_id":"US.13491208655302741918","from_parent_user_id":"US.ENT.11815799212886844830","id":"wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA=","timestamp":"1749416383","type":"text","text":{"body":"Does it come in another color?"}}]},"field":"messages"}]}]}"#;
    let events = parse(body.as_bytes()).unwrap();
    let [PlatformEvent::Inbound(m)] = &events[..] else {
        panic!("{events:?}")
    };
    assert_eq!(
        m.from,
        Person {
            phone: None,
            user_id: Some("US.13491208655302741918".into()),
            parent_user_id: Some("US.ENT.11815799212886844830".into()),
            username: Some("realsheenanelson".into()),
            name: Some("Sheena Nelson".into()),
        }
    );
    assert_eq!(
        m.content.text.as_deref(),
        Some("Does it come in another color?")
    );
    // A message that names nobody at all is kept as not applied, never dropped.
    let nobody = body
        .replace(r#""from_user_id":"US.13491208655302741918","#, "")
        .replace(r#""user_id":"US.13491208655302741918","#, "");
    let events = parse(nobody.as_bytes()).unwrap();
    assert!(
        matches!(&events[..], [PlatformEvent::Unapplied(u)] if u.reason == "message without a sender"
            && u.part.contains("Does it come in another color?")),
        "{events:?}"
    );
}

/// Meta's delivered status of a message sent to a BSUID (no `recipient_id`), and the
/// `user_id_update` field and `user_changed_user_id` system message.
#[test]
fn documented_user_id_statuses_and_changes() {
    let status = r#"{"object":"whatsapp_business_account","entry":[{"id":"102290129340398","changes":[{"value":{"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550783881","phone_number_id":"106540352242922"},
      "contacts":[{"profile":{"name":"Pablo M.","username":"pablomorales"},"user_id":"US.13491208655302741918","parent_user_id":"US.ENT.11815799212886844830"}],
      "statuses":[{"id":"wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQUFERjg0NDEzNDdFODU3MUMxMAA=","status":"delivered","timestamp":"1750030073","recipient_user_id":"US.13491208655302741918","recipient_parent_user_id":"US.ENT.11815799212886844830","pricing":{"billable":true,"pricing_model":"PMP","type":"regular","category":"marketing"}}]},"field":"messages"}]}]}"#;
    let events = parse(status.as_bytes()).unwrap();
    let [PlatformEvent::Status { update, .. }] = &events[..] else {
        panic!("{events:?}")
    };
    assert_eq!(update.recipient, None);
    assert_eq!(
        update.recipient_user_id.as_deref(),
        Some("US.13491208655302741918")
    );
    assert_eq!(update.status, RecipientStatus::Delivered);

    let update = r#"{"object":"whatsapp_business_account","entry":[{"id":"102290129340398","changes":[{"value":{"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550783881","phone_number_id":"106540352242922"},
      "contacts":[{"profile":{"name":"Sheena Nelson"},"wa_id":"16505551234"}],
      "user_id_update":[{"wa_id":"16505551234","detail":"User id for Sheena Nelson has been updated.","user_id":{"previous":"US.13491208655302741918","current":"US.99999999999999999999"},"timestamp":"1750030073"}]},"field":"user_id_update"}]}]}"#;
    let events = parse(update.as_bytes()).unwrap();
    assert_eq!(
        events,
        [PlatformEvent::UserIdChanged {
            account: "106540352242922".into(),
            person: Person {
                user_id: Some("US.13491208655302741918".into()),
                ..Person::by_phone("16505551234")
            },
            previous: "US.13491208655302741918".into(),
            current: "US.99999999999999999999".into(),
            parent: None,
        }]
    );

    let system = r#"{"object":"whatsapp_business_account","entry":[{"id":"102290129340398","changes":[{"value":{"messaging_product":"whatsapp","metadata":{"display_phone_number":"15550783881","phone_number_id":"106540352242922"},
      "messages":[{"id":"wamid.U1","timestamp":"1750030073","type":"system","system":{"body":"User Sheena Nelson changed from US.13491208655302741918 to US.99999999999999999999","user_id":"US.99999999999999999999","type":"user_changed_user_id"}},
        {"from":"16505551234","from_user_id":"US.1111","id":"wamid.U2","timestamp":"1750030074","type":"system","system":{"body":"User Sheena Nelson changed from 16505551234 to 16505559999","wa_id":"16505559999","user_id":"US.2222","type":"user_changed_number"}}]},"field":"messages"}]}]}"#;
    let events = parse(system.as_bytes()).unwrap();
    // With no `from` at all the message still names a person: the old id the body gives.
    assert!(
        matches!(&events[0], PlatformEvent::UserIdChanged { previous, current, .. }
            if previous == "US.13491208655302741918" && current == "US.99999999999999999999"),
        "{:?}",
        events[0]
    );
    assert!(
        matches!(&events[1], PlatformEvent::NumberChanged { to, user_id: Some(u), from, .. }
            if to == "16505559999" && u == "US.2222" && from.user_id.as_deref() == Some("US.1111")),
        "{:?}",
        events[1]
    );
}
