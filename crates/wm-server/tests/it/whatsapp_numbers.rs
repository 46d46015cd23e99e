//! Sender numbers on the platform: a quality update changes the number's rating, webhooks
//! for a number that is not ours change nothing, a number's own `mps` paces it, and the
//! server will not start with a bad `WM_SECRET_KEY`.

use axum::http::Method;
use serde_json::{Value, json};
use wm_fake_graph::{
    NumberSpec, QualityUpdate, StatusOptions, TemplateSpec, TemplateStatus, TemplateStatusUpdate,
};

use crate::support::{Org, WA_SECRET};
use crate::whatsapp_kit::{
    PNID, Ready, Wa, campaign, drive, number, people, ready, synced_template,
};

/// The organisation's numbers as its API key sees them (`GET /phone-numbers`).
async fn numbers(org: &Org<'_>) -> Value {
    org.get("/phone-numbers").await.ok(200)["data"].clone()
}

fn quality(event: &str) -> QualityUpdate {
    QualityUpdate {
        phone_number_id: PNID.into(),
        event: event.into(),
        current_limit: "TIER_1K".into(),
        old_limit: None,
        max_daily_conversations_per_business: None,
    }
}

#[tokio::test]
async fn a_quality_update_sets_the_numbers_quality_rating() {
    let wa = Wa::start(StatusOptions::default()).await;
    let org = wa.app.org().await;
    number(&org).await;
    assert_eq!(numbers(&org).await[0]["qualityRating"], "GREEN");
    let posted = wa
        .fake
        .post_quality_update(quality("FLAGGED"))
        .await
        .unwrap();
    assert_eq!(posted.last_status, Some(200));
    wa.settle().await;
    assert_eq!(numbers(&org).await[0]["qualityRating"], "RED");
    // A messaging-limit change says nothing about quality; unflagged is green again.
    wa.fake
        .post_quality_update(quality("UPGRADE"))
        .await
        .unwrap();
    wa.settle().await;
    assert_eq!(numbers(&org).await[0]["qualityRating"], "RED");
    wa.fake
        .post_quality_update(quality("UNFLAGGED"))
        .await
        .unwrap();
    wa.settle().await;
    assert_eq!(numbers(&org).await[0]["qualityRating"], "GREEN");
}

#[tokio::test]
async fn webhooks_for_a_number_that_is_not_ours_are_acknowledged_and_change_nothing() {
    const OTHER_PNID: &str = "109000000000999";
    const OTHER_WABA: &str = "209000000000999";
    let wa = Wa::start(StatusOptions::default()).await;
    let Ready {
        org,
        people,
        campaign: id,
        ..
    } = ready(&wa, 1, 10.0).await;
    org.post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .ok(200);
    let before = drive(&wa, &org, &id, 5).await;
    assert_eq!(before["stats"]["delivered"], 1, "{before}");
    // The app also receives another business's number (same display number, its own WABA,
    // with a template of the same name).
    wa.fake.register_number(NumberSpec {
        phone_number_id: OTHER_PNID.into(),
        waba_id: OTHER_WABA.into(),
        display_phone_number: "525500000001".into(),
        access_token: "EAAG-other".into(),
    });
    wa.fake.register_template(TemplateSpec {
        waba_id: OTHER_WABA.into(),
        name: "promo".into(),
        language: "es_MX".into(),
        category: "MARKETING".into(),
        status: TemplateStatus::Approved,
        body_text: "Hola {{1}}".into(),
    });
    let ours = wa.fake.accepted().remove(0);
    let from = people[0].1.trim_start_matches('+');
    let mut posted = vec![
        wa.fake
            .post_inbound_text(OTHER_PNID, from, "Hola")
            .await
            .unwrap(),
    ];
    // A status naming our message's id (and our correlation id), but sent for the other
    // number.
    let status = json!({"object": "whatsapp_business_account", "entry": [{"id": OTHER_WABA, "changes": [{"field": "messages", "value": {
        "messaging_product": "whatsapp", "metadata": {"display_phone_number": "525500000001", "phone_number_id": OTHER_PNID},
        "statuses": [{"id": ours.wamid, "status": "read", "timestamp": "1700000000", "recipient_id": ours.wa_id,
                      "biz_opaque_callback_data": ours.biz_opaque_callback_data}]}}]}]})
    .to_string()
    .into_bytes();
    let signature = wm_fake_graph::sign(WA_SECRET, &status);
    posted.push(wa.fake.post_raw(status, Some(signature)).await.unwrap());
    posted.push(
        wa.fake
            .post_quality_update(QualityUpdate {
                phone_number_id: OTHER_PNID.into(),
                ..quality("FLAGGED")
            })
            .await
            .unwrap(),
    );
    posted.push(
        wa.fake
            .post_template_status_update(TemplateStatusUpdate {
                waba_id: OTHER_WABA.into(),
                name: "promo".into(),
                language: "es_MX".into(),
                event: "DISABLED".into(),
                reason: None,
                apply: true,
            })
            .await
            .unwrap(),
    );
    for p in &posted {
        assert_eq!(p.last_status, Some(200), "{p:?}");
    }
    wa.settle().await;
    let after = org.get(&format!("/campaigns/{id}")).await.ok(200);
    assert_eq!(after["stats"], before["stats"]);
    assert_eq!(org.get("/conversations").await.ok(200)["meta"]["total"], 0);
    assert_eq!(org.get("/contacts").await.ok(200)["meta"]["total"], 1);
    assert_eq!(numbers(&org).await[0]["qualityRating"], "GREEN");
    let templates = org.get("/templates").await.ok(200);
    assert_eq!(templates["data"][0]["status"], "APPROVED", "{templates}");
}

#[tokio::test]
async fn a_numbers_own_mps_paces_it_at_that_rate() {
    // The server's default pace is off: only the number's own `mps` holds it back.
    let wa = Wa::start(StatusOptions::default()).await;
    wa.template("promo", "Hola {{1}}");
    let org = wa.app.org().await;
    let number_id = number(&org).await;
    let patched = org
        .admin(
            Method::PATCH,
            &format!("/phone-numbers/{number_id}"),
            Some(json!({"mps": 20})),
        )
        .await
        .ok(200);
    assert_eq!(patched["mps"], 20);
    let tpl = synced_template(&org, "promo").await;
    let people = people(&org, 60).await;
    let ids: Vec<String> = people.into_iter().map(|(id, _)| id).collect();
    let id = campaign(&org, &number_id, &tpl, &ids).await;
    org.admin(
        Method::POST,
        "/wallet/top-ups",
        Some(json!({"amount": 100.0})),
    )
    .await
    .ok(201);
    org.post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .ok(200);
    let c = drive(&wa, &org, &id, 10).await;
    assert_eq!(c["status"], "COMPLETED", "{c}");
    assert_eq!(wa.fake.accepted_count(), 60);
    // At 20 a second the 60 slots span 2.95 s. Measured at the fake, an arrival can be late
    // (its claim waits behind a write; the suite's other processes share 2 cores), which
    // bunches a few arrivals into one second but shortens the span only by the first one's
    // lateness: the span is the rate's measure, the busiest second only catches a burst.
    let times = wa.fake.send_times(PNID);
    let span_ms = times.last().unwrap() - times.first().unwrap();
    assert!(span_ms >= 2_500.0, "60 sends in {span_ms:.0} ms at 20 mps");
    let busiest = wa.fake.max_mps(PNID);
    assert!(
        (1..=30).contains(&busiest),
        "{busiest} in the busiest second"
    );
}

#[tokio::test]
async fn the_server_refuses_to_start_with_a_bad_secret_key() {
    use std::process::Command;
    let dir = std::env::temp_dir().join(format!("wm-secret-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let sixteen = "AAAAAAAAAAAAAAAAAAAAAA=="; // 16 bytes
    for (key, said) in [
        (
            "not base64!",
            "WM_SECRET_KEY must be 32 bytes in base64 (not valid base64)",
        ),
        (
            sixteen,
            "WM_SECRET_KEY must be 32 bytes in base64 (got 16 bytes)",
        ),
    ] {
        let db = dir.join("t.db");
        let mut command = Command::new(env!("CARGO_BIN_EXE_wm-server"));
        command
            .arg("serve")
            .env(
                "WM_DATABASE_URL",
                format!("sqlite://{}?mode=rwc", db.display()),
            )
            .env(
                "WM_LISTEN",
                format!("127.0.0.1:{}", crate::replicas_harness::free_port()),
            )
            .env("WM_ADMIN_TOKEN", "secret-admin")
            .env("WM_METRICS_LISTEN", "")
            .env("WM_PROVIDER", "whatsapp")
            .env("WM_SECRET_KEY", key)
            .env("RUST_LOG", "warn");
        // It exits on its own; one that started anyway is stopped and reported.
        let (status, stderr) = crate::replicas_harness::run_to_exit(command).await;
        assert!(!status.success(), "{stderr}");
        assert!(stderr.contains(said), "{stderr}");
        assert!(
            !db.exists(),
            "the database was touched before the key was checked"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
