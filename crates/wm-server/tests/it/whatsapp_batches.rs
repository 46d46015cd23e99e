//! Statuses applied in batches give exactly what they give one at a time: the same webhooks
//! (duplicates, out of order, one for a message wm does not know, a failure, a person's
//! reply between two statuses, a status naming the person by another form of their number)
//! are posted to two servers through their routers; one applies each webhook as it comes,
//! the other applies them all at once. Recipients, wallet, kept statuses, identities and the
//! `message.sent` announcements must be the same, and what today's rules say.

use futures::StreamExt;
use serde_json::{Value, json};
use wm_fake_graph::{InboundKind, InboundMessage, ReplyContext, StatusOptions, sign};

use crate::support::{Org, WA_SECRET};
use crate::whatsapp_kit::{PNID, Ready, WABA, Wa, drive, ready};

/// A status webhook as Meta posts it (one status per POST), for the message `wamid` sent to
/// `wa_id` with the correlation id `opaque`.
fn status(wamid: &str, wa_id: &str, opaque: Option<&str>, status: &str, ts: i64) -> Vec<u8> {
    let mut s =
        json!({"id": wamid, "status": status, "timestamp": ts.to_string(), "recipient_id": wa_id});
    if let Some(o) = opaque {
        s["biz_opaque_callback_data"] = json!(o);
    }
    match status {
        "failed" => {
            s["errors"] = json!([{"code": 131026, "title": "Message undeliverable",
                                   "message": "Message undeliverable",
                                   "error_data": {"details": "Message Undeliverable."}}]);
        }
        "sent" | "delivered" => {
            s["pricing"] = json!({"billable": true, "pricing_model": "PMP", "category": "marketing", "type": "regular"});
        }
        _ => {}
    }
    json!({"object": "whatsapp_business_account", "entry": [{"id": WABA, "changes": [{"field": "messages",
        "value": {"messaging_product": "whatsapp",
                  "metadata": {"display_phone_number": "525500000001", "phone_number_id": PNID},
                  "statuses": [s]}}]}]})
    .to_string()
    .into_bytes()
}

/// What a user sees after the webhooks: each recipient in the order of the people (its
/// send time aside: the two servers sent at different moments), the balance, the statuses
/// kept for later, the contacts' identities and the `message.sent` announcements the
/// webhooks caused (the person's index and the message's status, in order).
#[derive(Debug, PartialEq)]
struct Outcome {
    recipients: Vec<Value>,
    balance: Value,
    kept: u64,
    identities: Vec<Value>,
    announced: Vec<(usize, String)>,
}

async fn outcome(wa: &Wa, org: &Org<'_>, ready: &Ready<'_>, before: usize) -> Outcome {
    use sea_orm::{EntityTrait, PaginatorTrait, QueryOrder};
    use wm_server::db::entities::{outbox_event, pending_status};
    let id = &ready.campaign;
    let page = org
        .get(&format!("/campaigns/{id}/recipients?pageSize=100"))
        .await
        .ok(200);
    let mut recipients: Vec<Value> = page["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            json!({"phone": r["contact"]["primaryPhone"], "status": r["status"], "sent": r["sentAt"].is_string(),
                   "deliveredAt": r["deliveredAt"], "readAt": r["readAt"], "failed": r["failedAt"].is_string(),
                   "error": r["errorMessage"], "cost": r["totalCost"]})
        })
        .collect();
    recipients.sort_by_key(|r| r["phone"].as_str().unwrap_or_default().to_owned());
    let balance = org.get("/wallet").await.ok(200)["balance"].clone();
    let db = &wa.app.state.db.conn;
    let kept = pending_status::Entity::find().count(db).await.unwrap();
    let mut identities = Vec::new();
    for (contact, _) in &ready.people {
        let c = org.get(&format!("/contacts/{contact}")).await.ok(200);
        identities.push(
            json!({"phone": c["primaryPhone"], "identities": c["identities"]
            .as_array().unwrap().iter().map(|i| i["externalId"].clone()).collect::<Vec<_>>()}),
        );
    }
    let announced = outbox_event::Entity::find()
        .order_by_asc(outbox_event::Column::Id)
        .all(db)
        .await
        .unwrap()
        .into_iter()
        .skip(before)
        .filter(|e| e.event_type == wm_types::events::EventKind::MessageSent)
        .map(|e| {
            let p: Value = serde_json::from_str(&e.payload).unwrap();
            let m = &p["data"]["message"];
            let person = ready
                .people
                .iter()
                .position(|(c, _)| m["contactId"] == json!(c))
                .unwrap_or(usize::MAX);
            (person, m["status"].as_str().unwrap_or_default().to_owned())
        })
        .collect();
    Outcome {
        recipients,
        balance,
        kept,
        identities,
        announced,
    }
}

/// Sends a campaign to six people, then posts the platform's webhooks, applying each as it
/// comes (`singly`) or all at once.
async fn run(singly: bool) -> Outcome {
    let wa = Wa::start(StatusOptions {
        enabled: false,
        ..Default::default()
    })
    .await;
    let ready = ready(&wa, 6, 10.0).await;
    let org = &ready.org;
    org.post(
        "/webhooks",
        json!({"url": "https://hooks.example.com/wm", "events": ["message.sent"]}),
    )
    .await
    .ok(201);
    ready.send().await;
    let c = drive(&wa, org, &ready.campaign, 10).await;
    assert_eq!(c["stats"]["sent"], 6, "{c}");
    // The platform's messages, in the order of the people.
    let mut sent = wa.fake.accepted();
    sent.sort_by(|a, b| a.to.cmp(&b.to));
    let m = |i: usize| {
        let a = &sent[i];
        (
            a.wamid.clone(),
            a.wa_id.clone(),
            a.biz_opaque_callback_data.clone(),
        )
    };
    let st = |i: usize, s: &str, ts: i64| {
        let (wamid, wa_id, opaque) = m(i);
        status(&wamid, &wa_id, opaque.as_deref(), s, ts)
    };
    let t = 1_790_000_000;
    let before = {
        use sea_orm::{EntityTrait, PaginatorTrait};
        wm_server::db::entities::outbox_event::Entity::find()
            .count(&wa.app.state.db.conn)
            .await
            .unwrap() as usize
    };
    let (w4, ..) = m(4);
    // A person's reply quoting the fifth message, between two statuses.
    let reply_from = m(4).1;
    let steps: Vec<Option<Vec<u8>>> = vec![
        Some(st(0, "delivered", t + 10)),
        Some(st(0, "delivered", t + 10)),
        Some(st(1, "read", t + 30)),
        Some(st(1, "delivered", t + 20)),
        Some(st(2, "delivered", t + 10)),
        Some(st(2, "read", t + 15)),
        Some(status(
            "wamid.HBgNNTIxNTUxMjAwMDAwORUCABEYEjAwQUJDREVGMDEyMzQ1Njc4OQA=",
            "5215512000099",
            None,
            "delivered",
            t + 10,
        )),
        Some(st(3, "failed", t + 12)),
        Some(st(4, "delivered", t + 11)),
        None,
        Some(st(4, "read", t + 40)),
        Some({
            // The person as the platform names them: the Mexican number without its 1.
            let (wamid, _, opaque) = m(5);
            status(
                &wamid,
                "525512000006",
                opaque.as_deref(),
                "delivered",
                t + 13,
            )
        }),
        Some(st(5, "sent", t + 5)),
    ];
    for step in steps {
        match step {
            Some(body) => {
                let signature = sign(WA_SECRET, &body);
                let posted = wa.fake.post_raw(body, Some(signature)).await.unwrap();
                assert_eq!(posted.last_status, Some(200));
            }
            None => {
                let posted = wa
                    .fake
                    .post_inbound(InboundMessage {
                        phone_number_id: PNID.into(),
                        from: reply_from.clone(),
                        profile_name: Some("Ana".into()),
                        kind: InboundKind::Text {
                            body: "Sí, me interesa".into(),
                        },
                        context: Some(ReplyContext {
                            id: w4.clone(),
                            from: None,
                        }),
                    })
                    .await
                    .unwrap();
                assert_eq!(posted.last_status, Some(200));
            }
        }
        if singly {
            wa.settle().await;
        }
    }
    wa.settle().await;
    outcome(&wa, org, &ready, before).await
}

#[tokio::test]
async fn a_batch_of_statuses_gives_what_they_give_one_at_a_time() {
    let one_by_one = run(true).await;
    let batch = run(false).await;
    assert_eq!(batch, one_by_one);

    // And what that is, by today's rules.
    let r = &batch.recipients;
    let at = |s: i64| wm_types::Timestamp::from_millis((1_790_000_000 + s) * 1000).to_string();
    // A duplicate changes nothing.
    assert_eq!(r[0]["status"], "DELIVERED");
    assert_eq!(r[0]["deliveredAt"], json!(at(10)));
    // `read` before `delivered`: READ, delivered when read; the late `delivered` is a no-op.
    assert_eq!(r[1]["status"], "READ");
    assert_eq!(r[1]["deliveredAt"], json!(at(30)));
    assert_eq!(r[1]["readAt"], json!(at(30)));
    // In order, in one batch: both times kept.
    assert_eq!(r[2]["status"], "READ");
    assert_eq!(r[2]["deliveredAt"], json!(at(10)));
    assert_eq!(r[2]["readAt"], json!(at(15)));
    // A failure after `sent` fails and refunds the message.
    assert_eq!(r[3]["status"], "FAILED");
    assert_eq!(r[3]["cost"], json!(0.0));
    // The reply made it REPLIED; the `read` after it does not take it back.
    assert_eq!(r[4]["status"], "REPLIED");
    assert_eq!(r[4]["readAt"], Value::Null);
    // Delivered, and the late `sent` is a no-op.
    assert_eq!(r[5]["status"], "DELIVERED");
    // The status of a message wm does not know is kept for when it appears.
    assert_eq!(batch.kept, 1);
    // The person named by the other form of their number has it as an identity.
    let ids = batch.identities[5]["identities"].as_array().unwrap();
    assert!(
        ids.contains(&json!("525512000006")),
        "{:?}",
        batch.identities[5]
    );
    // One `message.sent` per move, in order: r0 delivered, r1 read, r2 delivered then read,
    // r3 failed, r4 delivered, r5 delivered.
    let announced: Vec<(usize, &str)> = batch
        .announced
        .iter()
        .map(|(i, s)| (*i, s.as_str()))
        .collect();
    assert_eq!(
        announced,
        [
            (0, "DELIVERED"),
            (1, "READ"),
            (2, "DELIVERED"),
            (2, "READ"),
            (3, "FAILED"),
            (4, "DELIVERED"),
            (5, "DELIVERED")
        ],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_share_a_backlog_and_apply_each_webhook_once() {
    use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter};
    use wm_server::db::entities::{pending_status, platform_event};
    let wa = Wa::start(StatusOptions {
        enabled: false,
        ..Default::default()
    })
    .await;
    let org = wa.app.org().await;
    crate::whatsapp_kit::number(&org).await;
    // More webhooks than one claim takes, each a status of a message wm has not recorded
    // yet: each is kept for later exactly once, so a webhook applied twice shows.
    let n = wm_server::services::platform::BATCH as usize * 2 + 150;
    let bodies: Vec<Vec<u8>> = (0..n)
        .map(|i| {
            let wamid = format!("wamid.HBgNNTIxNTUxMjAwMDAwORUCABEYEjAw{i:08}AA==");
            status(
                &wamid,
                "5215512000001",
                None,
                "delivered",
                1_790_000_000 + i as i64,
            )
        })
        .collect();
    // Posted 16 at a time, as a platform's connections would.
    let posted: Vec<_> = futures::stream::iter(bodies.into_iter().map(|body| {
        let signature = sign(WA_SECRET, &body);
        wa.fake.post_raw(body, Some(signature))
    }))
    .buffer_unordered(16)
    .collect()
    .await;
    assert!(
        posted
            .iter()
            .all(|p| p.as_ref().unwrap().last_status == Some(200))
    );
    let db = &wa.app.state.db.conn;
    let waiting = platform_event::Entity::find()
        .filter(platform_event::Column::ProcessedAt.is_null())
        .count(db)
        .await
        .unwrap();
    assert_eq!(waiting as usize, n, "nothing applied them yet");
    // Two replicas' appliers on the same backlog at once.
    let other = wa.app.replica();
    let drain = |state: wm_server::state::AppState| async move {
        let mut taken = 0;
        loop {
            match wm_server::services::platform::apply_pending(&state)
                .await
                .unwrap()
            {
                0 => return taken,
                k => taken += k,
            }
        }
    };
    let (a, b) = tokio::join!(
        tokio::spawn(drain(wa.app.state.clone())),
        tokio::spawn(drain(other.state.clone()))
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(a + b, n, "each webhook taken once ({a} + {b})");
    let kept = pending_status::Entity::find().count(db).await.unwrap();
    assert_eq!(kept as usize, n);
    let left = platform_event::Entity::find()
        .filter(platform_event::Column::ProcessedAt.is_null())
        .count(db)
        .await
        .unwrap();
    assert_eq!(left, 0);
}
