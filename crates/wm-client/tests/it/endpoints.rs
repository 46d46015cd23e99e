//! Every typed call: method, path, headers, camelCase JSON bodies, success statuses.

use serde_json::{Value, json};
use wiremock::matchers::{body_json, header, method, path};
use wiremock::{Mock, ResponseTemplate};
use wm_client::types::campaigns::{Audience, CreateCampaign, SendCampaign, SendWhen};
use wm_client::types::contacts::{
    BulkUpdateContacts, CreateContact, CreateIdentity, CreateNote, UpdateContact,
};
use wm_client::types::enums::ChannelType;
use wm_client::types::events::EventKind;
use wm_client::types::webhooks::{CreateWebhook, UpdateWebhook, WebhookStatus};

use crate::support::{
    Harness, KEY, api, at, campaign, contact, delivery, id, js, note, phone_number, stage,
    template, user, wallet, webhook,
};

/// Mounts `verb route` answering `status` + `body`, expected once.
async fn on(h: &Harness, verb: &str, route: &str, status: u16, body: Value) {
    Mock::given(method(verb))
        .and(path(api(route)))
        .respond_with(ResponseTemplate::new(status).set_body_json(body))
        .expect(1)
        .mount(&h.server)
        .await;
}

/// The JSON body the server received for the `n`th request.
async fn sent_body(h: &Harness, n: usize) -> Value {
    serde_json::from_slice(&h.requests().await[n].body).expect("json body")
}

#[tokio::test]
async fn every_request_carries_the_bearer_key_and_accepts_json() {
    let h = Harness::with(|b| b.user_agent("tests/1.0")).await;
    Mock::given(method("GET"))
        .and(header("authorization", format!("Bearer {KEY}").as_str()))
        .and(header("accept", "application/json"))
        .and(header("user-agent", "tests/1.0"))
        .respond_with(ResponseTemplate::new(200).set_body_json(js(&wallet())))
        .expect(1)
        .mount(&h.server)
        .await;
    assert_eq!(h.client.lookups().wallet().await.expect("wallet"), wallet());
}

#[tokio::test]
async fn bodies_are_camel_case_json_and_patch_nulls_are_sent() {
    let h = Harness::new().await;
    Mock::given(method("POST"))
        .and(path(api("/contacts")))
        .and(header("content-type", "application/json"))
        .and(body_json(json!({
            "fullName": "Ana",
            "primaryPhone": "+14155550123",
            "lifecycleStageId": id(3),
            "optedOut": false,
            "tags": ["vip"]
        })))
        .respond_with(ResponseTemplate::new(201).set_body_json(js(&contact(1))))
        .expect(1)
        .mount(&h.server)
        .await;
    Mock::given(method("PATCH"))
        .and(path(api(&format!("/contacts/{}", id(1)))))
        .and(body_json(json!({"company": "Acme", "ownerId": null})))
        .respond_with(ResponseTemplate::new(200).set_body_json(js(&contact(1))))
        .expect(1)
        .mount(&h.server)
        .await;

    let created = h
        .client
        .contacts()
        .create(&CreateContact {
            full_name: Some("Ana".into()),
            primary_phone: Some("+14155550123".into()),
            lifecycle_stage_id: Some(id(3)),
            opted_out: Some(false),
            tags: Some(vec!["vip".into()]),
            ..Default::default()
        })
        .await
        .expect("201 decodes");
    assert_eq!(created, contact(1));
    h.client
        .contacts()
        .update(
            id(1),
            &UpdateContact {
                company: Some(Some("Acme".into())),
                owner_id: Some(None),
                ..Default::default()
            },
        )
        .await
        .expect("patch");
}

#[tokio::test]
async fn contact_endpoints() {
    let h = Harness::new().await;
    let c = id(1);
    on(&h, "GET", &format!("/contacts/{c}"), 200, js(&contact(1))).await;
    on(
        &h,
        "DELETE",
        &format!("/contacts/{c}"),
        200,
        json!({"deleted": true}),
    )
    .await;
    on(
        &h,
        "POST",
        "/contacts/bulk",
        201,
        json!({"updated": 2, "skipped": 1}),
    )
    .await;
    on(
        &h,
        "POST",
        &format!("/contacts/{c}/notes"),
        201,
        js(&note(7)),
    )
    .await;
    let identity = json!({
        "id": id(8), "contactId": c, "channelId": id(9),
        "channel": {"id": id(9), "type": "EMAIL"}, "externalId": "ana@example.com"
    });
    on(
        &h,
        "POST",
        &format!("/contacts/{c}/identities"),
        201,
        identity,
    )
    .await;

    let contacts = h.client.contacts();
    assert_eq!(contacts.get(c).await.expect("get"), contact(1));
    assert!(contacts.delete(c).await.expect("delete").deleted);
    let bulk = contacts
        .bulk(&BulkUpdateContacts {
            ids: vec![id(1), id(2), id(3)],
            add_tags: Some(vec!["x".into()]),
            owner_id: Some(None),
            ..Default::default()
        })
        .await
        .expect("bulk");
    assert_eq!((bulk.updated, bulk.skipped), (2, 1));
    assert_eq!(
        sent_body(&h, 2).await,
        json!({"ids": [id(1), id(2), id(3)], "addTags": ["x"], "ownerId": null})
    );
    let n = contacts
        .add_note(c, &CreateNote { body: "hi".into() })
        .await
        .expect("note");
    assert_eq!(n, note(7));
    assert_eq!(sent_body(&h, 3).await, json!({"body": "hi"}));
    let ident = contacts
        .add_identity(
            c,
            &CreateIdentity {
                channel_type: ChannelType::Email,
                external_id: "ana@example.com".into(),
            },
        )
        .await
        .expect("identity");
    assert_eq!(ident.contact_id, c);
    assert_eq!(
        sent_body(&h, 4).await,
        json!({"channelType": "EMAIL", "externalId": "ana@example.com"})
    );
}

#[tokio::test]
async fn campaign_endpoints() {
    let h = Harness::new().await;
    let k = id(1);
    on(&h, "POST", "/campaigns", 201, js(&campaign(1))).await;
    on(&h, "GET", &format!("/campaigns/{k}"), 200, js(&campaign(1))).await;
    let audience = json!({"total": 3, "optedOut": 1, "withoutPhone": 0, "unpriceable": 0,
        "eligible": 2, "added": 2, "alreadyIn": 0, "totalRecipients": 2});
    on(
        &h,
        "POST",
        &format!("/campaigns/{k}/recipients"),
        200,
        audience,
    )
    .await;
    let preview = json!({
        "currency": "USD", "recipientCount": 2, "priceableCount": 2, "unpriceableCount": 0,
        "estimatedTotal": 0.05,
        "byMarket": [{"market": "US", "label": "United States", "recipientCount": 2,
            "totalCost": 0.025, "subtotal": 0.05, "rateEffectiveFrom": "2026-07-01"}],
        "wallet": {"balance": 10.0, "afterSend": 9.95, "sufficient": true},
        "includedUtilityRemaining": null
    });
    on(
        &h,
        "GET",
        &format!("/campaigns/{k}/preview-cost"),
        200,
        preview,
    )
    .await;
    Mock::given(method("POST"))
        .and(path(api(&format!("/campaigns/{k}/send"))))
        .respond_with(ResponseTemplate::new(200).set_body_json(js(&campaign(1))))
        .expect(2)
        .mount(&h.server)
        .await;
    on(
        &h,
        "POST",
        &format!("/campaigns/{k}/pause"),
        200,
        js(&campaign(1)),
    )
    .await;
    on(
        &h,
        "POST",
        &format!("/campaigns/{k}/resume"),
        200,
        js(&campaign(1)),
    )
    .await;
    on(
        &h,
        "POST",
        &format!("/campaigns/{k}/duplicate"),
        201,
        js(&campaign(2)),
    )
    .await;

    let campaigns = h.client.campaigns();
    let mut vars = serde_json::Map::new();
    vars.insert("1".into(), json!("{{firstName}}"));
    let created = campaigns
        .create(&CreateCampaign {
            name: "Promo".into(),
            phone_number_id: id(700),
            template_id: id(600),
            scheduled_at: None,
            variables: Some(vars),
        })
        .await
        .expect("create");
    assert_eq!(created, campaign(1));
    assert_eq!(
        sent_body(&h, 0).await,
        json!({"name": "Promo", "phoneNumberId": id(700), "templateId": id(600),
            "variables": {"1": "{{firstName}}"}})
    );
    assert_eq!(campaigns.get(k).await.expect("get"), campaign(1));
    let added = campaigns
        .add_recipients(
            k,
            &Audience {
                tag: Some("vip".into()),
                ..Default::default()
            },
        )
        .await
        .expect("audience");
    assert_eq!(added.eligible, 2);
    assert_eq!(sent_body(&h, 2).await, json!({"tag": "vip"}));
    assert!(
        campaigns
            .preview_cost(k)
            .await
            .expect("preview")
            .wallet
            .sufficient
    );
    campaigns
        .send(
            k,
            &SendCampaign {
                when: Some(SendWhen::Staggered),
                batch_size: Some(100),
                batch_interval_min: Some(5),
                scheduled_at: None,
            },
        )
        .await
        .expect("send");
    assert_eq!(
        sent_body(&h, 4).await,
        json!({"when": "staggered", "batchSize": 100, "batchIntervalMin": 5}),
        "unset fields are left out, not null"
    );
    campaigns.send_now(k).await.expect("send now");
    let reqs = h.requests().await;
    assert!(reqs[5].body.is_empty(), "send_now has no body");
    assert!(!reqs[5].headers.contains_key("content-type"));
    campaigns.pause(k).await.expect("pause");
    campaigns.resume(k).await.expect("resume");
    assert_eq!(campaigns.duplicate(k).await.expect("dup"), campaign(2));
}

#[tokio::test]
async fn webhook_endpoints() {
    let h = Harness::new().await;
    let w = id(1);
    on(
        &h,
        "GET",
        "/webhooks",
        200,
        json!({"data": [js(&webhook(1))]}),
    )
    .await;
    let mut created = js(&webhook(1));
    created["secret"] = json!("whsec_abc");
    on(&h, "POST", "/webhooks", 201, created).await;
    on(&h, "GET", &format!("/webhooks/{w}"), 200, js(&webhook(1))).await;
    on(&h, "PATCH", &format!("/webhooks/{w}"), 200, js(&webhook(1))).await;
    on(
        &h,
        "DELETE",
        &format!("/webhooks/{w}"),
        200,
        json!({"deleted": true}),
    )
    .await;
    on(
        &h,
        "POST",
        &format!("/webhooks/{w}/deliveries/{}/retry", id(5)),
        202,
        js(&delivery(5)),
    )
    .await;

    let hooks = h.client.webhooks();
    assert_eq!(hooks.list().await.expect("list"), vec![webhook(1)]);
    let made = hooks
        .create(&CreateWebhook {
            url: "https://example.com/hook".into(),
            events: vec![EventKind::ContactCreated, EventKind::CampaignFinished],
            description: None,
        })
        .await
        .expect("create");
    assert_eq!(made.secret, "whsec_abc");
    assert_eq!(made.webhook, webhook(1));
    assert_eq!(
        sent_body(&h, 1).await,
        json!({"url": "https://example.com/hook", "events": ["contact.created", "campaign.finished"]})
    );
    assert_eq!(hooks.get(w).await.expect("get"), webhook(1));
    hooks
        .update(
            w,
            &UpdateWebhook {
                status: Some(WebhookStatus::Active),
                description: Some(None),
                ..Default::default()
            },
        )
        .await
        .expect("patch");
    assert_eq!(
        sent_body(&h, 3).await,
        json!({"description": null, "status": "ACTIVE"})
    );
    assert!(hooks.delete(w).await.expect("delete").deleted);
    assert_eq!(
        hooks.retry_delivery(w, id(5)).await.expect("202"),
        delivery(5)
    );
}

#[tokio::test]
async fn lookup_endpoints() {
    let h = Harness::new().await;
    on(
        &h,
        "GET",
        "/lifecycle-stages",
        200,
        json!({"data": [js(&stage(1))]}),
    )
    .await;
    on(&h, "GET", "/users", 200, json!({"data": [js(&user(2))]})).await;
    on(
        &h,
        "GET",
        "/templates",
        200,
        json!({"data": [js(&template(3))]}),
    )
    .await;
    on(
        &h,
        "GET",
        "/phone-numbers",
        200,
        json!({"data": [js(&phone_number(4))]}),
    )
    .await;
    on(&h, "GET", "/wallet", 200, js(&wallet())).await;

    let l = h.client.lookups();
    assert_eq!(l.stages().await.expect("stages"), vec![stage(1)]);
    assert_eq!(l.users().await.expect("users"), vec![user(2)]);
    assert_eq!(l.templates().await.expect("templates"), vec![template(3)]);
    assert_eq!(
        l.phone_numbers().await.expect("numbers"),
        vec![phone_number(4)]
    );
    assert_eq!(l.wallet().await.expect("wallet"), wallet());
}

#[tokio::test]
async fn raw_get_reaches_untyped_endpoints_and_bad_bodies_are_decode_errors() {
    let h = Harness::new().await;
    Mock::given(method("GET"))
        .and(path(api("/conversations")))
        .and(wiremock::matchers::query_param("status", "OPEN"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"data": [], "at": at()})))
        .expect(1)
        .mount(&h.server)
        .await;
    on(
        &h,
        "GET",
        &format!("/contacts/{}", id(1)),
        200,
        json!({"id": "nope"}),
    )
    .await;
    let v: Value = h
        .client
        .get("/conversations", &[("status", "OPEN")])
        .await
        .expect("raw");
    assert_eq!(v["data"], json!([]));
    let err = h.client.contacts().get(id(1)).await.expect_err("decode");
    assert!(
        matches!(err, wm_client::Error::Decode(ref m) if m.starts_with("GET /contacts/")),
        "{err:?}"
    );
    assert!(!err.is_retryable());
}
