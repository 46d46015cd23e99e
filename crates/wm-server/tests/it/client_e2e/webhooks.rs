//! Webhook management and deliveries through the client, with a manual retry.

use std::sync::Arc;
use std::sync::atomic::{AtomicU16, AtomicUsize, Ordering};

use axum::http::StatusCode;
use chrono::Duration;
use futures::TryStreamExt;
use wm_client::Error;
use wm_client::types::contacts::CreateContact;
use wm_client::types::events::EventKind;
use wm_client::types::webhooks::{CreateWebhook, DeliveryStatus, UpdateWebhook, WebhookStatus};

use crate::support::TestApp;

use super::{client, serve};

#[tokio::test]
async fn webhooks_management_deliveries_and_a_manual_retry() {
    let app = TestApp::with_settings(|s| {
        s.webhook_retry_schedule = vec![std::time::Duration::from_secs(30)]
    })
    .await;
    let org = app.org().await;
    let base = serve(&app).await;
    let c = client(&base, &org.key);
    // A receiver answering the status in `answer` (500 until told otherwise).
    let answer = Arc::new(AtomicU16::new(500));
    let hits = Arc::new(AtomicUsize::new(0));
    let (a, h) = (answer.clone(), hits.clone());
    let receiver = axum::Router::new().route(
        "/hook",
        axum::routing::post(move || {
            let (a, h) = (a.clone(), h.clone());
            async move {
                h.fetch_add(1, Ordering::SeqCst);
                StatusCode::from_u16(a.load(Ordering::SeqCst)).expect("status")
            }
        }),
    );
    let rl = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/hook", rl.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(rl, receiver).await.ok() });

    let hooks = c.webhooks();
    let created = hooks
        .create(&CreateWebhook {
            url: url.clone(),
            events: vec![EventKind::ContactCreated],
            description: Some("crm".into()),
        })
        .await
        .expect("create");
    assert!(created.secret.starts_with("whsec_"), "{}", created.secret);
    let hook = created.webhook.clone();
    assert_eq!(
        (
            hook.url.as_str(),
            hook.status,
            hook.description.as_deref(),
            hook.consecutive_failures
        ),
        (url.as_str(), WebhookStatus::Active, Some("crm"), 0)
    );
    assert_eq!(hooks.list().await.expect("list"), vec![hook.clone()]);
    assert_eq!(hooks.get(hook.id).await.expect("get"), hook);
    let updated = hooks
        .update(
            hook.id,
            &UpdateWebhook {
                events: Some(vec![EventKind::ContactCreated, EventKind::ContactUpdated]),
                description: Some(None),
                ..Default::default()
            },
        )
        .await
        .expect("update");
    assert_eq!(
        updated.events,
        vec![EventKind::ContactCreated, EventKind::ContactUpdated]
    );
    assert_eq!(updated.description, None);
    assert_eq!(updated.url, url, "unchanged");

    // A contact is created; the receiver fails the attempt and its one retry.
    c.contacts()
        .create(&CreateContact {
            full_name: Some("Hooked".into()),
            ..Default::default()
        })
        .await
        .expect("contact");
    assert_eq!(app.deliver().await.delivered, 0);
    app.clock.advance(Duration::seconds(31));
    assert_eq!(app.deliver().await.delivered, 0);
    assert_eq!(hits.load(Ordering::SeqCst), 2);
    let log = hooks.deliveries(hook.id).send().await.expect("deliveries");
    assert_eq!(log.meta.total, 1);
    let d = &log.data[0];
    assert_eq!(
        (d.webhook_id, d.event, d.status, d.attempts),
        (
            hook.id,
            EventKind::ContactCreated,
            DeliveryStatus::Failed,
            2
        )
    );
    assert_eq!(d.attempt_log.len(), 2);
    assert!(d.attempt_log.iter().all(|a| a.status_code == Some(500)));

    // Retried by hand once the receiver is fixed: same delivery, delivered.
    answer.store(200, Ordering::SeqCst);
    let retried = hooks.retry_delivery(hook.id, d.id).await.expect("retry");
    assert_eq!(
        (retried.id, retried.status),
        (d.id, DeliveryStatus::Pending)
    );
    assert_eq!(app.deliver().await.delivered, 1);
    let all: Vec<_> = hooks
        .deliveries(hook.id)
        .page_size(1)
        .stream()
        .try_collect()
        .await
        .expect("stream");
    assert_eq!(all.len(), 1);
    assert_eq!(
        (all[0].id, all[0].status, all[0].attempts),
        (d.id, DeliveryStatus::Delivered, 3)
    );
    assert!(all[0].delivered_at.is_some());
    let twice = hooks
        .retry_delivery(hook.id, d.id)
        .await
        .expect_err("delivered");
    assert!(
        matches!(&twice, Error::Api { status: 400, code: None, message, .. } if message == "Only failed deliveries can be retried."),
        "{twice:?}"
    );

    // Delete.
    assert!(hooks.delete(hook.id).await.expect("delete").deleted);
    assert_eq!(
        hooks.get(hook.id).await.expect_err("gone").status(),
        Some(404)
    );
    assert!(hooks.list().await.expect("list").is_empty());
}
