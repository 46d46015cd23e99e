//! wm-client against the real server over TCP: every API-key endpoint through its typed
//! call, the typed errors a caller matches on, and a stream across pages. The operator
//! routes (phone numbers, templates, top-ups, inbound messages, automations) set the scene,
//! and the workers are driven by hand on the manual clock.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU16, AtomicUsize, Ordering};

use axum::http::{Method, StatusCode};
use chrono::{DateTime, Duration, Utc};
use futures::TryStreamExt;
use serde_json::{Value, json};
use uuid::Uuid;
use wm_client::reports::NaiveDate;
use wm_client::types::automations::{
    AutomationStatus, AutomationTab, RunFilter, StepType, TriggerType,
};
use wm_client::types::campaigns::{
    Audience, CampaignStatus, CreateCampaign, LedgerKind, QualityRating, SendCampaign,
    TemplateCategory, TemplateStatus,
};
use wm_client::types::campaigns::{CampaignTab, RecipientFilter, SendWhen};
use wm_client::types::contacts::{
    BulkUpdateContacts, Consent, ContactTab, CreateContact, CreateIdentity, CreateNote,
    TimelineFilter, TimelineKind, UpdateContact,
};
use wm_client::types::conversations::ConversationFilter;
use wm_client::types::conversations::InitiatedBy;
use wm_client::types::enums::{
    ChannelType, ContactSource, ConversationStatus, RecipientStatus, StageCategory,
};
use wm_client::types::events::EventKind;
use wm_client::types::webhooks::{CreateWebhook, DeliveryStatus, UpdateWebhook, WebhookStatus};
use wm_client::{Client, Error, ErrorCode};

use crate::kit::top_up;
use crate::support::{Org, TestApp};

/// Serves the app's router on an ephemeral loopback port; returns the API base URL.
async fn serve(app: &TestApp) -> String {
    serve_router(app.router.clone()).await
}

async fn serve_router(router: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        axum::serve(listener, router).await.ok();
    });
    format!("http://{addr}/api/v1")
}

/// A client on `base` with `key`; no retries, so every answer is the server's first.
/// A client of `base` with `key`, without retries (tests see every answer).
pub fn client(base: &str, key: &str) -> Client {
    Client::builder()
        .base_url(base)
        .api_key(key)
        .max_retries(0)
        .build()
        .expect("client")
}

fn uuid(s: &str) -> Uuid {
    s.parse().expect("uuid")
}

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s)
        .expect("rfc3339")
        .with_timezone(&Utc)
}

fn day(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).expect("date")
}

/// `(number id, plain MARKETING template id, template id with two variables)` added by
/// the operator (the kit's setup).
async fn kit(org: &Org<'_>) -> (Uuid, Uuid, Uuid) {
    let s = crate::kit::setup(org).await;
    (uuid(&s.number), uuid(&s.plain), uuid(&s.with_vars))
}

/// A draft campaign named `name` on `template` whose audience is `ids`.
async fn campaign_to(
    c: &Client,
    name: &str,
    number: Uuid,
    template: Uuid,
    ids: Vec<Uuid>,
) -> wm_types::campaigns::Campaign {
    let campaign = c
        .campaigns()
        .create(&CreateCampaign {
            name: name.into(),
            phone_number_id: number,
            template_id: template,
            scheduled_at: None,
            variables: None,
        })
        .await
        .expect("create");
    c.campaigns()
        .add_recipients(
            campaign.id,
            &Audience {
                contact_ids: Some(ids),
                ..Default::default()
            },
        )
        .await
        .expect("audience");
    campaign
}

/// `n` consenting contacts in Mexico tagged `tag`, created one second apart.
async fn mexicans(app: &TestApp, c: &Client, n: usize, tag: &str, from: usize) -> Vec<Uuid> {
    let mut ids = Vec::new();
    for i in from..from + n {
        app.clock.advance(Duration::seconds(1));
        let created = c
            .contacts()
            .create(&CreateContact {
                full_name: Some(format!("Cliente {i}")),
                primary_phone: Some(format!("+5215512{:06}", i + 1)),
                consent: Some(Consent {
                    given: true,
                    at: None,
                    how: None,
                }),
                tags: Some(vec![tag.to_owned()]),
                ..Default::default()
            })
            .await
            .expect("create contact");
        ids.push(created.id);
    }
    ids
}

#[tokio::test]
async fn contacts_and_lookups_through_the_client() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let base = serve(&app).await;
    let c = client(&base, &org.key);
    let me = uuid(&org.user_id);

    // Lookups to fill ids in.
    let stages = c.lookups().stages().await.expect("stages");
    assert!(
        stages.windows(2).all(|w| w[0].order < w[1].order),
        "funnel order"
    );
    let customer = stages
        .iter()
        .find(|s| s.name == "Customer")
        .expect("Customer stage");
    assert_eq!(customer.category, StageCategory::Customer);
    let users = c.lookups().users().await.expect("users");
    assert_eq!(users.len(), 1);
    assert_eq!(
        (
            users[0].id,
            users[0].full_name.as_str(),
            users[0].email.as_str()
        ),
        (me, "Tess Tester", "tess@example.com")
    );

    // Create: the phone is normalised and gets its MESSAGING_APP_A identity.
    let ana = c
        .contacts()
        .create(&CreateContact {
            full_name: Some("Ana Pérez".into()),
            primary_phone: Some("+52 55 1234 5678".into()),
            country: Some("MX".into()),
            owner_id: Some(me),
            consent: Some(Consent {
                given: true,
                at: None,
                how: None,
            }),
            tags: Some(vec!["VIP".into()]),
            note: Some("Met at the fair".into()),
            ..Default::default()
        })
        .await
        .expect("create ana");
    assert_eq!(ana.organization_id, Some(uuid(&org.id)));
    assert_eq!(ana.primary_phone.as_deref(), Some("+525512345678"));
    assert_eq!(ana.country.as_deref(), Some("MX"));
    assert_eq!(ana.source, ContactSource::Manual);
    assert_eq!(ana.tags, vec!["VIP".to_owned()]);
    assert_eq!(
        ana.owner.as_ref().map(|o| o.full_name.as_str()),
        Some("Tess Tester")
    );
    assert_eq!(ana.identities.len(), 1);
    assert_eq!(ana.identities[0].channel_type, ChannelType::MessagingAppA);
    assert_eq!(ana.identities[0].external_id, "525512345678");
    assert_eq!(ana.open_deals, Some(vec![]));
    app.clock.advance(Duration::seconds(1));
    let bob = c
        .contacts()
        .create(&CreateContact {
            full_name: Some("Bob Stone".into()),
            primary_email: Some("bob@globex.example".into()),
            company: Some("Globex".into()),
            source: Some(ContactSource::Import),
            ..Default::default()
        })
        .await
        .expect("create bob");
    assert!(!bob.consent.given);
    assert!(bob.identities.is_empty());

    // Get returns what create returned.
    assert_eq!(c.contacts().get(ana.id).await.expect("get"), ana);

    // List with filters; list items carry lastConversation (none yet).
    let all = c.contacts().list().send().await.expect("list");
    assert_eq!((all.meta.total, all.tabs.all, all.summary.total), (2, 2, 2));
    assert_eq!(all.data[0].id, bob.id, "newest first");
    assert_eq!(all.data[0].last_conversation, Some(None));
    let only = |l: wm_client::types::contacts::ContactList| -> Vec<Uuid> {
        l.data.iter().map(|x| x.id).collect()
    };
    let contacts = c.contacts();
    assert_eq!(
        only(contacts.list().tag("vip").send().await.expect("tag")),
        vec![ana.id],
        "tags match case-insensitively"
    );
    assert_eq!(
        only(contacts.list().q("globex").send().await.expect("q")),
        vec![bob.id]
    );
    assert_eq!(
        only(
            contacts
                .list()
                .channel_type(ChannelType::MessagingAppA)
                .send()
                .await
                .expect("channel")
        ),
        vec![ana.id]
    );
    assert_eq!(
        only(
            contacts
                .list()
                .tab(ContactTab::NoConsent)
                .send()
                .await
                .expect("tab")
        ),
        vec![bob.id]
    );
    assert_eq!(
        only(contacts.list().owner_id(me).send().await.expect("owner")),
        vec![ana.id]
    );
    assert_eq!(
        only(contacts.list().unowned().send().await.expect("unowned")),
        vec![bob.id]
    );
    assert_eq!(
        only(
            contacts
                .list()
                .source(ContactSource::Import)
                .days(7)
                .send()
                .await
                .expect("source")
        ),
        vec![bob.id]
    );
    assert_eq!(
        contacts
            .list()
            .ids([ana.id, bob.id, Uuid::new_v4()])
            .send()
            .await
            .expect("ids")
            .meta
            .total,
        2
    );

    // Update: only what is sent changes; null clears.
    app.clock.advance(Duration::seconds(1));
    let ana2 = contacts
        .update(
            ana.id,
            &UpdateContact {
                company: Some(Some("Acme".into())),
                lifecycle_stage_id: Some(Some(customer.id)),
                owner_id: Some(None),
                ..Default::default()
            },
        )
        .await
        .expect("update");
    assert_eq!(ana2.company.as_deref(), Some("Acme"));
    assert_eq!(
        ana2.lifecycle_stage.as_ref().map(|s| s.name.as_str()),
        Some("Customer")
    );
    assert_eq!((ana2.owner_id, ana2.owner.as_ref()), (None, None));
    assert_eq!(ana2.full_name.as_deref(), Some("Ana Pérez"), "unchanged");
    assert_eq!(
        only(
            contacts
                .list()
                .lifecycle_stage_id(customer.id)
                .tab(ContactTab::Customers)
                .send()
                .await
                .expect("stage")
        ),
        vec![ana.id]
    );

    // Bulk: ids of no contact of the organisation are skipped.
    let bulk = contacts
        .bulk(&BulkUpdateContacts {
            ids: vec![ana.id, bob.id, Uuid::new_v4()],
            add_tags: Some(vec!["promo".into()]),
            owner_id: Some(Some(me)),
            ..Default::default()
        })
        .await
        .expect("bulk");
    assert_eq!((bulk.updated, bulk.skipped), (2, 1));
    let bob2 = contacts.get(bob.id).await.expect("bob");
    assert_eq!(bob2.tags, vec!["promo".to_owned()]);
    assert_eq!(bob2.owner_id, Some(me));

    // Notes, attributed to the key's user, newest first.
    app.clock.advance(Duration::seconds(1));
    let note = contacts
        .add_note(
            ana.id,
            &CreateNote {
                body: "Called back".into(),
            },
        )
        .await
        .expect("note");
    assert_eq!(
        (
            note.contact_id,
            note.author_id,
            note.author.full_name.as_str()
        ),
        (ana.id, me, "Tess Tester")
    );
    let notes = contacts.notes(ana.id).send().await.expect("notes");
    assert_eq!(notes.meta.total, 2);
    let bodies: Vec<&str> = notes.data.iter().map(|n| n.body.as_str()).collect();
    assert_eq!(bodies, ["Called back", "Met at the fair"]);
    let streamed: Vec<_> = contacts
        .notes(ana.id)
        .page_size(1)
        .stream()
        .try_collect()
        .await
        .expect("notes stream");
    assert_eq!(streamed, notes.data);

    // Timeline: the creation, the stage move, the notes.
    let timeline = contacts.timeline(ana.id).send().await.expect("timeline");
    assert!(
        timeline
            .data
            .iter()
            .any(|e| matches!(e.kind, TimelineKind::Created { .. }))
    );
    assert!(timeline.data.iter().any(|e| matches!(
        &e.kind,
        TimelineKind::Stage { to: Some(to), by, bulk: false, .. } if to == "Customer" && by == "Tess Tester"
    )));
    let only_notes = contacts
        .timeline(ana.id)
        .kind(TimelineFilter::Notes)
        .page_size(10)
        .send()
        .await
        .expect("notes timeline");
    assert_eq!(only_notes.meta.total, 2);
    assert!(matches!(
        &only_notes.data[0].kind,
        TimelineKind::Note { author, body } if author == "Tess Tester" && body == "Called back"
    ));

    // Identities (on a channel the operator activated).
    org.admin(Method::POST, "/channels", Some(json!({"type": "EMAIL"})))
        .await
        .ok(201);
    let email = contacts
        .add_identity(
            ana.id,
            &CreateIdentity {
                channel_type: ChannelType::Email,
                external_id: "ana@example.com".into(),
            },
        )
        .await
        .expect("identity");
    assert_eq!(email.contact_id, ana.id);
    assert_eq!(email.channel.channel_type, ChannelType::Email);
    assert_eq!(email.external_id, "ana@example.com");
    let again = contacts
        .add_identity(
            ana.id,
            &CreateIdentity {
                channel_type: ChannelType::Email,
                external_id: "ana@example.com".into(),
            },
        )
        .await
        .expect("same identity again is 200");
    assert_eq!(again.id, email.id);
    let taken = contacts
        .add_identity(
            bob.id,
            &CreateIdentity {
                channel_type: ChannelType::Email,
                external_id: "ana@example.com".into(),
            },
        )
        .await
        .expect_err("another contact's identity");
    assert_eq!(taken.status(), Some(409));
    assert_eq!(contacts.get(ana.id).await.expect("ana").identities.len(), 2);

    // Delete.
    assert!(contacts.delete(bob.id).await.expect("delete").deleted);
    let gone = contacts.get(bob.id).await.expect_err("deleted");
    assert!(
        matches!(
            gone,
            Error::Api {
                status: 404,
                code: None,
                ..
            }
        ),
        "{gone:?}"
    );
    assert_eq!(contacts.list().send().await.expect("list").meta.total, 1);
}

#[tokio::test]
async fn typed_errors_end_to_end() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let base = serve(&app).await;
    let c = client(&base, &org.key);
    let ana = c
        .contacts()
        .create(&CreateContact {
            full_name: Some("Ana".into()),
            primary_phone: Some("+14155550123".into()),
            ..Default::default()
        })
        .await
        .expect("create");

    // 409 with the extra fields of the body.
    let dup = c
        .contacts()
        .create(&CreateContact {
            primary_phone: Some("+1 (415) 555-0123".into()),
            ..Default::default()
        })
        .await
        .expect_err("duplicate phone");
    assert_eq!(dup.code(), Some(ErrorCode::ContactPhoneExists));
    assert_eq!(dup.status(), Some(409));
    assert!(!dup.is_retryable());
    match &dup {
        Error::Api { body, .. } => {
            assert_eq!(body["contactId"], ana.id.to_string());
            assert_eq!(body["fullName"], "Ana");
        }
        other => panic!("{other:?}"),
    }

    // 400 validation: the messages, one per failed constraint.
    let bad = c
        .contacts()
        .list()
        .page_size(500)
        .send()
        .await
        .expect_err("pageSize");
    assert!(
        matches!(&bad, Error::Validation { messages } if messages == &["pageSize must not be greater than 100"]),
        "{bad:?}"
    );
    let bad = c
        .contacts()
        .create(&CreateContact {
            lifecycle_stage_id: Some(Uuid::new_v4()),
            owner_id: Some(Uuid::new_v4()),
            ..Default::default()
        })
        .await
        .expect_err("unknown stage and owner");
    let Error::Validation { messages } = &bad else {
        panic!("{bad:?}")
    };
    assert!(
        messages.contains(
            &"lifecycleStageId must be a lifecycle stage of this organization".to_owned()
        )
    );
    assert!(messages.contains(&"ownerId must be a user of this organization".to_owned()));
    assert_eq!(bad.status(), Some(400));
    let bad = c
        .reports()
        .wallet()
        .from(day(2026, 11, 12))
        .to(day(2026, 11, 1))
        .send()
        .await
        .expect_err("period");
    assert!(
        matches!(&bad, Error::Validation { messages } if messages == &["from must not be after to"]),
        "{bad:?}"
    );

    // 404 on every kind of resource.
    let nobody = Uuid::new_v4();
    for err in [
        c.contacts().get(nobody).await.expect_err("contact"),
        c.campaigns()
            .get(nobody)
            .await
            .map(|_| ())
            .expect_err("campaign"),
        c.webhooks()
            .get(nobody)
            .await
            .map(|_| ())
            .expect_err("webhook"),
        c.conversations()
            .get(nobody)
            .await
            .map(|_| ())
            .expect_err("conversation"),
        c.automations()
            .get(nobody)
            .await
            .map(|_| ())
            .expect_err("automation"),
    ] {
        assert!(
            matches!(
                err,
                Error::Api {
                    status: 404,
                    code: None,
                    ..
                }
            ),
            "{err:?}"
        );
    }

    // 403: a key without the scope; the message names it.
    let read_only = client(&base, &org.key_with(&["contacts:read"]).await);
    assert_eq!(
        read_only
            .contacts()
            .list()
            .send()
            .await
            .expect("allowed")
            .meta
            .total,
        1
    );
    let denied = read_only
        .contacts()
        .create(&CreateContact::default())
        .await
        .expect_err("write");
    assert_eq!(denied.code(), Some(ErrorCode::ApiKeyScopeMissing));
    assert!(
        matches!(&denied, Error::Api { status: 403, message, .. } if message.contains("contacts:write")),
        "{denied:?}"
    );
    for (scope, err) in [
        (
            "campaigns:read",
            read_only.campaigns().list().send().await.map(|_| ()),
        ),
        (
            "conversations:read",
            read_only.conversations().list().send().await.map(|_| ()),
        ),
        (
            "automations:read",
            read_only.automations().list().send().await.map(|_| ()),
        ),
        (
            "reports:read",
            read_only.reports().team().send().await.map(|_| ()),
        ),
        (
            "webhooks:read",
            read_only.webhooks().list().await.map(|_| ()),
        ),
    ] {
        let err = err.expect_err(scope);
        assert_eq!(err.code(), Some(ErrorCode::ApiKeyScopeMissing), "{scope}");
        assert!(err.to_string().contains(scope), "{scope}: {err}");
    }

    // 403 on a route not open to keys (reached with the raw GET).
    let admin = c
        .get::<Value>("/admin/organizations", &[])
        .await
        .expect_err("operator route");
    assert_eq!(admin.code(), Some(ErrorCode::ApiKeyNotAllowedHere));

    // 401: unknown, then expired.
    let unknown = client(&base, "wm_live_nope");
    assert_eq!(
        unknown
            .contacts()
            .get(ana.id)
            .await
            .expect_err("401")
            .code(),
        Some(ErrorCode::ApiKeyInvalid)
    );
    let expires = (app.clock_now() + Duration::hours(1)).to_rfc3339();
    let short = org
        .admin(
            Method::POST,
            "/api-keys",
            Some(json!({"name": "short", "userId": org.user_id, "scopes": ["contacts:read"], "expiresAt": expires})),
        )
        .await
        .ok(201)["key"]
        .as_str()
        .expect("key")
        .to_owned();
    let short = client(&base, &short);
    short.contacts().get(ana.id).await.expect("still valid");
    app.clock.advance(Duration::hours(2));
    let expired = short.contacts().get(ana.id).await.expect_err("expired");
    assert_eq!(expired.code(), Some(ErrorCode::ApiKeyExpired));
    assert_eq!(expired.status(), Some(401));
}

#[tokio::test]
async fn campaigns_from_draft_to_completed_through_the_client() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let base = serve(&app).await;
    let c = client(&base, &org.key);
    let (number, plain, with_vars) = kit(&org).await;

    // Lookups.
    let numbers = c.lookups().phone_numbers().await.expect("numbers");
    assert_eq!(numbers.len(), 1);
    assert_eq!(
        (
            numbers[0].id,
            numbers[0].number_e164.as_str(),
            numbers[0].display_name.as_str(),
            numbers[0].quality_rating
        ),
        (number, "+525500000001", "Ventas", QualityRating::Green)
    );
    let templates = c.lookups().templates().await.expect("templates");
    let pedido = templates
        .iter()
        .find(|t| t.id == with_vars)
        .expect("pedido");
    assert_eq!(pedido.variables, vec!["1".to_owned(), "2".to_owned()]);
    assert_eq!(
        (pedido.status, pedido.category),
        (TemplateStatus::Approved, TemplateCategory::Marketing)
    );
    assert_eq!(c.lookups().wallet().await.expect("wallet").balance.0, 0);
    top_up(&org, 10.0).await;
    let wallet = c.lookups().wallet().await.expect("wallet");
    assert_eq!(wallet.balance.to_decimal(), 10.0);
    assert_eq!(wallet.recent_entries[0].kind, LedgerKind::TopUp);

    // A draft, an audience, a preview.
    let spring = mexicans(&app, &c, 3, "spring", 0).await;
    c.contacts()
        .create(&CreateContact {
            full_name: Some("Out".into()),
            primary_phone: Some("+5215599000001".into()),
            opted_out: Some(true),
            consent: Some(Consent {
                given: true,
                at: None,
                how: None,
            }),
            tags: Some(vec!["spring".into()]),
            ..Default::default()
        })
        .await
        .expect("opted out");
    let draft = c
        .campaigns()
        .create(&CreateCampaign {
            name: "Spring".into(),
            phone_number_id: number,
            template_id: plain,
            scheduled_at: None,
            variables: None,
        })
        .await
        .expect("create");
    assert_eq!(draft.status, CampaignStatus::Draft);
    assert_eq!(draft.template.name, "promo");
    assert_eq!(
        draft.template.body_text.as_deref(),
        Some("Promo de temporada")
    );
    assert_eq!(draft.phone_number.number_e164, "+525500000001");
    assert_eq!(draft.stats.total, 0);
    let empty = c
        .campaigns()
        .send_now(draft.id)
        .await
        .expect_err("no audience");
    assert!(
        matches!(&empty, Error::Api { status: 400, code: None, message, .. } if message == "La campaña no tiene destinatarios."),
        "{empty:?}"
    );
    let audience = c
        .campaigns()
        .add_recipients(
            draft.id,
            &Audience {
                tag: Some("spring".into()),
                ..Default::default()
            },
        )
        .await
        .expect("audience");
    assert_eq!(
        (
            audience.total,
            audience.opted_out,
            audience.eligible,
            audience.added,
            audience.total_recipients
        ),
        (4, 1, 3, 3, 3)
    );
    let again = c
        .campaigns()
        .add_recipients(
            draft.id,
            &Audience {
                contact_ids: Some(spring.clone()),
                ..Default::default()
            },
        )
        .await
        .expect("same audience");
    assert_eq!((again.added, again.already_in), (0, 3));
    let preview = c.campaigns().preview_cost(draft.id).await.expect("preview");
    assert_eq!(preview.recipient_count, 3);
    assert_eq!(preview.by_market.len(), 1);
    let mx = &preview.by_market[0];
    assert_eq!((mx.market.as_str(), mx.recipient_count), ("MX", 3));
    assert_eq!(preview.estimated_total.0, 3 * mx.total_cost.0);
    assert!(preview.wallet.sufficient);
    assert_eq!(
        preview.wallet.after_send.0,
        preview.wallet.balance.0 - preview.estimated_total.0
    );
    assert_eq!(preview.included_utility_remaining, None, "MARKETING");
    let listed = c.campaigns().list().send().await.expect("list");
    assert_eq!((listed.meta.total, listed.tabs.drafts), (1, 1));

    // Send now; the worker sends and the receipts follow.
    let sending = c.campaigns().send_now(draft.id).await.expect("send");
    assert_eq!(sending.status, CampaignStatus::Sending);
    let twice = c
        .campaigns()
        .send_now(draft.id)
        .await
        .expect_err("sent already");
    assert_eq!(twice.status(), Some(400));
    app.send_pass().await;
    app.send_pass().await;
    let done = c.campaigns().get(draft.id).await.expect("get");
    assert_eq!(done.status, CampaignStatus::Completed);
    assert!(done.completed_at.is_some());
    assert_eq!(
        (done.stats.total, done.stats.sent, done.stats.failed),
        (3, 3, 0)
    );
    assert_eq!(done.real_cost, Some(preview.estimated_total));
    let recipients = c
        .campaigns()
        .recipients(draft.id)
        .send()
        .await
        .expect("recipients");
    assert_eq!(recipients.meta.total, 3);
    let reached: HashSet<Uuid> = recipients.data.iter().map(|r| r.contact.id).collect();
    assert_eq!(reached, spring.iter().copied().collect());
    assert!(
        recipients
            .data
            .iter()
            .all(|r| r.market.as_deref() == Some("MX")
                && r.sent_at.is_some()
                && r.total_cost == mx.total_cost)
    );
    let statuses: HashSet<RecipientStatus> = recipients.data.iter().map(|r| r.status).collect();
    assert!(
        statuses.is_subset(&[RecipientStatus::Sent, RecipientStatus::Delivered].into()),
        "{statuses:?}"
    );
    let failed = c
        .campaigns()
        .recipients(draft.id)
        .filter(RecipientFilter::Failed)
        .send()
        .await
        .expect("failed");
    assert_eq!(failed.meta.total, 0);
    let wallet = c.lookups().wallet().await.expect("wallet");
    let charge = wallet
        .recent_entries
        .iter()
        .find(|e| e.kind == LedgerKind::Charge)
        .expect("a charge");
    assert_eq!(charge.campaign_id, Some(draft.id));
    assert_eq!(charge.amount.0, -preview.estimated_total.0);
    assert_eq!(wallet.balance.0, 10_000_000 - preview.estimated_total.0);

    // Staggered: pause stops the batches, resume continues them.
    let batch = mexicans(&app, &c, 12, "batch", 100).await;
    let staggered = campaign_to(&c, "Batches", number, plain, batch).await;
    let bad = c
        .campaigns()
        .send(
            staggered.id,
            &SendCampaign {
                when: Some(SendWhen::Staggered),
                batch_size: Some(9),
                batch_interval_min: Some(5),
                scheduled_at: None,
            },
        )
        .await
        .expect_err("batch too small");
    assert!(
        matches!(&bad, Error::Validation { messages } if messages.contains(&"batchSize must not be less than 10".to_owned())),
        "{bad:?}"
    );
    let s = c
        .campaigns()
        .send(
            staggered.id,
            &SendCampaign {
                when: Some(SendWhen::Staggered),
                batch_size: Some(10),
                batch_interval_min: Some(1),
                scheduled_at: None,
            },
        )
        .await
        .expect("staggered");
    assert_eq!(
        (s.status, s.batch_size, s.batch_interval_min),
        (CampaignStatus::Sending, Some(10), Some(1))
    );
    let paused = c.campaigns().pause(staggered.id).await.expect("pause");
    assert_eq!(
        (paused.status, paused.stop_reason.as_deref()),
        (CampaignStatus::Paused, None)
    );
    assert!(paused.paused_at.is_some());
    assert_eq!(app.send_pass().await.sent, 0, "paused: nothing goes out");
    let resumed = c.campaigns().resume(staggered.id).await.expect("resume");
    assert_eq!(resumed.status, CampaignStatus::Sending);
    let not_paused = c
        .campaigns()
        .resume(staggered.id)
        .await
        .expect_err("not paused");
    assert_eq!(not_paused.status(), Some(400));
    assert_eq!(app.send_pass().await.sent, 10);
    assert_eq!(
        c.campaigns()
            .get(staggered.id)
            .await
            .expect("get")
            .stats
            .sent,
        10
    );
    app.clock.advance(Duration::minutes(1));
    assert_eq!(app.send_pass().await.sent, 2);
    app.send_pass().await;
    let finished = c.campaigns().get(staggered.id).await.expect("get");
    assert_eq!(
        (finished.status, finished.stats.sent),
        (CampaignStatus::Completed, 12)
    );

    // Duplicate, then the list with its tabs and a stream.
    let copy = c.campaigns().duplicate(draft.id).await.expect("duplicate");
    assert_eq!(
        (copy.status, copy.source_campaign_id, copy.stats.total),
        (CampaignStatus::Draft, Some(draft.id), 0)
    );
    assert_ne!(copy.id, draft.id);
    let list = c.campaigns().list().send().await.expect("list");
    assert_eq!(list.meta.total, 3);
    assert_eq!((list.tabs.drafts, list.tabs.finished), (1, 2));
    assert_eq!(list.data[0].id, copy.id, "newest first");
    assert_eq!(list.summary.sent, 15);
    let drafts = c
        .campaigns()
        .list()
        .tab(CampaignTab::Drafts)
        .send()
        .await
        .expect("drafts");
    assert_eq!(
        drafts.data.iter().map(|x| x.id).collect::<Vec<_>>(),
        vec![copy.id]
    );
    let by_number = c
        .campaigns()
        .list()
        .phone_number_id(number)
        .category(TemplateCategory::Marketing)
        .q("batch")
        .send()
        .await
        .expect("filters");
    assert_eq!(
        by_number.data.iter().map(|x| x.id).collect::<Vec<_>>(),
        vec![staggered.id]
    );
    let every: Vec<_> = c
        .campaigns()
        .list()
        .page_size(1)
        .stream()
        .try_collect()
        .await
        .expect("stream");
    assert_eq!(every.len(), 3);
    let streamed: Vec<_> = c
        .campaigns()
        .recipients(staggered.id)
        .page_size(5)
        .stream()
        .try_collect()
        .await
        .expect("recipients stream");
    assert_eq!(streamed.len(), 12);

    // Business codes of campaigns.
    let needs_vars = campaign_to(&c, "Pedidos", number, with_vars, spring).await;
    let e = c
        .campaigns()
        .send_now(needs_vars.id)
        .await
        .expect_err("vars");
    assert_eq!(e.code(), Some(ErrorCode::CampaignVariablesRequired));
    let other = app.org().await;
    let (theirs, _, _) = kit(&other).await;
    let e = c
        .campaigns()
        .create(&CreateCampaign {
            name: "Not mine".into(),
            phone_number_id: theirs,
            template_id: plain,
            scheduled_at: None,
            variables: None,
        })
        .await
        .expect_err("their number");
    assert_eq!(e.code(), Some(ErrorCode::PhoneNumberNotOwned));
    assert_eq!(e.status(), Some(409));
}

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

    let (from, to) = (day(2026, 11, 10), day(2026, 11, 12));
    let r = c.reports();
    let dates = |series: Vec<String>| {
        assert_eq!(
            series,
            ["2026-11-10", "2026-11-11", "2026-11-12"],
            "every day, in order"
        );
    };

    let commercial = r
        .commercial()
        .from(from)
        .to(to)
        .send()
        .await
        .expect("commercial");
    assert_eq!(
        (
            commercial.period.from.as_str(),
            commercial.period.to.as_str(),
            commercial.period.timezone.as_str()
        ),
        ("2026-11-10", "2026-11-12", "UTC")
    );
    let t = &commercial.totals;
    assert_eq!(
        (t.new_contacts, t.new_customers, t.deals_created),
        (2, 1, 0)
    );
    assert_eq!(
        commercial
            .series
            .iter()
            .map(|d| d.new_contacts)
            .collect::<Vec<_>>(),
        [2, 0, 0]
    );
    dates(commercial.series.into_iter().map(|d| d.date).collect());

    let lifecycle = r
        .lifecycle()
        .from(from)
        .to(to)
        .send()
        .await
        .expect("lifecycle");
    assert_eq!(lifecycle.totals.stage_changes, 1);
    let cust = lifecycle
        .totals
        .by_stage
        .iter()
        .find(|s| s.stage == "Customer")
        .expect("Customer row");
    assert_eq!(
        (cust.stage_id, cust.contacts, cust.entered),
        (Some(customer), 1, 1)
    );
    let none = lifecycle
        .totals
        .by_stage
        .iter()
        .find(|s| s.stage_id.is_none())
        .expect("no stage row");
    assert_eq!(none.contacts, 1);
    dates(lifecycle.series.into_iter().map(|d| d.date).collect());

    let campaigns = r
        .campaigns()
        .from(from)
        .to("2026-11-12")
        .send()
        .await
        .expect("campaigns");
    let t = &campaigns.totals;
    assert_eq!(
        (t.campaigns, t.sent, t.delivered, t.replied, t.failed),
        (1, 2, 2, 1, 0)
    );
    assert_eq!(t.spend, spend);
    assert_eq!(campaigns.series[1].sent, 2);
    dates(campaigns.series.into_iter().map(|d| d.date).collect());

    let wallet = r
        .wallet()
        .from("2026-11-10")
        .to(to)
        .send()
        .await
        .expect("wallet");
    let t = &wallet.totals;
    assert_eq!(t.top_ups.to_decimal(), 10.0);
    assert_eq!(t.charges, spend);
    assert_eq!(t.balance.0, 10_000_000 - spend.0);
    assert_eq!(t.net, t.balance);
    assert_eq!(wallet.series[0].balance.to_decimal(), 10.0);
    assert_eq!(
        wallet.series[2].balance, t.balance,
        "carried over a quiet day"
    );
    assert_eq!(
        c.lookups().wallet().await.expect("wallet").balance,
        t.balance
    );

    let team = r.team().from(from).to(to).send().await.expect("team");
    let member = team
        .totals
        .members
        .iter()
        .find(|m| m.user_id == me)
        .expect("me");
    assert_eq!(member.full_name, "Tess Tester");
    assert_eq!(
        (
            member.contacts_owned,
            member.notes_written,
            member.conversations_assigned,
            member.conversations_resolved
        ),
        (1, 1, 0, 1)
    );
    assert_eq!(
        (
            team.totals.notes_written,
            team.totals.conversations_resolved
        ),
        (1, 1)
    );
    assert_eq!(team.series[0].notes_written, 1);

    let conversations = r
        .conversations()
        .from(from)
        .to(to)
        .send()
        .await
        .expect("conversations");
    let t = &conversations.totals;
    assert_eq!(
        (t.opened, t.resolved, t.open_now, t.avg_resolution_minutes),
        (1, 1, 0, 90)
    );
    assert_eq!(
        (
            conversations.series[1].opened,
            conversations.series[1].resolved
        ),
        (1, 1)
    );

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

#[tokio::test]
async fn a_stream_walks_three_pages_of_contacts() {
    let app = TestApp::new().await;
    let org = app.org().await;
    // The app's router, counting the `GET /contacts` requests it serves.
    let lists = Arc::new(AtomicUsize::new(0));
    let seen = lists.clone();
    let counted = app.router.clone().layer(axum::middleware::from_fn(
        move |req: axum::extract::Request, next: axum::middleware::Next| {
            if req.method() == Method::GET && req.uri().path() == "/api/v1/contacts" {
                seen.fetch_add(1, Ordering::SeqCst);
            }
            next.run(req)
        },
    ));
    let base = serve_router(counted).await;
    let c = client(&base, &org.key);
    let tagged = mexicans(&app, &c, 7, "paged", 0).await;
    mexicans(&app, &c, 2, "other", 50).await;

    let first = c
        .contacts()
        .list()
        .tag("paged")
        .page_size(3)
        .send()
        .await
        .expect("page 1");
    assert_eq!((first.meta.total, first.meta.total_pages), (7, 3));
    lists.store(0, Ordering::SeqCst);
    let streamed: Vec<_> = c
        .contacts()
        .list()
        .tag("paged")
        .page_size(3)
        .stream()
        .try_collect()
        .await
        .expect("stream");
    assert_eq!(lists.load(Ordering::SeqCst), 3, "one request per page");
    let ids: Vec<Uuid> = streamed.iter().map(|x| x.id).collect();
    let newest_first: Vec<Uuid> = tagged.iter().rev().copied().collect();
    assert_eq!(ids, newest_first, "every contact once, in list order");
    assert!(streamed.iter().all(|x| x.tags == ["paged"]));
    // From the builder's page on.
    let rest: Vec<_> = c
        .contacts()
        .list()
        .tag("paged")
        .page(2)
        .page_size(3)
        .stream()
        .try_collect()
        .await
        .expect("from page 2");
    assert_eq!(
        rest.iter().map(|x| x.id).collect::<Vec<_>>(),
        newest_first[3..].to_vec()
    );
    // A page the server refuses ends the stream with the typed error.
    let mut bad = c.contacts().list().page_size(101).stream();
    let err = bad.try_next().await.expect_err("invalid pageSize");
    assert!(matches!(err, Error::Validation { .. }), "{err:?}");
    assert!(bad.try_next().await.expect("ended").is_none());
}
