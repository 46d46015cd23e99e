//! Webhook reading on what `wm_fake_graph` posts (caught by a tiny receiver); Meta's own
//! documented examples are in `documented.rs`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::http::HeaderMap;
use wm_core::provider::{MessagingProvider, OutboundMessage, PlatformAccount};
use wm_fake_graph::{
    Delivery, FakeGraph, FakeGraphOptions, InboundKind, InboundMessage, Injection, NumberSpec,
    QualityUpdate, ReplyContext, StatusOptions, TemplateSpec, TemplateStatus, TemplateStatusUpdate,
    WebhookConfig,
};

use super::*;
use crate::provider::meta_hub::verify_signature;
use crate::provider::whatsapp::WhatsAppProvider;
use wm_core::platform::InboundMessage as Received;

const SECRET: &str = "app-secret";
const NUMBER_ID: &str = "106540352242922";
const WABA_ID: &str = "102290129340398";
const TOKEN: &str = "EAAG-token";

type Caught = Arc<Mutex<Vec<(Option<String>, Bytes)>>>;

/// A receiver that keeps every body with its `X-Hub-Signature-256`.
async fn receiver() -> (String, Caught) {
    let caught: Caught = Arc::default();
    let sink = caught.clone();
    let app = axum::Router::new().fallback(move |headers: HeaderMap, body: Bytes| {
        let sink = sink.clone();
        async move {
            let sig = headers
                .get("x-hub-signature-256")
                .and_then(|v| v.to_str().ok());
            sink.lock().unwrap().push((sig.map(str::to_owned), body));
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, caught)
}

async fn setup() -> (FakeGraph, Caught) {
    let (url, caught) = receiver().await;
    let webhook = WebhookConfig {
        url,
        app_secret: SECRET.into(),
        statuses: StatusOptions {
            read: true,
            ..StatusOptions::default()
        },
        retry: Default::default(),
    };
    let opts = FakeGraphOptions {
        webhook: Some(webhook),
        ..FakeGraphOptions::default()
    };
    let fake = FakeGraph::start(opts).await.unwrap();
    fake.register_number(NumberSpec {
        phone_number_id: NUMBER_ID.into(),
        waba_id: WABA_ID.into(),
        display_phone_number: "15550783881".into(),
        access_token: TOKEN.into(),
    });
    fake.register_template(TemplateSpec {
        waba_id: WABA_ID.into(),
        name: "promo".into(),
        language: "en_US".into(),
        category: "MARKETING".into(),
        status: TemplateStatus::Approved,
        body_text: "Hi {{1}}".into(),
    });
    (fake, caught)
}

fn message(to: &str, correlation_id: &str) -> OutboundMessage {
    OutboundMessage {
        correlation_id: correlation_id.into(),
        from: "+15550783881".into(),
        account: Some(PlatformAccount {
            id: NUMBER_ID.into(),
            access_token: TOKEN.into(),
        }),
        to: wm_core::address::Address::from_stored(to),
        content: wm_core::provider::OutboundContent::Template {
            name: "promo".into(),
            language: "en_US".into(),
            parameters: vec!["Ana".into()],
        },
        reply_to: None,
        body: "Hi Ana".into(),
        human_agent: false,
    }
}

/// Every event caught so far, each body's signature checked first.
async fn caught_events(fake: &FakeGraph, caught: &Caught) -> Vec<PlatformEvent> {
    assert!(fake.wait_webhooks_idle(Duration::from_secs(5)).await);
    let bodies = std::mem::take(&mut *caught.lock().unwrap());
    let mut out = Vec::new();
    for (sig, body) in bodies {
        assert!(verify_signature(SECRET, sig.as_deref(), &body));
        out.extend(parse(&body).unwrap());
    }
    out
}

fn statuses(events: &[PlatformEvent]) -> Vec<(&StatusUpdate, Option<i64>)> {
    let mut out: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            PlatformEvent::Status {
                account,
                update,
                code,
            } => {
                assert_eq!(account, NUMBER_ID);
                Some((update, *code))
            }
            _ => None,
        })
        .collect();
    out.sort_by_key(|(u, _)| u.status.as_str());
    out
}

#[tokio::test]
async fn status_webhooks_of_a_send_carry_the_correlation_id() {
    let (fake, caught) = setup().await;
    let wa = WhatsAppProvider::new(&fake.url(), "v23.0").unwrap();
    let wamid = wa
        .send(&message("+5215512345678", "corr-1"))
        .await
        .unwrap()
        .message_id;
    let events = caught_events(&fake, &caught).await;
    let got = statuses(&events);
    let names: Vec<_> = got.iter().map(|(u, _)| u.status).collect();
    assert_eq!(
        names,
        [
            RecipientStatus::Delivered,
            RecipientStatus::Read,
            RecipientStatus::Sent
        ]
    );
    for (update, code) in got {
        assert_eq!(update.provider_message_id, wamid);
        assert_eq!(update.correlation_id.as_deref(), Some("corr-1"));
        assert_eq!(update.recipient.as_deref(), Some("5215512345678"));
        assert!(
            update
                .at_ms
                .is_some_and(|ms| ms > 1_600_000_000_000 && ms % 1000 == 0)
        );
        assert_eq!(
            (update.error.as_deref(), update.opt_out, code),
            (None, false, None)
        );
    }
    // Sent without a correlation id: none comes back.
    wa.send(&message("+5215512340000", "")).await.unwrap();
    let events = caught_events(&fake, &caught).await;
    assert!(
        statuses(&events)
            .iter()
            .all(|(u, _)| u.correlation_id.is_none())
    );
    fake.shutdown().await;
}

#[tokio::test]
async fn a_failed_status_carries_the_error_and_the_opt_out() {
    let (fake, caught) = setup().await;
    fake.inject(Injection::new("5215511110000", 131050).mode(Delivery::Async));
    fake.inject(Injection::new("5215522220000", 131026).mode(Delivery::Async));
    let wa = WhatsAppProvider::new(&fake.url(), "v23.0").unwrap();
    wa.send(&message("+5215511110000", "opted-out"))
        .await
        .unwrap();
    wa.send(&message("+5215522220000", "undeliverable"))
        .await
        .unwrap();
    let events = caught_events(&fake, &caught).await;
    let got = statuses(&events);
    assert_eq!(got.len(), 2);
    for (update, code) in got {
        assert_eq!(update.status, RecipientStatus::Failed);
        let error = update.error.as_deref().unwrap_or_default();
        match update.correlation_id.as_deref() {
            Some("opted-out") => {
                assert_eq!(code, Some(131050));
                assert!(update.opt_out);
                assert!(error.starts_with(
                    "(#131050) User has stopped receipt of marketing messages: Unable to deliver"
                ));
            }
            _ => {
                assert_eq!(code, Some(131026));
                assert!(!update.opt_out);
                assert!(error.starts_with("(#131026) Message undeliverable: Unable to deliver"));
            }
        }
    }
    fake.shutdown().await;
}

#[tokio::test]
async fn inbound_messages_template_and_quality_updates() {
    let (fake, caught) = setup().await;
    let inbound = |kind, context: Option<&str>| InboundMessage {
        phone_number_id: NUMBER_ID.into(),
        from: "5215512345678".into(),
        profile_name: Some("Ana".into()),
        kind,
        context: context.map(|id| ReplyContext {
            id: id.into(),
            from: None,
        }),
    };
    let kinds = [
        InboundKind::Text {
            body: "hola".into(),
        },
        InboundKind::Button {
            payload: "STOP".into(),
            text: "Stop promotions".into(),
        },
        InboundKind::ButtonReply {
            id: "b1".into(),
            title: "Yes".into(),
        },
        InboundKind::ListReply {
            id: "r1".into(),
            title: "Tuesday".into(),
            description: None,
        },
    ];
    let mut wamids = Vec::new();
    for (i, kind) in kinds.into_iter().enumerate() {
        let context = (i > 0).then_some("wamid.OUT");
        wamids.push(
            fake.post_inbound(inbound(kind, context))
                .await
                .unwrap()
                .wamid,
        );
    }
    let update = TemplateStatusUpdate {
        waba_id: WABA_ID.into(),
        name: "promo".into(),
        language: "en_US".into(),
        event: "PAUSED".into(),
        reason: None,
        apply: true,
    };
    fake.post_template_status_update(update).await.unwrap();
    let flagged = QualityUpdate {
        phone_number_id: NUMBER_ID.into(),
        event: "FLAGGED".into(),
        current_limit: "TIER_1K".into(),
        old_limit: None,
        max_daily_conversations_per_business: None,
    };
    fake.post_quality_update(flagged).await.unwrap();
    let events = caught_events(&fake, &caught).await;
    let expect = [
        ("text", "hola"),
        ("button", "Stop promotions"),
        ("interactive", "Yes"),
        ("interactive", "Tuesday"),
    ];
    for (i, (kind, text)) in expect.into_iter().enumerate() {
        let PlatformEvent::Inbound(m) = &events[i] else {
            panic!("{:?}", events[i]);
        };
        let Received {
            account,
            message_id,
            from,
            at_ms,
            content,
            context_id,
        } = m.as_ref();
        let (k, t) = (&content.platform_type, &content.text);
        assert_eq!(
            (account.as_str(), from.phone.as_deref()),
            (NUMBER_ID, Some("5215512345678"))
        );
        // Every person also comes with their business-scoped user id (since April 2026).
        assert!(
            from.user_id
                .as_deref()
                .is_some_and(wm_core::address::is_user_id),
            "{from:?}"
        );
        assert_eq!(Some(message_id), wamids[i].as_ref());
        assert_eq!(
            (from.name.as_deref(), k.as_str(), t.as_deref()),
            (Some("Ana"), kind, Some(text))
        );
        assert!(at_ms.is_some());
        assert_eq!(context_id.as_deref(), (i > 0).then_some("wamid.OUT"));
    }
    assert_eq!(
        events[4],
        PlatformEvent::TemplateStatus {
            business_account: WABA_ID.into(),
            name: "promo".into(),
            language: "en_US".into(),
            status: "PAUSED".into(),
            reason: None,
            new_status: Some("PAUSED".into()),
            stop_reason: Some(wm_core::whatsapp::TEMPLATE_PAUSED),
        }
    );
    assert_eq!(
        events[5],
        PlatformEvent::Quality {
            business_account: WABA_ID.into(),
            display_phone_number: "15550783881".into(),
            event: "FLAGGED".into(),
            rating: Some("RED"),
        }
    );
    fake.shutdown().await;
}
