//! The client against `wm_fake_graph`, which answers in the documented shapes.

use std::time::Duration;
use wm_core::address::Address;

use axum::http::StatusCode as AxumStatus;
use wm_core::provider::{
    Accepted, MessagingProvider, OutboundContent, OutboundMessage, PlatformAccount, SendError,
};
use wm_core::whatsapp::{
    PLATFORM_BAD_RESPONSE, PLATFORM_NOT_CONFIGURED, PLATFORM_NUMBER_NOT_REGISTERED,
    PLATFORM_SPAM_LIMIT, PLATFORM_TOKEN_EXPIRED, TEMPLATE_PAUSED,
};
use wm_fake_graph::{
    Delivery, FakeGraph, FakeGraphOptions, Injection, NumberSpec, TemplateSpec, TemplateStatus,
};

use super::*;

const NUMBER_ID: &str = "106540352242922";
const WABA_ID: &str = "102290129340398";
const TOKEN: &str = "EAAG-secret-token";
const TO_DIGITS: &str = "5215512345678";

async fn fake_with(opts: FakeGraphOptions) -> FakeGraph {
    let fake = FakeGraph::start(opts)
        .await
        .unwrap_or_else(|e| panic!("fake: {e}"));
    fake.register_number(NumberSpec {
        phone_number_id: NUMBER_ID.into(),
        waba_id: WABA_ID.into(),
        display_phone_number: "15550783881".into(),
        access_token: TOKEN.into(),
    });
    for (name, body) in [
        ("order_update", "Hola {{1}}, tu pedido {{2}} va en camino"),
        ("hello", "Hello!"),
    ] {
        fake.register_template(TemplateSpec {
            waba_id: WABA_ID.into(),
            name: name.into(),
            language: "es_MX".into(),
            category: "UTILITY".into(),
            status: TemplateStatus::Approved,
            body_text: body.into(),
        });
    }
    fake
}

async fn fake() -> FakeGraph {
    fake_with(FakeGraphOptions::default()).await
}

fn provider(url: &str) -> WhatsAppProvider {
    WhatsAppProvider::new(url, "v23.0").unwrap_or_else(|e| panic!("provider: {e}"))
}

fn message() -> OutboundMessage {
    OutboundMessage {
        correlation_id: "0190f3c2-7a41-7c1e-9d1b-3c0e8f6a2b11".into(),
        from: "+15550783881".into(),
        account: Some(PlatformAccount {
            id: NUMBER_ID.into(),
            access_token: TOKEN.into(),
        }),
        to: Address::from_stored(&format!("+{TO_DIGITS}")),
        content: OutboundContent::Template {
            name: "order_update".into(),
            language: "es_MX".into(),
            parameters: vec!["Ana".into(), "#42".into()],
        },
        reply_to: None,
        body: "Hola Ana, tu pedido #42 va en camino".into(),
        human_agent: false,
    }
}

/// A one-route server answering every request with `status` and `body`.
async fn canned(status: AxumStatus, body: &'static str) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let addr = listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
    let app = axum::Router::new().fallback(move || async move { (status, body) });
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

#[tokio::test]
async fn sends_a_template_and_returns_the_wamid() {
    let fake = fake().await;
    let sent = provider(&fake.url()).send(&message()).await;
    let sent = sent.unwrap_or_else(|e| panic!("send: {e}"));
    let wamid = sent.message_id;
    assert!(wamid.starts_with("wamid."), "{wamid}");
    assert_eq!(sent.recipient.as_deref(), Some(TO_DIGITS));
    let accepted = fake
        .message(&wamid)
        .unwrap_or_else(|| panic!("not accepted"));
    assert_eq!(accepted.to, TO_DIGITS);
    assert_eq!(accepted.template_name.as_deref(), Some("order_update"));
    assert_eq!(accepted.language.as_deref(), Some("es_MX"));
    assert_eq!(accepted.body_params, ["Ana", "#42"]);
    assert_eq!(
        accepted.biz_opaque_callback_data.as_deref(),
        Some("0190f3c2-7a41-7c1e-9d1b-3c0e8f6a2b11")
    );
    fake.shutdown().await;
}

/// The platform's `contacts[].wa_id` is the person's id even when it spells the number
/// otherwise (a Mexican account from before the mobile `1` was dropped).
#[tokio::test]
async fn returns_the_platforms_wa_id_for_the_number() {
    let fake = fake().await;
    let mut m = message();
    m.to = Address::from_stored("+525559784978");
    fake.register_wa_id(m.to.stored(), "5215559784978");
    let sent = provider(&fake.url()).send(&m).await;
    let sent = sent.unwrap_or_else(|e| panic!("send: {e}"));
    assert_eq!(sent.recipient.as_deref(), Some("5215559784978"));
    fake.shutdown().await;
}

#[tokio::test]
async fn a_template_without_parameters_has_no_components() {
    let mut m = message();
    m.content = OutboundContent::Template {
        name: "hello".into(),
        language: "es_MX".into(),
        parameters: Vec::new(),
    };
    let body = outbound::send_body(&m);
    assert!(body["template"].get("components").is_none(), "{body}");
    assert_eq!(body["to"], TO_DIGITS);
    assert_eq!(body["recipient_type"], "individual");
    let fake = fake().await;
    let sent = provider(&fake.url()).send(&m).await;
    assert!(sent.is_ok(), "{sent:?}");
    fake.shutdown().await;
}

#[tokio::test]
async fn error_codes_map_to_retry_fail_opt_out_and_pause() {
    let fake = fake().await;
    let wa = provider(&fake.url());
    let cases: &[(i64, Option<u16>)] = &[
        (130429, None),
        (131000, None),
        (131026, None),
        (131050, None),
        (131048, None),
        (424_242, Some(500)),
        (424_242, None),
    ];
    let mut got = Vec::new();
    for &(code, http) in cases {
        let mut injection = Injection::new(TO_DIGITS, code)
            .mode(Delivery::Sync)
            .times(1);
        if let Some(h) = http {
            injection = injection.http_status(h);
        }
        fake.inject(injection);
        got.push(wa.send(&message()).await);
    }
    let details = "Unable to deliver message. Reasons can include:";
    assert!(
        matches!(&got[0], Err(SendError::RetryLater(r)) if r.starts_with("(#130429) Rate limit hit"))
    );
    assert!(matches!(&got[1], Err(SendError::RetryLater(r)) if r.starts_with("(#131000)")));
    assert!(matches!(&got[2],
        Err(SendError::Rejected { reason, opt_out: false })
            if reason.starts_with(&format!("(#131026) Message undeliverable: {details}"))));
    assert!(matches!(
        &got[3],
        Err(SendError::Rejected { opt_out: true, .. })
    ));
    assert!(matches!(&got[4],
        Err(SendError::Paused { stop_reason, .. }) if stop_reason == PLATFORM_SPAM_LIMIT));
    // An unknown code: retried when the platform said 5xx, the recipient fails otherwise.
    assert!(matches!(&got[5], Err(SendError::RetryLater(_))));
    assert!(matches!(
        &got[6],
        Err(SendError::Rejected { opt_out: false, .. })
    ));
    for result in &got {
        assert!(!format!("{result:?}").contains(TOKEN));
    }
    assert_eq!(fake.accepted_count(), 0);
    fake.shutdown().await;
}

#[tokio::test]
async fn account_and_template_problems_pause_the_campaign() {
    let fake = fake().await;
    let wa = provider(&fake.url());
    fake.set_template_status(WABA_ID, "order_update", "es_MX", TemplateStatus::Paused);
    let paused = wa.send(&message()).await;
    fake.set_template_status(WABA_ID, "order_update", "es_MX", TemplateStatus::Approved);
    let mut unknown_number = message();
    if let Some(a) = unknown_number.account.as_mut() {
        a.id = "999".into();
    }
    let unknown = wa.send(&unknown_number).await;
    fake.expire_token(NUMBER_ID);
    let expired = wa.send(&message()).await;
    let mut no_account = message();
    no_account.account = None;
    let none = wa.send(&no_account).await;
    let stop = |r: &Result<Accepted, SendError>| match r {
        Err(SendError::Paused { stop_reason, .. }) => stop_reason.clone(),
        other => format!("{other:?}"),
    };
    assert_eq!(stop(&paused), TEMPLATE_PAUSED);
    assert_eq!(stop(&unknown), PLATFORM_NUMBER_NOT_REGISTERED);
    assert_eq!(stop(&expired), PLATFORM_TOKEN_EXPIRED);
    assert!(
        matches!(&expired, Err(SendError::Paused { reason, .. }) if reason.starts_with("(#190) "))
    );
    assert_eq!(stop(&none), PLATFORM_NOT_CONFIGURED);
    fake.shutdown().await;
}

#[tokio::test]
async fn a_dropped_connection_is_ambiguous() {
    let fake = fake().await;
    fake.drop_next_response(TO_DIGITS);
    let sent = provider(&fake.url()).send(&message()).await;
    assert!(matches!(sent, Err(SendError::Ambiguous(_))), "{sent:?}");
    assert_eq!(fake.accepted_to(TO_DIGITS), 1, "the platform did send it");
    fake.shutdown().await;
}

#[tokio::test]
async fn an_answer_after_the_timeout_is_ambiguous() {
    let fake = fake().await;
    fake.delay_next_response(TO_DIGITS, Duration::from_secs(3));
    let wa = provider(&fake.url()).with_timeout(Duration::from_millis(300));
    let sent = wa.unwrap_or_else(|e| panic!("{e}")).send(&message()).await;
    assert!(matches!(sent, Err(SendError::Ambiguous(_))), "{sent:?}");
    assert_eq!(fake.accepted_to(TO_DIGITS), 1);
    fake.shutdown().await;
}

#[tokio::test]
async fn a_refused_connection_is_retried() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    let addr = listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
    drop(listener);
    let sent = provider(&format!("http://{addr}")).send(&message()).await;
    assert!(matches!(sent, Err(SendError::RetryLater(_))), "{sent:?}");
}

#[tokio::test]
async fn answers_that_are_not_graph_errors() {
    let m = message();
    let unavailable = provider(&canned(AxumStatus::SERVICE_UNAVAILABLE, "<html>oops</html>").await);
    assert!(matches!(
        unavailable.send(&m).await,
        Err(SendError::RetryLater(_))
    ));
    let no_id = provider(&canned(AxumStatus::OK, r#"{"messaging_product":"whatsapp"}"#).await);
    assert!(matches!(no_id.send(&m).await, Err(SendError::Ambiguous(_))));
    let not_graph = provider(&canned(AxumStatus::NOT_FOUND, "not found").await);
    assert!(matches!(not_graph.send(&m).await,
        Err(SendError::Paused { stop_reason, .. }) if stop_reason == PLATFORM_BAD_RESPONSE));
}

#[tokio::test]
async fn lists_every_template_page_on_the_configured_host() {
    // `paging.next` points at another host: only the cursors are followed.
    let opts = FakeGraphOptions {
        public_base_url: Some("http://192.0.2.1:9".into()),
        ..FakeGraphOptions::default()
    };
    let fake = fake_with(opts).await;
    for i in 0..230 {
        fake.register_template(TemplateSpec {
            waba_id: WABA_ID.into(),
            name: format!("promo_{i:03}"),
            language: "en_US".into(),
            category: "MARKETING".into(),
            status: if i % 2 == 0 {
                TemplateStatus::Approved
            } else {
                TemplateStatus::Paused
            },
            body_text: format!("Offer {i} for {{{{1}}}}"),
        });
    }
    let wa = provider(&format!("http://{}", fake.addr()));
    let listed = wa.list_templates(WABA_ID, TOKEN).await;
    let listed = listed.unwrap_or_else(|e| panic!("list: {e}"));
    assert_eq!(listed.len(), 232, "3 pages of 100");
    assert_eq!(listed[0].name, "order_update");
    assert_eq!(
        listed[0].body_text.as_deref(),
        Some("Hola {{1}}, tu pedido {{2}} va en camino")
    );
    let last = &listed[231];
    assert_eq!(
        (last.name.as_str(), last.language.as_str()),
        ("promo_229", "en_US")
    );
    assert_eq!(
        (last.status.as_str(), last.category.as_str()),
        ("PAUSED", "MARKETING")
    );
    assert_eq!(last.body_text.as_deref(), Some("Offer 229 for {{1}}"));
    let denied = wa.list_templates(WABA_ID, "wrong").await;
    assert!(denied.is_err_and(|e| e.starts_with("(#190) ") && !e.contains("wrong")));
    fake.shutdown().await;
}

#[test]
fn bad_settings_are_refused() {
    assert!(WhatsAppProvider::new("not a url", "v23.0").is_err());
    assert!(WhatsAppProvider::new("ftp://graph.example", "v23.0").is_err());
    assert!(WhatsAppProvider::new("https://graph.facebook.com", "").is_err());
    assert!(WhatsAppProvider::new("https://graph.facebook.com/", "v23.0/x").is_err());
    let wa = WhatsAppProvider::new("https://graph.facebook.com/", "/v23.0/");
    let url = wa.map(|w| w.url("12/../34", "messages").to_string());
    assert_eq!(
        url.as_deref(),
        Ok("https://graph.facebook.com/v23.0/12%2F..%2F34/messages")
    );
}
