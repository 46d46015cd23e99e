//! The six reports through the client.

use axum::http::Method;
use chrono::Duration;
use serde_json::json;
use wm_client::Error;
use wm_client::types::contacts::{Consent, CreateContact, CreateNote, UpdateContact};

use crate::kit::top_up;
use crate::support::TestApp;

use super::{at, campaign_to, client, day, kit, serve, uuid};

#[tokio::test]
async fn all_six_reports_through_the_client() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let base = serve(&app).await;
    let c = client(&base, &org.key);
    let me = uuid(&org.user_id);

    // Day 1: two contacts, one becomes a customer, a note, a top-up.
    app.clock.set(at("2026-11-10T12:00:00Z"));
    let customer = c
        .lookups()
        .stages()
        .await
        .expect("stages")
        .into_iter()
        .find(|s| s.name == "Customer")
        .expect("Customer")
        .id;
    let consent = || {
        Some(Consent {
            given: true,
            at: None,
            how: None,
        })
    };
    let a = c
        .contacts()
        .create(&CreateContact {
            full_name: Some("A".into()),
            primary_phone: Some("+5215512300001".into()),
            consent: consent(),
            owner_id: Some(me),
            ..Default::default()
        })
        .await
        .expect("a");
    let b = c
        .contacts()
        .create(&CreateContact {
            full_name: Some("B".into()),
            primary_phone: Some("+5215512300002".into()),
            consent: consent(),
            ..Default::default()
        })
        .await
        .expect("b");
    c.contacts()
        .update(
            a.id,
            &UpdateContact {
                lifecycle_stage_id: Some(Some(customer)),
                ..Default::default()
            },
        )
        .await
        .expect("customer");
    c.contacts()
        .add_note(
            a.id,
            &CreateNote {
                body: "called".into(),
            },
        )
        .await
        .expect("note");
    top_up(&org, 10.0).await;

    // Day 2: a campaign to both, a reply that opens a conversation, resolved 90 min later.
    app.clock.set(at("2026-11-11T12:00:00Z"));
    let (number, plain, _) = kit(&org).await;
    let k = campaign_to(&c, "C1", number, plain, vec![a.id, b.id]).await;
    c.campaigns().send_now(k.id).await.expect("send");
    app.send_pass().await;
    app.send_pass().await;
    let reply = org
        .admin(
            Method::POST,
            "/inbound",
            Some(json!({"channelType": "MESSAGING_APP_A", "externalId": "5215512300001"})),
        )
        .await
        .ok(200);
    assert_eq!(reply["repliedCampaign"], true);
    let conv = reply["conversationId"]
        .as_str()
        .expect("conversation")
        .to_owned();
    app.clock.advance(Duration::minutes(90));
    org.admin(
        Method::PATCH,
        &format!("/conversations/{conv}"),
        Some(json!({"assignedToUserId": org.user_id, "status": "RESOLVED"})),
    )
    .await
    .ok(200);
    let spend = c
        .campaigns()
        .get(k.id)
        .await
        .expect("campaign")
        .real_cost
        .expect("cost");
    app.clock.set(at("2026-11-12T12:00:00Z"));

    // The numbers are the reports suite's business (tests/it/reports.rs); here each typed
    // report must carry exactly what the server answered, field for field.
    let (from, to) = (day(2026, 11, 10), day(2026, 11, 12));
    let r = c.reports();
    let raw = |name: &str| {
        let org = &org;
        let path = format!("/reports/{name}?from=2026-11-10&to=2026-11-12");
        async move { org.get(&path).await.ok(200) }
    };
    let typed = json!({
        "commercial": r.commercial().from(from).to(to).send().await.expect("commercial"),
        "lifecycle": r.lifecycle().from(from).to(to).send().await.expect("lifecycle"),
        "campaigns": r.campaigns().from(from).to("2026-11-12").send().await.expect("campaigns"),
        "wallet": r.wallet().from("2026-11-10").to(to).send().await.expect("wallet"),
        "team": r.team().from(from).to(to).send().await.expect("team"),
        "conversations": r.conversations().from(from).to(to).send().await.expect("conversations"),
    });
    for name in [
        "commercial",
        "lifecycle",
        "campaigns",
        "wallet",
        "team",
        "conversations",
    ] {
        assert_eq!(typed[name], raw(name).await, "{name}");
    }
    // The scene made every report non-trivial, so the comparison compares something.
    assert_eq!(
        typed["campaigns"]["totals"]["spend"],
        json!(spend.to_decimal())
    );
    assert_eq!(typed["conversations"]["totals"]["resolved"], 1);
    assert_eq!(typed["lifecycle"]["totals"]["stageChanges"], 1);

    // No period: the 30 days ending today.
    let default = r.wallet().send().await.expect("default period");
    assert_eq!(default.series.len(), 30);
    assert_eq!(default.period.to, "2026-11-12");
    let bad = r
        .commercial()
        .from("yesterday")
        .send()
        .await
        .expect_err("bad date");
    assert!(
        matches!(&bad, Error::Validation { messages } if messages == &["from must be a date (YYYY-MM-DD)"]),
        "{bad:?}"
    );
}
