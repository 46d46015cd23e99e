//! Contacts, their identities, notes, timeline and bulk changes, and the lookups, through
//! the client.

use axum::http::Method;
use chrono::Duration;
use futures::TryStreamExt;
use serde_json::json;
use uuid::Uuid;
use wm_client::Error;
use wm_client::types::contacts::{
    BulkUpdateContacts, Consent, ContactTab, CreateContact, CreateIdentity, CreateNote,
    TimelineFilter, TimelineKind, UpdateContact,
};
use wm_client::types::enums::{ChannelType, ContactSource, StageCategory};

use crate::support::TestApp;

use super::{client, serve, uuid};

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
