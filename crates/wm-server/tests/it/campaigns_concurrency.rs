//! Campaign sends under concurrency and crashes: one of two sends wins, the wallet never goes
//! below zero and its ledger reads in the order the charges committed, and a restart
//! mid-send neither sends nor charges a recipient twice.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use chrono::Duration;
use serde_json::{Value, json};
use wm_core::provider::{Accepted, MessagingProvider, OutboundMessage, SendError};

use crate::kit::{campaign, campaign_to, contacts, recipients, setup, top_up};
use crate::support::{IdOf, TestApp};

const SPAIN: &str = "Saldo insuficiente en la wallet.";

#[tokio::test]
async fn two_concurrent_sends_of_one_campaign_one_wins() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let s = setup(&org).await;
    let ids = contacts(&org, 3, "t").await;
    let id = campaign_to(&org, &s, &s.plain, &ids).await;
    top_up(&org, 10.0).await;
    let path = format!("/campaigns/{id}/send");
    let (a, b) = tokio::join!(org.post(&path, json!({})), org.post(&path, json!({})));
    let mut statuses = [a.status.as_u16(), b.status.as_u16()];
    statuses.sort_unstable();
    assert_eq!(statuses, [200, 400]);
    let w = org.get("/wallet").await.ok(200);
    assert_eq!(
        w["recentEntries"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["kind"] == "CHARGE")
            .count(),
        1
    );
}

/// Every entry's `balanceAfter` is the previous one's plus its amount, oldest first.
fn assert_reads_in_order(entries: &[(i64, i64)], what: &str) {
    for pair in entries.windows(2) {
        let [(_, before), (amount, after)] = pair else {
            unreachable!()
        };
        assert_eq!(
            before + amount,
            *after,
            "{what}: an entry of {amount} after a balance of {before} reads {after}: {entries:?}"
        );
    }
}

#[tokio::test]
async fn the_ledger_reads_in_the_order_concurrent_charges_committed() {
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};
    use wm_server::db::entities::ledger_entry;
    let app = TestApp::new().await;
    let org = app.org().await;
    let s = setup(&org).await;
    let ids = contacts(&org, 1, "t").await;
    let mut paths = Vec::new();
    for _ in 0..40 {
        let id = campaign_to(&org, &s, &s.plain, &ids).await;
        paths.push(format!("/campaigns/{id}/send"));
    }
    top_up(&org, 100.0).await;
    // The clock moves while the sends wait for the wallet: each takes its time before its
    // turn, so the order of their times is not the order they commit in.
    let clock = app.clock.clone();
    let ticking = tokio::spawn(async move {
        loop {
            clock.advance(Duration::milliseconds(1));
            tokio::time::sleep(std::time::Duration::from_micros(200)).await;
        }
    });
    let sends = paths.iter().map(|p| org.post(p, json!({})));
    let results = futures::future::join_all(sends).await;
    ticking.abort();
    assert!(results.iter().all(|r| r.status == 200));
    // As the API lists it (newest first), read top to bottom from the oldest.
    let w = org.get("/wallet").await.ok(200);
    let micros = |v: &Value| (v.as_f64().unwrap() * 1e6).round() as i64;
    let mut listed: Vec<(i64, i64)> = w["recentEntries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (micros(&e["amount"]), micros(&e["balanceAfter"])))
        .collect();
    listed.reverse();
    assert_eq!(listed.len(), 41, "the top-up and 40 charges");
    assert_reads_in_order(&listed, "GET /wallet");
    assert_eq!(listed.last().unwrap().1, micros(&w["balance"]));
    // As stored: numbered 1, 2, 3… in the same order.
    let rows = ledger_entry::Entity::find()
        .filter(ledger_entry::Column::OrganizationId.eq(org.id.parse::<uuid::Uuid>().unwrap()))
        .order_by_asc(ledger_entry::Column::Seq)
        .all(&app.state.db.conn)
        .await
        .unwrap();
    let seqs: Vec<i64> = rows.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (1..=41).collect::<Vec<i64>>());
    let stored: Vec<(i64, i64)> = rows
        .iter()
        .map(|e| (e.amount_micros, e.balance_after_micros))
        .collect();
    assert_eq!(stored, listed);
    assert_reads_in_order(&stored, "ledger_entries by seq");
}

#[tokio::test]
async fn concurrent_sends_never_take_the_wallet_below_zero() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let s = setup(&org).await;
    let ids = contacts(&org, 4, "t").await;
    let mut campaigns = Vec::new();
    for _ in 0..6 {
        let id = campaign_to(&org, &s, &s.plain, &ids).await;
        campaigns.push(id);
    }
    let cost = org.preview_cost(&campaigns[0]).await["estimatedTotal"]
        .as_f64()
        .unwrap();
    top_up(&org, cost * 2.5).await;
    let paths: Vec<String> = campaigns
        .iter()
        .map(|id| format!("/campaigns/{id}/send"))
        .collect();
    let sends = paths
        .iter()
        .map(|p| org.post(p, json!({})))
        .collect::<Vec<_>>();
    let results = futures::future::join_all(sends).await;
    let won = results.iter().filter(|r| r.status == 200).count();
    assert_eq!(
        won,
        2,
        "{:?}",
        results.iter().map(|r| r.status).collect::<Vec<_>>()
    );
    assert!(
        results
            .iter()
            .filter(|r| r.status != 200)
            .all(|r| r.body["message"] == SPAIN)
    );
    let w = org.get("/wallet").await.ok(200);
    let left = w["balance"].as_f64().unwrap();
    assert!(left >= 0.0 && (left - cost * 0.5).abs() < 1e-6, "{left}");
}

/// A platform that hangs after `n` accepted messages (the accepted ones are already on the
/// platform when the "crash" happens).
struct HangsAfter {
    inner: wm_server::provider::simulated::SimulatedProvider,
    n: usize,
    seen: AtomicUsize,
}

#[async_trait::async_trait]
impl MessagingProvider for HangsAfter {
    fn name(&self) -> &'static str {
        "hangs-after"
    }

    async fn send(&self, m: &OutboundMessage) -> Result<Accepted, SendError> {
        let r = self.inner.send(m).await;
        if self.seen.fetch_add(1, Ordering::SeqCst) + 1 >= self.n {
            std::future::pending::<()>().await;
        }
        r
    }
}

#[tokio::test]
async fn a_restart_mid_send_sends_and_charges_each_recipient_exactly_once() {
    use sea_orm::EntityTrait;
    let app = TestApp::new().await;
    let org = app.org().await;
    let s = setup(&org).await;
    let ids = contacts(&org, 30, "t").await;
    let id = campaign_to(&org, &s, &s.plain, &ids).await;
    let cost = org.preview_cost(&id).await["estimatedTotal"]
        .as_f64()
        .unwrap();
    top_up(&org, 20.0).await;
    org.post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .ok(200);
    // The server dies in the middle: the 7th message reached the platform, its result never
    // got recorded.
    let hanging = Arc::new(HangsAfter {
        inner: wm_server::provider::simulated::SimulatedProvider::new(
            app.state.db.clone(),
            app.state.clock.clone(),
        ),
        n: 7,
        seen: AtomicUsize::new(0),
    });
    // It dies once every call it recorded as begun is one the platform holds.
    let crashed = app.restart(Some(hanging.clone()));
    app.crash_mid_send(crashed, || async {
        let hung = hanging
            .seen
            .load(Ordering::SeqCst)
            .saturating_sub(hanging.n - 1);
        hung > 0 && app.calls_in_flight().await == hung as u64
    })
    .await;
    // Restarted: the lease expires and the rest goes out.
    app.clock.advance(Duration::minutes(2));
    app.send_pass().await;
    app.send_pass().await;
    let c = org.get(&format!("/campaigns/{id}")).await.ok(200);
    assert_eq!(c["status"], "COMPLETED");
    assert_eq!(c["stats"]["sent"], 30);
    // The simulated platform keeps every send (no de-duplication): 30 rows, one per
    // recipient, including those whose answers the crash lost (their receipts settled them).
    use wm_server::db::entities::simulated_send;
    let sends = simulated_send::Entity::find()
        .all(&app.state.db.conn)
        .await
        .unwrap();
    assert_eq!(
        sends.len(),
        30,
        "each recipient reached the platform exactly once"
    );
    let mut correlations: Vec<&str> = sends.iter().map(|s| s.correlation_id.as_str()).collect();
    correlations.sort_unstable();
    correlations.dedup();
    assert_eq!(correlations.len(), 30);
    assert_eq!(c["stats"]["delivered"], 30, "no receipt lost");
    let w = org.get("/wallet").await.ok(200);
    let charges: Vec<&Value> = w["recentEntries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "CHARGE")
        .collect();
    assert_eq!(charges.len(), 1);
    assert!(
        (20.0 - w["balance"].as_f64().unwrap() - cost).abs() < 1e-9,
        "charged exactly once"
    );
}

#[tokio::test]
async fn receipts_taken_but_not_applied_before_a_crash_are_not_lost() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let s = setup(&org).await;
    let ids = contacts(&org, 5, "t").await;
    let id = campaign_to(&org, &s, &s.plain, &ids).await;
    top_up(&org, 10.0).await;
    org.post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .ok(200);
    // A worker sends, takes the simulated platform's receipts, and dies before it applies
    // them.
    let crashed = app.restart(None);
    let out = wm_server::worker::dispatch::send_queued(&crashed)
        .await
        .unwrap();
    assert_eq!(out.sent, 5);
    let taken = crashed
        .provider_for(wm_types::enums::ChannelType::MessagingAppA)
        .unwrap()
        .sender
        .receipts()
        .await
        .unwrap();
    assert_eq!(taken.len(), 5);
    drop((taken, crashed));
    // Restarted: the receipts are still there for it.
    app.send_pass().await;
    let c = org.get(&format!("/campaigns/{id}")).await.ok(200);
    assert_eq!(c["status"], "COMPLETED", "{c}");
    assert_eq!(c["stats"]["delivered"], 5, "{c}");
    assert_eq!(c["stats"]["pending"], 0);
}

/// Contacts deleted while an audience is added: each delete answers 200 (the contact was not
/// in the audience yet, and never will be) or 409 (it already was), the audience answers
/// 200, and the audience holds exactly the contacts that were not deleted.
#[tokio::test]
async fn contacts_deleted_while_an_audience_is_added_are_in_it_or_gone() {
    let app = TestApp::with_settings(|s| s.audience_step = 2).await;
    let org = app.org().await;
    let s = setup(&org).await;
    let mut kept = 0;
    for round in 0..6 {
        // Contacts of this round only: a contact in an earlier round's audience has history.
        let mut fresh = Vec::new();
        for i in 0..30 {
            let c = org
                .contact(json!({"primaryPhone": format!("+52155{round:02}{i:05}"),
                                "consent": {"given": true}}))
                .await;
            fresh.push(c.id().to_owned());
        }
        let id = campaign(&org, &s, &s.plain).await;
        let path = format!("/campaigns/{id}/recipients");
        // They are deleted from the end of the audience's order while it is read from the
        // start, until one is already in it: where the two meet, a contact is deleted
        // between its step's read and its write.
        let (added, deleted) = tokio::join!(org.post(&path, json!({"all": true})), async {
            let mut gone = Vec::new();
            for c in fresh.iter().rev() {
                let r = org.delete(&format!("/contacts/{c}")).await;
                if r.status.as_u16() == 200 {
                    gone.push(c.clone());
                } else {
                    r.assert_error(409, Some("CONTACT_HAS_HISTORY"));
                    break;
                }
            }
            gone
        });
        let added = added.ok(200);
        let mut listed = Vec::new();
        for page in 1.. {
            let data = recipients(&org, &id, &format!("page={page}")).await;
            if data.is_empty() {
                break;
            }
            listed.extend(data.iter().map(|r| r["contact"].id().to_owned()));
        }
        for c in &deleted {
            assert!(!listed.contains(c), "deleted contact {c} is a recipient");
        }
        kept += fresh.len() - deleted.len();
        assert_eq!(listed.len(), kept, "every contact left is a recipient");
        assert_eq!(added["added"], kept);
    }
}
