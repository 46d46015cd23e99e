//! A staggered batch is charged once per interval, even when two workers (or replicas) both
//! listed the campaign as due: the second one finds it no longer due under the lock.

use chrono::Duration;
use serde_json::json;
use wm_server::worker::campaigns::CampaignWorker;

use crate::kit::{campaign_to, contacts, setup, top_up};
use crate::support::{TestApp, ledger};

#[tokio::test]
async fn two_workers_on_a_due_batch_charge_it_once() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let s = setup(&org).await;
    let ids = contacts(&org, 40, "t").await;
    let id = campaign_to(&org, &s, &s.plain, &ids).await;
    top_up(&org, 100.0).await;
    org.post(
        &format!("/campaigns/{id}/send"),
        json!({"when": "staggered", "batchSize": 10, "batchIntervalMin": 5}),
    )
    .await
    .ok(200);
    app.send_pass().await;
    for _ in 0..3 {
        app.clock.advance(Duration::minutes(5));
        let (a, b) = (
            CampaignWorker::new(app.state.clone()),
            CampaignWorker::new(app.state.clone()),
        );
        let (x, y) = tokio::join!(a.run_once(), b.run_once());
        let batches = x.unwrap().batches + y.unwrap().batches;
        assert_eq!(batches, 1, "one batch per interval");
    }
    let w = org.get("/wallet").await.ok(200);
    assert_eq!(ledger(&w, "CHARGE").len(), 4);
    app.send_pass().await;
    let c = org.get(&format!("/campaigns/{id}")).await.ok(200);
    assert_eq!(c["status"], "COMPLETED");
    assert_eq!(c["stats"]["delivered"], 40);
}
