//! The maintained tallies behind campaign stats, costs and estimates, the recipients list,
//! the campaign list, and the conversation tabs agree with a fresh count of the rows after
//! every kind of change, on both databases and, on PostgreSQL, both before and after the
//! deltas are folded.

use std::collections::BTreeMap;

use axum::http::Method;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QuerySelect};
use serde_json::{Value, json};
use uuid::Uuid;
use wm_server::db::entities::{conversation, recipient};
use wm_server::db::tallies::{self, Dim};

use crate::kit::{campaign, setup, top_up};
use crate::support::{IdOf, Org, TestApp};

/// A campaign's recipients as counted: by status (how many, what they cost), failures by
/// reason, pending recipients not charged yet by market.
#[derive(Debug, Default, PartialEq)]
struct Counted {
    by_status: BTreeMap<String, (i64, i64)>,
    reasons: BTreeMap<String, i64>,
    unqueued: BTreeMap<String, i64>,
}

/// Counted from the rows themselves.
async fn recount(app: &TestApp, id: Uuid) -> Counted {
    let rows = recipient::Entity::find()
        .filter(recipient::Column::CampaignId.eq(id))
        .all(&app.state.db.conn)
        .await
        .unwrap();
    let mut c = Counted::default();
    for r in rows {
        let status = r.status.as_str();
        let s = c.by_status.entry(status.to_owned()).or_default();
        s.0 += 1;
        s.1 += r.cost_micros;
        if status == "FAILED" {
            *c.reasons
                .entry(r.error_message.unwrap_or_default())
                .or_default() += 1;
        }
        if status == "PENDING" && r.queued_at.is_none() {
            *c.unqueued.entry(r.market.unwrap_or_default()).or_default() += 1;
        }
    }
    c
}

/// Counted from the tallies.
async fn tallied(app: &TestApp, id: Uuid) -> Counted {
    let conn = &app.state.db.conn;
    let read = |dim| async move { tallies::read(conn, dim, &[id]).await.unwrap() };
    Counted {
        by_status: read(Dim::RecipientStatus)
            .await
            .into_iter()
            .map(|t| (t.key, (t.n, t.amount)))
            .collect(),
        reasons: read(Dim::RecipientFailure)
            .await
            .into_iter()
            .map(|t| (t.key, t.n))
            .collect(),
        unqueued: read(Dim::RecipientUnqueued)
            .await
            .into_iter()
            .map(|t| (t.key, t.n))
            .collect(),
    }
}

async fn fold(app: &TestApp) {
    tallies::fold(&app.state.db.conn).await.expect("fold");
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

/// The tallies against the rows, and what the API shows against both; on PostgreSQL again
/// once the deltas are folded.
async fn check(org: &Org<'_>, id: &str, when: &str) {
    let app = org.app;
    let uuid = Uuid::parse_str(id).unwrap();
    let truth = recount(app, uuid).await;
    for pass in ["before the fold", "after the fold"] {
        assert_eq!(tallied(app, uuid).await, truth, "{when}, {pass}");
        let n = |statuses: &[&str]| -> i64 {
            statuses
                .iter()
                .filter_map(|s| truth.by_status.get(*s))
                .map(|(n, _)| n)
                .sum()
        };
        let c = org.get(&format!("/campaigns/{id}")).await.ok(200);
        let delivered = n(&["DELIVERED", "READ", "REPLIED"]);
        let funnel = json!({
            "total": n(&["PENDING", "SENT", "DELIVERED", "READ", "REPLIED", "FAILED"]),
            "pending": n(&["PENDING"]),
            "sent": n(&["SENT"]) + delivered,
            "delivered": delivered,
            "read": n(&["READ", "REPLIED"]),
            "replied": n(&["REPLIED"]),
            "failed": n(&["FAILED"]),
        });
        for (k, v) in funnel.as_object().unwrap() {
            assert_eq!(&c["stats"][k], v, "{when}, {pass}: stats.{k}");
        }
        let cost: i64 = truth.by_status.values().map(|(_, c)| c).sum();
        assert!(
            close(c["realCost"].as_f64().unwrap(), cost as f64 / 1e6),
            "{when}, {pass}: realCost {} against {cost} micros",
            c["realCost"]
        );
        let reasons: BTreeMap<String, i64> = c["errorsByReason"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["reason"].as_str().unwrap().to_owned(),
                    e["count"].as_i64().unwrap(),
                )
            })
            .collect();
        assert_eq!(reasons, truth.reasons, "{when}, {pass}: errorsByReason");
        for (filter, statuses) in [
            (
                "all",
                &["PENDING", "SENT", "DELIVERED", "READ", "REPLIED", "FAILED"][..],
            ),
            ("pending", &["PENDING"][..]),
            ("failed", &["FAILED"][..]),
            ("delivered", &["DELIVERED", "READ", "REPLIED"][..]),
            ("read", &["READ", "REPLIED"][..]),
            ("replied", &["REPLIED"][..]),
        ] {
            let l = org
                .get(&format!(
                    "/campaigns/{id}/recipients?filter={filter}&pageSize=100"
                ))
                .await
                .ok(200);
            assert_eq!(l["meta"]["total"], n(statuses), "{when}, {pass}: {filter}");
            let shown: Vec<&str> = l["data"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["status"].as_str().unwrap())
                .collect();
            assert_eq!(shown.len() as i64, n(statuses), "{when}, {pass}: {filter}");
            assert!(
                shown.iter().all(|s| statuses.contains(s)),
                "{when}, {pass}: {filter} shows {shown:?}"
            );
        }
        if !app.on_postgres() {
            break;
        }
        fold(app).await;
    }
}

/// A campaign's estimate, the same on its detail and its cost preview.
async fn estimate(org: &Org<'_>, id: &str) -> f64 {
    let c = org.get(&format!("/campaigns/{id}")).await.ok(200);
    let p = org.preview_cost(id).await;
    assert_eq!(
        c["estimatedCost"], p["estimatedTotal"],
        "detail and preview"
    );
    c["estimatedCost"].as_f64().unwrap()
}

/// A contact's recipient's provider message id (the API does not show it).
async fn provider_id(app: &TestApp, campaign: &str, contact: &str) -> String {
    recipient::Entity::find()
        .select_only()
        .column(recipient::Column::ProviderMessageId)
        .filter(recipient::Column::CampaignId.eq(Uuid::parse_str(campaign).unwrap()))
        .filter(recipient::Column::ContactId.eq(Uuid::parse_str(contact).unwrap()))
        .into_tuple::<Option<String>>()
        .one(&app.state.db.conn)
        .await
        .unwrap()
        .flatten()
        .expect("sent, so it has a provider message id")
}

#[tokio::test]
async fn campaign_tallies_match_the_rows_from_audience_to_replies() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let s = setup(&org).await;
    let mut people = Vec::new();
    for i in 0..8 {
        let c = org
            .contact(
                json!({"fullName": format!("Ana {i}"), "primaryPhone": format!("+52155130{i:05}"),
                            "consent": {"given": true}, "tags": ["t"]}),
            )
            .await;
        people.push(c.id().to_owned());
    }
    // Rejected by the platform, and without a market.
    org.contact(
        json!({"fullName": "Not on the app", "primaryPhone": "+5215588880000",
                       "consent": {"given": true}, "tags": ["t"]}),
    )
    .await;
    org.contact(json!({"fullName": "Nowhere", "primaryPhone": "+9991234567",
                       "consent": {"given": true}, "tags": ["t"]}))
        .await;
    let id = campaign(&org, &s, &s.plain).await;
    org.post(&format!("/campaigns/{id}/recipients"), json!({"tag": "t"}))
        .await
        .ok(200);
    check(&org, &id, "audience added").await;
    // Added twice: nothing changes; everyone, once a contact more: just that one is added.
    org.post(&format!("/campaigns/{id}/recipients"), json!({"tag": "t"}))
        .await
        .ok(200);
    check(&org, &id, "audience added again").await;
    org.contact(json!({"fullName": "Late", "primaryPhone": "+5215513099999",
                       "consent": {"given": true}}))
        .await;
    let all = org
        .post(&format!("/campaigns/{id}/recipients"), json!({"all": true}))
        .await
        .ok(200);
    assert_eq!((&all["added"], &all["alreadyIn"]), (&json!(1), &json!(10)));
    check(&org, &id, "everyone added").await;

    // The estimate leaves out a contact who opted out since, and takes them back.
    let price = org.price_of_one(&id).await;
    assert!(close(estimate(&org, &id).await, 10.0 * price));
    for (body, priced) in [
        (json!({"optedOut": true}), 9.0),
        (json!({"optedOut": false}), 10.0),
        (json!({"consent": {"given": false}}), 9.0),
        (json!({"consent": {"given": true}}), 10.0),
        (json!({"optedOut": true}), 9.0),
    ] {
        org.patch(&format!("/contacts/{}", people[0]), body.clone())
            .await
            .ok(200);
        assert!(
            close(estimate(&org, &id).await, priced * price),
            "after {body}: {priced} priced"
        );
        if app.on_postgres() {
            fold(&app).await;
            assert!(close(estimate(&org, &id).await, priced * price));
        }
    }
    let p = org.preview_cost(&id).await;
    assert_eq!(
        (
            &p["recipientCount"],
            &p["priceableCount"],
            &p["unpriceableCount"]
        ),
        (&json!(11), &json!(9), &json!(1))
    );

    top_up(&org, 10.0).await;
    org.post(&format!("/campaigns/{id}/send"), json!({}))
        .await
        .ok(200);
    check(&org, &id, "charged").await;
    app.send_pass().await;
    app.send_pass().await;
    check(&org, &id, "sent and delivered").await;
    for who in &people[1..3] {
        let pid = provider_id(&app, &id, who).await;
        org.admin(
            Method::POST,
            "/provider-events",
            Some(json!({"providerMessageId": pid, "status": "READ"})),
        )
        .await
        .ok(200);
    }
    check(&org, &id, "read").await;
    org.admin(
        Method::POST,
        "/inbound",
        Some(json!({"channelType": "MESSAGING_APP_A", "externalId": "5215513000002"})),
    )
    .await
    .ok(200);
    check(&org, &id, "replied").await;
    let c = org.get(&format!("/campaigns/{id}")).await.ok(200);
    assert_eq!(c["stats"]["replied"], 1);
    assert_eq!(c["lastReplies"][0]["contact"]["id"], people[2].as_str());

    // The list: its errors tab and its summary add up the same tallies.
    let copy = org
        .post(&format!("/campaigns/{id}/duplicate"), json!({}))
        .await
        .ok(201);
    let l = org.get("/campaigns").await.ok(200);
    assert_eq!(l["tabs"]["errors"], 1);
    assert_eq!(l["tabs"]["all"], 2);
    let errors = org.get("/campaigns?tab=errors").await.ok(200);
    assert_eq!(crate::support::ids(&errors), vec![id.clone()]);
    assert_eq!(l["summary"]["campaigns"], 2);
    assert_eq!(l["summary"]["sent"], c["stats"]["sent"]);
    assert_eq!(l["summary"]["replies"], 1);
    assert!(close(
        l["summary"]["spend"].as_f64().unwrap(),
        c["realCost"].as_f64().unwrap()
    ));
    let copy = copy.id();
    assert_eq!(
        tallied(&app, Uuid::parse_str(copy).unwrap()).await,
        Counted::default(),
        "a campaign's tallies are its own"
    );
}

/// The tabs `GET /conversations?{query}` should show for the rows as they are.
fn expected_tabs(rows: &[conversation::Model], query: &[(&str, String)], me: Uuid) -> Value {
    let chosen: Vec<&conversation::Model> = rows
        .iter()
        .filter(|c| {
            query.iter().all(|(k, v)| match *k {
                "status" => c.status.as_str() == v,
                "channelType" => c.channel_type.as_str() == v,
                "channelId" => c.channel_id.to_string() == *v,
                "assignedToUserId" => {
                    c.assigned_to_user_id.map(|u| u.to_string()) == Some(v.clone())
                }
                "contactId" => c.contact_id.to_string() == *v,
                _ => unreachable!("{k}"),
            })
        })
        .collect();
    let resolved = |c: &&&conversation::Model| c.status.as_str() == "RESOLVED";
    json!({
        "all": chosen.len(),
        "unassigned": chosen.iter().filter(|c| !resolved(c) && c.assigned_to_user_id.is_none()).count(),
        "mine": chosen.iter().filter(|c| c.assigned_to_user_id == Some(me)).count(),
        "resolved": chosen.iter().filter(resolved).count(),
    })
}

#[tokio::test]
async fn conversation_tabs_match_the_rows_under_every_filter() {
    let app = TestApp::new().await;
    let org = app.org().await;
    org.admin(Method::POST, "/channels", Some(json!({"type": "EMAIL"})))
        .await
        .ok(201);
    let bea = org
        .admin(
            Method::POST,
            "/users",
            Some(json!({"fullName": "Bea", "email": "bea@example.com"})),
        )
        .await
        .ok(201)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut ids = Vec::new();
    for i in 0..6 {
        let (channel, external) = if i % 3 == 2 {
            // A contact writes by e-mail from the address of an identity they have.
            let address = format!("p{i}@example.com");
            let c = org
                .contact(json!({"fullName": format!("Person {i}")}))
                .await;
            org.post(
                &format!("/contacts/{}/identities", c.id()),
                json!({"channelType": "EMAIL", "externalId": address}),
            )
            .await
            .ok(201);
            ("EMAIL", address)
        } else {
            ("MESSAGING_APP_A", format!("52155140000{i}"))
        };
        let r = org
            .admin(
                Method::POST,
                "/inbound",
                Some(json!({"channelType": channel, "externalId": external, "fullName": format!("Person {i}")})),
            )
            .await
            .ok(200);
        ids.push(r["conversationId"].as_str().unwrap().to_owned());
    }
    let me = Uuid::parse_str(&org.user_id).unwrap();
    let change = |i: usize, body: Value| {
        let (org, id) = (&org, ids[i].clone());
        async move {
            org.admin(Method::PATCH, &format!("/conversations/{id}"), Some(body))
                .await
                .ok(200);
        }
    };
    change(0, json!({"assignedToUserId": org.user_id})).await;
    change(1, json!({"assignedToUserId": bea, "status": "PENDING"})).await;
    change(2, json!({"status": "RESOLVED"})).await;
    change(
        3,
        json!({"assignedToUserId": org.user_id, "status": "RESOLVED"}),
    )
    .await;
    change(0, json!({"assignedToUserId": null})).await;
    change(0, json!({"assignedToUserId": bea})).await;

    let rows = conversation::Entity::find()
        .all(&app.state.db.conn)
        .await
        .unwrap();
    let channel = rows[0].channel_id.to_string();
    let contact = rows[4].contact_id.to_string();
    let queries: Vec<Vec<(&str, String)>> = vec![
        vec![],
        vec![("status", "OPEN".into())],
        vec![("status", "RESOLVED".into())],
        vec![("channelType", "EMAIL".into())],
        vec![
            ("channelType", "MESSAGING_APP_A".into()),
            ("status", "PENDING".into()),
        ],
        vec![("channelId", channel)],
        vec![("assignedToUserId", bea.clone())],
        vec![("assignedToUserId", org.user_id.clone())],
        vec![("contactId", contact)],
    ];
    for pass in ["before the fold", "after the fold"] {
        for q in &queries {
            let path = q
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join("&");
            let l = org.get(&format!("/conversations?{path}")).await.ok(200);
            assert_eq!(l["tabs"], expected_tabs(&rows, q, me), "{pass}: ?{path}");
            assert_eq!(l["meta"]["total"], l["tabs"]["all"], "{pass}: ?{path}");
        }
        let s = org.get("/conversations").await.ok(200)["summary"].clone();
        let open = rows.iter().filter(|c| c.status.as_str() == "OPEN").count();
        assert_eq!(s["open"], open, "{pass}");
        assert_eq!(s["unassigned"], expected_tabs(&rows, &[], me)["unassigned"]);
        assert_eq!(
            (s["newInPeriod"].as_u64(), s["resolvedToday"].as_u64()),
            (Some(6), Some(2))
        );
        if !app.on_postgres() {
            break;
        }
        tallies::fold(&app.state.db.conn).await.expect("fold");
    }
    // A search finds its contacts through their index, and counts and pages where it
    // stands, in the list's order.
    let l = org.get("/conversations?q=person%204").await.ok(200);
    assert_eq!(l["tabs"]["all"], 1);
    assert_eq!(l["data"][0]["id"], ids[4].as_str());
    let order = crate::support::ids(&org.get("/conversations?filter=unassigned").await.ok(200));
    assert_eq!(order.len(), 2);
    let second = org
        .get("/conversations?q=person&filter=unassigned&pageSize=1&page=2")
        .await
        .ok(200);
    assert_eq!(second["meta"]["total"], 2);
    assert_eq!(crate::support::ids(&second), vec![order[1].clone()]);
    let beyond = org
        .get("/conversations?q=person&pageSize=10&page=2")
        .await
        .ok(200);
    assert_eq!(
        (
            beyond["meta"]["total"].as_u64(),
            beyond["data"].as_array().map(Vec::len)
        ),
        (Some(6), Some(0))
    );
}

#[tokio::test]
async fn the_summary_days_are_exact_at_a_quarter_hour_offset() {
    let app = TestApp::new().await;
    let at = |s: &str| {
        chrono::DateTime::parse_from_rfc3339(s)
            .unwrap()
            .with_timezone(&chrono::Utc)
    };
    // Kathmandu is UTC+5:45: its 21 November starts at 18:15 UTC on the 20th.
    let org = app
        .org_with(json!({"name": "Kathmandu", "timezone": "Asia/Kathmandu"}))
        .await;
    let mut ids = Vec::new();
    for (i, when) in [
        "2026-11-19T18:14:59.999Z",
        "2026-11-20T18:14:59.999Z",
        "2026-11-20T18:15:00.000Z",
    ]
    .into_iter()
    .enumerate()
    {
        app.clock.set(at(when));
        let r = org
            .admin(
                Method::POST,
                "/inbound",
                Some(json!({"channelType": "MESSAGING_APP_A", "externalId": format!("52155150000{i}")})),
            )
            .await
            .ok(200);
        ids.push(r["conversationId"].as_str().unwrap().to_owned());
    }
    // Resolved one millisecond before and just after local midnight.
    for (id, when) in [
        (&ids[0], "2026-11-20T18:14:59.999Z"),
        (&ids[1], "2026-11-20T18:16:00.000Z"),
    ] {
        app.clock.set(at(when));
        org.admin(
            Method::PATCH,
            &format!("/conversations/{id}"),
            Some(json!({"status": "RESOLVED"})),
        )
        .await
        .ok(200);
    }
    app.clock.set(at("2026-11-21T03:00:00Z"));
    for pass in ["before the fold", "after the fold"] {
        let s = org.get("/conversations").await.ok(200)["summary"].clone();
        assert_eq!(
            [
                &s["newInPeriod"],
                &s["newInPreviousPeriod"],
                &s["resolvedToday"],
                &s["resolvedYesterday"]
            ],
            [&json!(1), &json!(1), &json!(1), &json!(1)],
            "{pass}: {s}"
        );
        if !app.on_postgres() {
            break;
        }
        tallies::fold(&app.state.db.conn).await.expect("fold");
    }
}
