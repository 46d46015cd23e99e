//! Readiness (database, migrations, workers), shutdown, and the metrics listener.

use super::*;

async fn ready(app: &TestApp) -> Resp {
    app.call(Method::GET, "/health/ready", None, None).await
}

#[tokio::test]
async fn readiness_checks_the_database_migrations_and_started_workers() {
    let app = TestApp::new().await;
    let r = ready(&app).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["status"], "ok");
    assert_eq!(r.body["checks"]["database"], "ok");
    assert_eq!(r.body["checks"]["migrations"], "ok");
    for w in ["campaigns", "webhooks", "automations", "imports"] {
        assert_eq!(
            r.body["checks"]["workers"][w], "not running in this process",
            "{}",
            r.body
        );
    }
    // Liveness stays constant.
    let live = app.call(Method::GET, "/health", None, None).await;
    assert_eq!(
        (live.status.as_u16(), live.body.clone()),
        (200, json!({"status": "ok"}))
    );

    // A worker started here must show signs of life.
    app.state
        .health
        .started(Worker::Campaigns, app.state.now_ms());
    assert_eq!(
        ready(&app).await.body["checks"]["workers"]["campaigns"],
        "ok"
    );
    app.clock.advance(Duration::seconds(42));
    let r = ready(&app).await;
    assert_eq!(r.status, 503, "{}", r.body);
    assert_eq!(r.body["status"], "unavailable");
    assert_eq!(r.body["checks"]["workers"]["campaigns"], "stale 42s");
    assert_eq!(r.body["checks"]["database"], "ok");
    app.state.health.beat(Worker::Campaigns, app.state.now_ms());
    assert_eq!(ready(&app).await.status, 200);
}

#[tokio::test]
async fn a_closed_database_fails_readiness_and_a_500_logs_its_cause_in_the_request_span() {
    let (logs, _guard) = Captured::start(LogFormat::Text);
    let app = TestApp::new().await;
    let org = app.org().await;
    app.state.db.conn.close_by_ref().await.unwrap();
    let r = ready(&app).await;
    assert_eq!(r.status, 503, "{}", r.body);
    assert_eq!(r.body["checks"]["database"], "unreachable");
    assert_eq!(r.body["checks"]["migrations"], "not checked (no database)");
    // The key was never used, so authenticating it needs the database: a 500. Asked twice
    // at most: the first hit of the `internal error` callsite can race with another test
    // thread registering it (tracing-core's interest cache with per-thread subscribers).
    let mut lines = Vec::new();
    for attempt in ["db-down-1", "db-down-2"] {
        Captured::refresh();
        let r = with_id_and_key(&app, "/contacts", &org.key, attempt).await;
        r.assert_error(500, None);
        assert_eq!(request_id(&r), attempt);
        lines = logs.lines_with(&format!("request_id={attempt}"));
        if lines.iter().any(|l| l.contains("ERROR")) {
            break;
        }
    }
    assert!(
        lines
            .iter()
            .any(|l| l.contains("ERROR") && l.contains("internal error") && l.contains("error=")),
        "{lines:#?} in\n{}",
        logs.text()
    );
    assert!(!logs.text().contains(&org.key));
}

#[tokio::test]
async fn readiness_answers_503_at_once_when_shutdown_begins() {
    let app = TestApp::with_settings(|s| s.limits.shutdown_delay = std::time::Duration::ZERO).await;
    let served = app.serve().await;
    let base = served.base.clone();
    let body: Value = reqwest::get(format!("{base}/health/ready"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(body["status"], "ok", "{body}");
    for w in ["campaigns", "webhooks", "automations", "imports"] {
        assert_eq!(body["checks"]["workers"][w], "ok", "{body}");
    }
    assert!(!app.state.health.is_draining());
    served.shut_down().await;
    assert!(app.state.health.is_draining());
    let r = ready(&app).await;
    assert_eq!(r.status, 503);
    assert_eq!(
        r.body,
        json!({"status": "unavailable", "checks": {"shutdown": "draining"}})
    );
}

#[tokio::test]
async fn during_the_shutdown_delay_the_replica_still_serves_with_readiness_at_503() {
    let app = TestApp::with_settings(|s| {
        s.limits.shutdown_delay = std::time::Duration::from_secs(2);
    })
    .await;
    let served = app.serve().await;
    let base = served.base.clone();
    let http = reqwest::Client::new();
    let status = |path: &'static str| {
        let (http, base) = (http.clone(), base.clone());
        async move {
            http.get(format!("{base}{path}"))
                .send()
                .await
                .map(|r| r.status().as_u16())
        }
    };
    assert_eq!(status("/health/ready").await.unwrap(), 200);
    let server = served.begin_shutdown();
    // At once: readiness 503, so the balancer takes the replica out, while requests are
    // still answered (the listener stays open for the delay) and the workers have stopped.
    let mut seen = false;
    for _ in 0..100 {
        if status("/health/ready").await.unwrap() == 503 {
            seen = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(seen, "readiness never turned 503");
    assert_eq!(status("/health").await.unwrap(), 200, "still serving");
    assert!(
        app.state.stopping(),
        "the workers were told to stop at the signal"
    );
    assert!(!server.is_finished());
    server.await.unwrap().unwrap();
    assert!(status("/health").await.is_err(), "closed after the delay");
}

#[tokio::test]
async fn the_metrics_listener_serves_the_text_format() {
    // The only test that installs the process-wide recorder, as the binary does.
    let app = TestApp::new().await;
    let addr = "127.0.0.1:0".parse().ok();
    let exporter = exporter::serve(addr, &app.state).await.unwrap().unwrap();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let res = reqwest::get(format!("http://{}/metrics", exporter.addr))
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert!(
        res.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain; version=0.0.4")
    );
    let text = res.text().await.unwrap();
    assert!(
        text.contains("# TYPE wm_db_pool_connections gauge"),
        "{text}"
    );
    assert!(text.contains("# HELP wm_db_pool_max_connections"), "{text}");
    assert!(exporter::serve(None, &app.state).await.unwrap().is_none());
}
