//! Metrics that move with real work: sends, webhook deliveries, the rate limit, automations.

use super::*;

use crate::support::IdOf;

/// The value of the series `name` whose labels include every `k="v"` of `labels`.
fn series(text: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter(|l| l.starts_with(name) && l[name.len()..].starts_with(['{', ' ']))
        .filter(|l| {
            labels
                .iter()
                .all(|(k, v)| l.contains(&format!("{k}=\"{v}\"")))
        })
        .map(|l| l.rsplit(' ').next().unwrap().parse::<f64>().unwrap())
        .reduce(|a, b| a + b)
}

#[tokio::test]
async fn metrics_move_when_a_campaign_is_sent_and_its_webhook_delivered() {
    let recorder = exporter::recorder();
    let handle = recorder.handle();
    let _local = ::metrics::set_default_local_recorder(&recorder);
    let app = TestApp::new().await;
    let org = app.org().await;
    let s = setup(&org).await;
    top_up(&org, 10.0).await;
    let mut ids = contacts(&org, 3, "m").await;
    let refused = org
        .contact(json!({"primaryPhone": "+5215512340000", "consent": {"given": true}}))
        .await;
    ids.push(refused.id().to_owned());
    let opted = org
        .contact(json!({"primaryPhone": "+5215512340001", "consent": {"given": true}}))
        .await;
    let opted = opted.id().to_owned();
    ids.push(opted.clone());
    let receiver = Receiver::start(&app).await;
    subscribe(&org, &receiver.url, &["campaign.finished"]).await;
    let id = campaign_to(&org, &s, &s.plain, &ids).await;
    // Opted out after joining the audience: failed uncharged when the batch is charged.
    org.patch(&format!("/contacts/{opted}"), json!({"optedOut": true}))
        .await
        .ok(200);
    org.post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .ok(200);
    app.send_pass().await;
    app.send_pass().await;
    let c = org.get(&format!("/campaigns/{id}")).await.ok(200);
    assert_eq!(c["status"], "COMPLETED", "{c}");
    assert_eq!(app.deliver().await.delivered, 1);
    assert_eq!(receiver.got().len(), 1);
    exporter::collect_once(&app.state).await.unwrap();

    let text = handle.render();
    let get = |name: &str, labels: &[(&str, &str)]| {
        series(&text, name, labels).unwrap_or_else(|| panic!("{name} {labels:?} in\n{text}"))
    };
    let send_route = [
        ("method", "POST"),
        ("route", "/api/v1/campaigns/{id}/send"),
        ("status", "200"),
    ];
    assert_eq!(get("wm_http_requests_total", &send_route), 1.0);
    assert_eq!(
        get("wm_http_request_duration_seconds_count", &send_route),
        1.0
    );
    assert!(get("wm_http_request_duration_seconds_bucket", &[("le", "+Inf")]) >= 1.0);
    assert_eq!(get("wm_http_requests_in_flight", &[]), 0.0);
    let campaign = [("provider", "simulated"), ("source", "campaign")];
    assert_eq!(get("wm_messages_sent_total", &campaign), 3.0);
    let rejected = [("source", "campaign"), ("reason", "rejected")];
    assert_eq!(get("wm_messages_failed_total", &rejected), 1.0);
    let ineligible = [("source", "campaign"), ("reason", "ineligible")];
    assert_eq!(get("wm_messages_failed_total", &ineligible), 1.0);
    assert_eq!(get("wm_messages_refunded_total", &campaign), 1.0);
    assert_eq!(
        get("wm_campaign_batches_total", &[("result", "charged")]),
        1.0
    );
    assert_eq!(get("wm_wallet_charges_total", &[]), 1.0);
    assert!(get("wm_wallet_charged_micros_total", &[]) > 0.0);
    assert_eq!(get("wm_wallet_refunds_total", &[]), 1.0);
    assert_eq!(
        get("wm_webhook_deliveries_total", &[("outcome", "delivered")]),
        1.0
    );
    assert_eq!(get("wm_webhook_attempt_duration_seconds_count", &[]), 1.0);
    for worker in ["campaigns", "webhooks"] {
        let w = [("worker", worker)];
        assert!(get("wm_worker_pass_duration_seconds_count", &w) >= 1.0);
        assert!(
            get(
                "wm_worker_passes_total",
                &[("worker", worker), ("result", "ok")]
            ) >= 1.0
        );
        let at = get("wm_worker_last_success_timestamp_seconds", &w);
        assert!(
            (at - app.state.now_ms() as f64 / 1000.0).abs() < 60.0,
            "{at}"
        );
    }
    // The collector's gauges: nothing left waiting.
    assert_eq!(
        get("wm_recipients_pending", &[("campaign_status", "SENDING")]),
        0.0
    );
    assert_eq!(get("wm_webhook_queue_depth", &[("status", "pending")]), 0.0);
    assert_eq!(get("wm_webhook_queue_depth", &[("status", "failed")]), 0.0);
    assert_eq!(get("wm_outbox_lag_seconds", &[]), 0.0);
    assert!(get("wm_db_pool_max_connections", &[]) >= 1.0);
    assert!(series(&text, "wm_db_pool_connections", &[("state", "idle")]).is_some());
    // No ids in labels.
    assert!(!text.contains(&id) && !text.contains(&org.id), "{text}");
}

#[tokio::test]
async fn collector_gauges_show_waiting_work() {
    let recorder = exporter::recorder();
    let handle = recorder.handle();
    let _local = ::metrics::set_default_local_recorder(&recorder);
    let app = TestApp::new().await;
    let org = app.org().await;
    let s = setup(&org).await;
    top_up(&org, 10.0).await;
    let ids = contacts(&org, 2, "w").await;
    let receiver = Receiver::start(&app).await;
    subscribe(&org, &receiver.url, &["contact.updated"]).await;
    let id = campaign_to(&org, &s, &s.plain, &ids).await;
    org.post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .ok(200);
    org.patch(&format!("/contacts/{}", ids[0]), json!({"company": "Acme"}))
        .await
        .ok(200);
    app.clock.advance(Duration::seconds(90));
    exporter::collect_once(&app.state).await.unwrap();
    let text = handle.render();
    let pending = series(
        &text,
        "wm_recipients_pending",
        &[("campaign_status", "SENDING")],
    );
    assert_eq!(pending, Some(2.0), "{text}");
    let lag = series(&text, "wm_outbox_lag_seconds", &[]).unwrap();
    assert!((90.0..100.0).contains(&lag), "{lag}");
}

#[tokio::test]
async fn metrics_count_requests_refused_by_the_rate_limit() {
    let recorder = exporter::recorder();
    let handle = recorder.handle();
    let _local = ::metrics::set_default_local_recorder(&recorder);
    let app = TestApp::with_limit(3).await;
    let org = app.org().await;
    for _ in 0..3 {
        org.get("/users").await.ok(200);
    }
    org.get("/users")
        .await
        .assert_error(429, Some("API_KEY_RATE_LIMITED"));
    org.get("/users")
        .await
        .assert_error(429, Some("API_KEY_RATE_LIMITED"));

    let text = handle.render();
    assert_eq!(
        series(&text, "wm_rate_limited_total", &[]),
        Some(2.0),
        "{text}"
    );
    let refused = [("route", "/api/v1/users"), ("status", "429")];
    assert_eq!(
        series(&text, "wm_http_requests_total", &refused),
        Some(2.0),
        "{text}"
    );
}

#[tokio::test]
async fn metrics_count_automation_runs_by_result() {
    let recorder = exporter::recorder();
    let handle = recorder.handle();
    let _local = ::metrics::set_default_local_recorder(&recorder);
    let app = TestApp::new().await;
    let org = app.org().await;
    let flow = |name: &str, step: Value| {
        json!({"name": name, "status": "ACTIVE", "triggerType": "LIFECYCLE_STAGE_ENTERED",
               "triggerConfig": {"stage": "Customer"}, "createdByUserId": org.user_id,
               "steps": [step]})
    };
    for (name, step) in [
        (
            "tag",
            json!({"type": "ACTION", "config": {"kind": "ADD_TAG", "value": "vip"}}),
        ),
        (
            "wait",
            json!({"type": "WAIT", "config": {"kind": "MINUTES", "value": 30}}),
        ),
    ] {
        org.admin(Method::POST, "/automations", Some(flow(name, step)))
            .await
            .ok(201);
    }
    let customer = org.stage("Customer").await;
    let c = org
        .contact(json!({"primaryPhone": "+5215512340009", "consent": {"given": true}}))
        .await;
    org.patch(
        &format!("/contacts/{}", c.id()),
        json!({"lifecycleStageId": customer}),
    )
    .await
    .ok(200);
    assert_eq!(app.automation_pass().await.runs, 2);

    let text = handle.render();
    let runs = |result: &str| series(&text, "wm_automation_runs_total", &[("result", result)]);
    assert_eq!(runs("completed"), Some(1.0), "{text}");
    assert_eq!(runs("waiting"), Some(1.0), "{text}");
    assert_eq!(runs("failed"), None, "{text}");
    assert!(
        series(
            &text,
            "wm_worker_passes_total",
            &[("worker", "automations"), ("result", "ok")]
        )
        .is_some_and(|n| n >= 1.0),
        "{text}"
    );
}
