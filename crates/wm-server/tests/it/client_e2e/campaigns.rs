//! A campaign from draft to completed through the client: audience, preview, send, the
//! list's tabs and summary, recipients and the wallet.

use std::collections::HashSet;

use chrono::Duration;
use futures::TryStreamExt;
use uuid::Uuid;
use wm_client::types::campaigns::{
    Audience, CampaignStatus, CreateCampaign, LedgerKind, QualityRating, SendCampaign,
    TemplateCategory, TemplateStatus,
};
use wm_client::types::campaigns::{CampaignTab, RecipientFilter, SendWhen};
use wm_client::types::contacts::{Consent, CreateContact};
use wm_client::types::enums::RecipientStatus;
use wm_client::{Error, ErrorCode};

use crate::kit::top_up;
use crate::support::TestApp;

use super::{campaign_to, client, kit, mexicans, serve};

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
