//! Conversations and automations (the inbox and its runs) through the client.

use axum::http::Method;
use chrono::Duration;
use futures::TryStreamExt;
use serde_json::{Value, json};
use uuid::Uuid;
use wm_client::types::automations::{
    AutomationStatus, AutomationTab, RunFilter, StepType, TriggerType,
};
use wm_client::types::contacts::{
    Consent, CreateContact, TimelineFilter, TimelineKind, UpdateContact,
};
use wm_client::types::conversations::ConversationFilter;
use wm_client::types::conversations::InitiatedBy;
use wm_client::types::enums::{ChannelType, ConversationStatus};
use wm_client::{Error, ErrorCode};

use crate::kit::top_up;
use crate::support::TestApp;

use super::{client, serve, uuid};

#[tokio::test]
async fn conversations_and_automations_through_the_client() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let base = serve(&app).await;
    let c = client(&base, &org.key);
    let me = uuid(&org.user_id);

    // Two contacts write in; the operator assigns one conversation to the key's user.
    let inbound = |external: &str, name: &str| {
        let body =
            json!({"channelType": "MESSAGING_APP_A", "externalId": external, "fullName": name});
        let org = &org;
        async move {
            org.admin(Method::POST, "/inbound", Some(body))
                .await
                .ok(200)
        }
    };
    let ana = inbound("5215511110001", "Ana").await;
    app.clock.advance(Duration::seconds(1));
    let bea = inbound("5215511110002", "Bea").await;
    let conv = |v: &Value| uuid(v["conversationId"].as_str().expect("conversationId"));
    let (ana_conv, bea_conv) = (conv(&ana), conv(&bea));
    let ana_contact = uuid(ana["contactId"].as_str().expect("contactId"));
    org.admin(
        Method::PATCH,
        &format!("/conversations/{bea_conv}"),
        Some(json!({"assignedToUserId": org.user_id})),
    )
    .await
    .ok(200);

    let one = c.conversations().get(ana_conv).await.expect("get");
    assert_eq!(one.status, ConversationStatus::Open);
    assert_eq!(one.initiated_by, InitiatedBy::Contact);
    assert_eq!(one.contact_id, ana_contact);
    assert_eq!(one.contact.full_name.as_deref(), Some("Ana"));
    assert_eq!(one.contact.primary_phone.as_deref(), Some("+5215511110001"));
    assert_eq!(one.channel.channel_type, ChannelType::MessagingAppA);
    assert_eq!(
        (one.assigned_to_user_id, one.assigned_to.as_ref()),
        (None, None)
    );
    assert!(!one.external_conversation_id.is_empty());
    let theirs = c.conversations().get(bea_conv).await.expect("get");
    assert_eq!(theirs.assigned_to_user_id, Some(me));
    assert_eq!(
        theirs.assigned_to.as_ref().map(|u| u.full_name.as_str()),
        Some("Tess Tester")
    );

    let all = c.conversations().list().send().await.expect("list");
    assert_eq!(all.meta.total, 2);
    assert_eq!(
        (
            all.tabs.all,
            all.tabs.unassigned,
            all.tabs.mine,
            all.tabs.resolved
        ),
        (2, 1, 1, 0)
    );
    assert_eq!(
        (
            all.summary.open,
            all.summary.new_in_period,
            all.summary.unassigned
        ),
        (2, 2, 1)
    );
    let ids = |l: wm_client::types::conversations::ConversationList| -> Vec<Uuid> {
        l.data.iter().map(|x| x.id).collect()
    };
    let list = || c.conversations().list();
    assert_eq!(
        ids(list()
            .filter(ConversationFilter::Unassigned)
            .send()
            .await
            .expect("f")),
        vec![ana_conv]
    );
    assert_eq!(
        ids(list()
            .filter(ConversationFilter::Mine)
            .send()
            .await
            .expect("f")),
        vec![bea_conv]
    );
    assert!(
        ids(list()
            .filter(ConversationFilter::Resolved)
            .send()
            .await
            .expect("f"))
        .is_empty()
    );
    assert_eq!(
        ids(list().q("bea").send().await.expect("q")),
        vec![bea_conv]
    );
    assert_eq!(
        ids(list()
            .contact_id(ana_contact)
            .send()
            .await
            .expect("contact")),
        vec![ana_conv]
    );
    assert_eq!(
        ids(list()
            .assigned_to_user_id(me)
            .send()
            .await
            .expect("assignee")),
        vec![bea_conv]
    );
    assert_eq!(
        ids(list()
            .status(ConversationStatus::Open)
            .channel_type(ChannelType::MessagingAppA)
            .channel_id(one.channel_id)
            .send()
            .await
            .expect("channel")),
        vec![bea_conv, ana_conv],
        "latest activity first"
    );
    assert_eq!(
        list()
            .channel_type(ChannelType::Email)
            .send()
            .await
            .expect("email")
            .meta
            .total,
        0
    );
    let streamed: Vec<_> = list()
        .page_size(1)
        .stream()
        .try_collect()
        .await
        .expect("stream");
    assert_eq!(streamed.len(), 2);
    // The contact side: lastConversation, the timeline, and history blocks deletion.
    let listed = c
        .contacts()
        .list()
        .ids([ana_contact])
        .send()
        .await
        .expect("contact");
    let last = listed.data[0]
        .last_conversation
        .clone()
        .flatten()
        .expect("last conversation");
    assert_eq!((last.id, last.status), (ana_conv, ConversationStatus::Open));
    let t = c
        .contacts()
        .timeline(ana_contact)
        .kind(TimelineFilter::Conversations)
        .send()
        .await
        .expect("timeline");
    assert!(matches!(
        &t.data[0].kind,
        TimelineKind::Conversation { conversation } if conversation.id == ana_conv
    ));
    let e = c.contacts().delete(ana_contact).await.expect_err("history");
    assert_eq!(e.code(), Some(ErrorCode::ContactHasHistory));

    // Automations, defined by the operator.
    org.admin(
        Method::POST,
        "/phone-numbers",
        Some(json!({"numberE164": "+525500000001", "displayName": "Ventas"})),
    )
    .await
    .ok(201);
    org.admin(
        Method::POST,
        "/templates",
        Some(json!({"name": "welcome", "category": "MARKETING", "language": "es", "bodyText": "Bienvenido"})),
    )
    .await
    .ok(201);
    top_up(&org, 1.0).await;
    let welcome = org
        .admin(
            Method::POST,
            "/automations",
            Some(json!({
                "name": "Welcome customers", "status": "ACTIVE",
                "triggerType": "LIFECYCLE_STAGE_ENTERED", "triggerConfig": {"stage": "Customer"},
                "templateKey": "welcome", "createdByUserId": org.user_id,
                "steps": [
                    {"type": "WAIT", "config": {"kind": "MINUTES", "value": 30}},
                    {"type": "CONDITION", "config": {"kind": "CHANNEL_IS", "value": "MESSAGING_APP_A"}},
                    {"type": "ACTION", "config": {"kind": "SEND_TEMPLATE", "value": "welcome"}},
                    {"type": "ACTION", "config": {"kind": "ADD_TAG", "value": "welcomed"}}
                ]
            })),
        )
        .await
        .ok(201);
    let welcome = uuid(welcome["id"].as_str().expect("id"));
    app.clock.advance(Duration::seconds(1));
    let nudge = org
        .admin(
            Method::POST,
            "/automations",
            Some(json!({
                "name": "Nudge the silent", "triggerType": "NO_RESPONSE_DAYS",
                "triggerConfig": {"days": 3}, "createdByUserId": org.user_id,
                "steps": [{"type": "ACTION", "config": {"kind": "ADD_TAG", "value": "silent"}}]
            })),
        )
        .await
        .ok(201);
    let nudge = uuid(nudge["id"].as_str().expect("id"));

    let autos = c.automations();
    let list = autos.list().send().await.expect("list");
    assert_eq!(
        list.data.iter().map(|a| a.id).collect::<Vec<_>>(),
        vec![nudge, welcome],
        "newest first"
    );
    assert_eq!((list.summary.active, list.summary.drafts), (1, 1));
    assert_eq!(list.summary.currency, "USD");
    let only = |l: wm_client::types::automations::AutomationList| -> Vec<Uuid> {
        l.data.iter().map(|a| a.id).collect()
    };
    assert_eq!(
        only(
            autos
                .list()
                .tab(AutomationTab::Active)
                .send()
                .await
                .expect("tab")
        ),
        vec![welcome]
    );
    assert_eq!(
        only(
            autos
                .list()
                .tab(AutomationTab::Drafts)
                .send()
                .await
                .expect("tab")
        ),
        vec![nudge]
    );
    assert_eq!(
        only(
            autos
                .list()
                .trigger(TriggerType::NoResponseDays)
                .send()
                .await
                .expect("trigger")
        ),
        vec![nudge]
    );
    assert_eq!(
        only(
            autos
                .list()
                .q("WELCOME")
                .include_archived(true)
                .send()
                .await
                .expect("q")
        ),
        vec![welcome]
    );
    let a = autos.get(welcome).await.expect("get");
    assert_eq!(a.name, "Welcome customers");
    assert_eq!(a.status, AutomationStatus::Active);
    assert_eq!(a.trigger_type, TriggerType::LifecycleStageEntered);
    assert_eq!(a.trigger_config.get("stage"), Some(&json!("Customer")));
    assert_eq!(a.trigger_label, "When a contact enters the stage Customer");
    assert_eq!(a.steps.len(), 4);
    assert_eq!(a.steps[0].step_type, StepType::Wait);
    assert_eq!(a.steps_summary.len(), 4);
    assert_eq!(a.template_key, "welcome");
    assert_eq!(
        (a.created_by_user_id, a.failure_count, a.runs7d),
        (me, 0, 0)
    );
    assert_eq!(
        autos.get(nudge).await.expect("get").status,
        AutomationStatus::Draft
    );

    // A contact enters Customer: the run waits 30 minutes, then sends and tags.
    let customer = c
        .lookups()
        .stages()
        .await
        .expect("stages")
        .into_iter()
        .find(|s| s.name == "Customer")
        .expect("Customer")
        .id;
    let cami = c
        .contacts()
        .create(&CreateContact {
            full_name: Some("Cami".into()),
            primary_phone: Some("+5215512340001".into()),
            consent: Some(Consent {
                given: true,
                at: None,
                how: None,
            }),
            ..Default::default()
        })
        .await
        .expect("contact");
    c.contacts()
        .update(
            cami.id,
            &UpdateContact {
                lifecycle_stage_id: Some(Some(customer)),
                ..Default::default()
            },
        )
        .await
        .expect("to Customer");
    assert_eq!(app.automation_pass().await.runs, 1);
    let waiting = autos
        .logs(welcome)
        .result(RunFilter::Waiting)
        .send()
        .await
        .expect("waiting");
    assert_eq!(waiting.meta.total, 1);
    assert_eq!(waiting.data[0].finished_at, None);
    app.clock.advance(Duration::minutes(31));
    assert_eq!(app.automation_pass().await.runs, 1);
    let done = autos
        .logs(welcome)
        .result(RunFilter::Completed)
        .page_size(5)
        .send()
        .await
        .expect("completed");
    assert_eq!(done.meta.total, 1);
    let run = &done.data[0];
    assert_eq!(run.automation_id, welcome);
    assert_eq!(run.result, "completed");
    assert_eq!(run.contact.as_ref().map(|x| x.id), Some(cami.id));
    let outcomes: Vec<&str> = run.steps.iter().map(|s| s.outcome.as_str()).collect();
    assert_eq!(outcomes, ["waiting", "passed", "charged", "sent", "done"]);
    assert!(run.finished_at.is_some() && run.error.is_none());
    let every: Vec<_> = autos
        .logs(welcome)
        .page_size(1)
        .stream()
        .try_collect()
        .await
        .expect("stream");
    assert_eq!(every, done.data);
    assert_eq!(
        autos
            .logs(welcome)
            .result(RunFilter::Failed)
            .send()
            .await
            .expect("failed")
            .meta
            .total,
        0
    );
    assert_eq!(
        c.contacts().get(cami.id).await.expect("cami").tags,
        vec!["welcomed".to_owned()]
    );
    let after = autos.get(welcome).await.expect("get");
    assert_eq!(after.runs7d, 1);
    assert!(after.last_run_at.is_some());
    let summary = autos.list().send().await.expect("list").summary;
    assert_eq!((summary.runs7d, summary.templates_sent7d), (1, 1));
    let bad = autos
        .logs(welcome)
        .page_size(101)
        .send()
        .await
        .expect_err("bad page size");
    assert!(matches!(&bad, Error::Validation { .. }), "{bad:?}");
}

#[tokio::test]
async fn a_thread_is_read_and_a_conversation_resolved_through_the_client() {
    use wm_client::types::conversations::UpdateConversation;
    use wm_client::types::messages::{MessageDirection, MessageStatus, MessageType};
    let app = TestApp::new().await;
    let org = app.org().await;
    let base = serve(&app).await;
    let c = client(&base, &org.key);
    let mut conversation = None;
    for i in 0..5 {
        let body = json!({"channelType": "MESSAGING_APP_A", "externalId": "5215511110001",
                          "fullName": "Ana", "text": format!("m{i}")});
        let r = org
            .admin(Method::POST, "/inbound", Some(body))
            .await
            .ok(200);
        conversation = Some(uuid(r["conversationId"].as_str().expect("id")));
        app.clock.advance(Duration::seconds(1));
    }
    let id = conversation.expect("conversation");
    let page = c
        .conversations()
        .messages(id)
        .page_size(2)
        .send()
        .await
        .expect("page");
    assert!(page.meta.has_more);
    assert_eq!(page.data.len(), 2);
    let m = &page.data[0];
    assert_eq!(
        (m.direction, m.message_type, m.status, m.text.as_deref()),
        (
            MessageDirection::Inbound,
            MessageType::Text,
            MessageStatus::Received,
            Some("m4")
        )
    );
    let all: Vec<_> = c
        .conversations()
        .messages(id)
        .page_size(2)
        .stream()
        .try_collect()
        .await
        .expect("stream");
    let texts: Vec<_> = all.iter().filter_map(|m| m.text.clone()).collect();
    assert_eq!(texts, ["m4", "m3", "m2", "m1", "m0"]);
    let older: Vec<_> = c
        .conversations()
        .messages(id)
        .before(all[2].id)
        .stream()
        .try_collect()
        .await
        .expect("stream");
    assert_eq!(older.len(), 2);

    let resolved = c
        .conversations()
        .update(
            id,
            &UpdateConversation {
                status: Some(ConversationStatus::Resolved),
                assigned_to_user_id: Some(Some(uuid(&org.user_id))),
            },
        )
        .await
        .expect("update");
    assert_eq!(resolved.status, ConversationStatus::Resolved);
    assert_eq!(resolved.assigned_to_user_id, Some(uuid(&org.user_id)));
    assert!(resolved.window_expires_at.is_some());
}
