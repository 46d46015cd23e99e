//! After a campaign is sent: read receipts and replies reach its stats, a duplicate starts
//! as a draft, the list's tabs, filters and summary, and other organisations see none of it.

use axum::http::Method;
use serde_json::json;

use crate::kit::{campaign_to, contacts, setup, top_up};
use crate::support::TestApp;

#[tokio::test]
async fn receipts_replies_duplicate_and_the_list() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let s = setup(&org).await;
    let ids = contacts(&org, 3, "t").await;
    let id = campaign_to(&org, &s, &s.utility, &ids).await;
    let p = org.preview_cost(&id).await;
    assert_eq!(p["includedUtilityRemaining"], 0);
    top_up(&org, 5.0).await;
    org.post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .ok(200);
    app.send_pass().await;
    let recipients = org
        .get(&format!("/campaigns/{id}/recipients"))
        .await
        .ok(200);
    // A read receipt and a reply.
    let first_contact = recipients["data"][0]["contact"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let row = {
        use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
        wm_server::db::entities::recipient::Entity::find()
            .filter(
                wm_server::db::entities::recipient::Column::ContactId
                    .eq(first_contact.parse::<uuid::Uuid>().unwrap()),
            )
            .one(&app.state.db.conn)
            .await
            .unwrap()
            .unwrap()
    };
    let pid = row.provider_message_id.unwrap();
    let r = org
        .admin(
            Method::POST,
            "/provider-events",
            Some(json!({"providerMessageId": pid, "status": "READ"})),
        )
        .await
        .ok(200);
    assert_eq!(r["applied"], true);
    let phone = recipients["data"][0]["contact"]["primaryPhone"]
        .as_str()
        .unwrap()
        .trim_start_matches('+')
        .to_owned();
    let r = org
        .admin(
            Method::POST,
            "/inbound",
            Some(json!({"channelType": "MESSAGING_APP_A", "externalId": phone})),
        )
        .await
        .ok(200);
    assert_eq!(
        (r["created"].as_bool(), r["repliedCampaign"].as_bool()),
        (Some(false), Some(true))
    );
    let stranger = org.admin(Method::POST, "/inbound", Some(json!({"channelType": "MESSAGING_APP_A", "externalId": "5215577776666", "fullName": "New"}))).await.ok(200);
    assert_eq!(stranger["created"], true);
    let c = org.get(&format!("/campaigns/{id}")).await.ok(200);
    assert_eq!(c["stats"]["replied"], 1);
    assert_eq!(c["stats"]["read"], 1);
    assert_eq!(c["lastReplies"][0]["contact"]["id"], first_contact);
    assert_eq!(
        org.get(&format!("/campaigns/{id}/recipients?filter=replied"))
            .await
            .ok(200)["meta"]["total"],
        1
    );
    // Duplicate.
    let d = org
        .post(&format!("/campaigns/{id}/duplicate"), json!({}))
        .await
        .ok(201);
    assert_eq!(
        (d["status"].as_str(), d["sourceCampaignId"].as_str()),
        (Some("DRAFT"), Some(id.as_str()))
    );
    assert_eq!(d["stats"]["total"], 0);
    // The list.
    let l = org.get("/campaigns").await.ok(200);
    assert_eq!(l["tabs"]["all"], 2);
    assert_eq!(l["tabs"]["drafts"], 1);
    assert_eq!(l["data"][0]["id"], d["id"], "newest first");
    assert!(
        l["data"][0].get("realCost").is_none(),
        "detail-only fields are not in list items"
    );
    assert_eq!(l["summary"]["campaigns"], 2);
    assert_eq!(l["summary"]["sent"], 3);
    assert_eq!(l["summary"]["replies"], 1);
    assert_eq!(
        org.get("/campaigns?tab=drafts").await.ok(200)["meta"]["total"],
        1
    );
    assert_eq!(
        org.get("/campaigns?category=UTILITY").await.ok(200)["meta"]["total"],
        2
    );
    assert_eq!(
        org.get("/campaigns?category=MARKETING").await.ok(200)["meta"]["total"],
        0
    );
    assert_eq!(
        org.get("/campaigns?q=COPY").await.ok(200)["meta"]["total"],
        1
    );
    org.get("/campaigns?days=366")
        .await
        .assert_invalid("days must not be greater than 365");
    // Another organisation sees none of it.
    let other = app.org().await;
    other
        .get(&format!("/campaigns/{id}"))
        .await
        .assert_error(404, None);
    other
        .post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .assert_error(404, None);
    other
        .get(&format!("/campaigns/{id}/recipients"))
        .await
        .assert_error(404, None);
}
