//! Tabs, summary and the tag list are maintained counts, not recounts: after every kind of
//! change (creates, updates, bulk changes, identities, deletes, imports, inbound messages,
//! the clock moving the period), each filter's tabs, total and first page and the summary
//! are compared with what the contacts themselves say (read one by one).

use std::collections::{BTreeMap, HashMap, HashSet};

use axum::http::Method;
use chrono::{DateTime, Duration, Utc};
use serde_json::{Value, json};

use crate::imports::{import_pass, upload};
use crate::support::{IdOf, Org, TestApp, ids};

const DAY_MS: i64 = 86_400_000;

/// A contact as its detail shows it, plus when it entered its stage (the test's record).
struct Person {
    id: String,
    stage: Option<String>,
    consent: bool,
    owner: Option<String>,
    source: String,
    tags: Vec<String>,
    channels: HashSet<String>,
    created: i64,
    text: String,
}

/// What the test knows: the contacts alive, the stage categories, when stages were entered.
struct World<'a> {
    org: Org<'a>,
    alive: Vec<String>,
    category: HashMap<String, &'static str>,
    staged: HashMap<String, i64>,
}

fn ms(v: &Value) -> i64 {
    v.as_str()
        .and_then(|s| s.parse::<DateTime<Utc>>().ok())
        .map(|t| t.timestamp_millis())
        .expect("timestamp")
}

impl World<'_> {
    fn now(&self) -> i64 {
        use wm_core::time::Clock;
        self.org.app.clock.now().timestamp_millis()
    }

    async fn people(&self) -> Vec<Person> {
        let mut out = Vec::new();
        for id in &self.alive {
            let c = self.org.get(&format!("/contacts/{id}")).await.ok(200);
            let s = |k: &str| c[k].as_str().map(str::to_owned);
            out.push(Person {
                id: id.clone(),
                stage: s("lifecycleStageId"),
                consent: c["consent"]["given"] == true,
                owner: s("ownerId"),
                source: s("source").expect("source"),
                tags: c["tags"]
                    .as_array()
                    .expect("tags")
                    .iter()
                    .map(|t| t.as_str().expect("tag").to_owned())
                    .collect(),
                channels: c["identities"]
                    .as_array()
                    .expect("identities")
                    .iter()
                    .map(|i| i["channelType"].as_str().expect("type").to_owned())
                    .collect(),
                created: ms(&c["createdAt"]),
                text: [
                    s("fullName"),
                    s("primaryPhone"),
                    s("primaryEmail"),
                    s("company"),
                ]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join("\n")
                .to_lowercase(),
            });
        }
        out
    }

    fn tab_of(&self, p: &Person) -> Option<&'static str> {
        match p.stage.as_ref().map(|s| self.category[s]) {
            None | Some("LEAD") => Some("leads"),
            Some("IN_PROGRESS") => Some("in_progress"),
            Some("CUSTOMER") => Some("customers"),
            Some("INACTIVE") => Some("inactive"),
            _ => None,
        }
    }

    fn tabs(&self, people: &[&Person]) -> Value {
        let mut t: BTreeMap<&str, u64> = [
            "all",
            "leads",
            "in_progress",
            "customers",
            "inactive",
            "no_consent",
        ]
        .into_iter()
        .map(|k| (k, 0))
        .collect();
        for p in people {
            *t.get_mut("all").unwrap() += 1;
            if !p.consent {
                *t.get_mut("no_consent").unwrap() += 1;
            }
            if let Some(tab) = self.tab_of(p) {
                *t.get_mut(tab).unwrap() += 1;
            }
        }
        json!(t)
    }

    /// Every filter's tabs, total and first page, and the summary, against the contacts.
    async fn check(&self, when: &str) {
        let people = self.people().await;
        let now = self.now();
        let user = self.org.user_id.clone();
        let customer = self
            .category
            .iter()
            .find(|(_, c)| **c == "CUSTOMER")
            .map(|(id, _)| id.clone())
            .unwrap();
        let some = self
            .alive
            .iter()
            .take(3)
            .cloned()
            .collect::<Vec<_>>()
            .join(",");
        type Pred = Box<dyn Fn(&Person) -> bool>;
        let cases: Vec<(String, Pred)> = vec![
            (String::new(), Box::new(|_| true)),
            (format!("lifecycleStageId={customer}"), {
                let c = customer.clone();
                Box::new(move |p| p.stage.as_deref() == Some(c.as_str()))
            }),
            (format!("ownerId={user}"), {
                let u = user.clone();
                Box::new(move |p| p.owner.as_deref() == Some(u.as_str()))
            }),
            ("ownerId=none".into(), Box::new(|p| p.owner.is_none())),
            ("source=IMPORT".into(), Box::new(|p| p.source == "IMPORT")),
            (
                "tag=VIP".into(),
                Box::new(|p| p.tags.iter().any(|t| t.to_lowercase() == "vip")),
            ),
            (
                "channelType=EMAIL".into(),
                Box::new(|p| p.channels.contains("EMAIL")),
            ),
            (
                "channelType=MESSAGING_APP_A".into(),
                Box::new(|p| p.channels.contains("MESSAGING_APP_A")),
            ),
            (
                "days=7".into(),
                Box::new(move |p| p.created >= now - 7 * DAY_MS),
            ),
            ("q=p%C3%A9r".into(), Box::new(|p| p.text.contains("pér"))),
            ("q=an".into(), Box::new(|p| p.text.contains("an"))),
            (
                "tag=vip&ownerId=none".into(),
                Box::new(|p| p.owner.is_none() && p.tags.iter().any(|t| t.to_lowercase() == "vip")),
            ),
            (format!("days=7&lifecycleStageId={customer}"), {
                let c = customer.clone();
                Box::new(move |p| {
                    p.created >= now - 7 * DAY_MS && p.stage.as_deref() == Some(c.as_str())
                })
            }),
            (format!("ids={some}"), {
                let ids: Vec<String> = self.alive.iter().take(3).cloned().collect();
                Box::new(move |p| ids.contains(&p.id))
            }),
        ];
        for (query, pred) in &cases {
            let mut matching: Vec<&Person> = people.iter().filter(|p| pred(p)).collect();
            matching.sort_by(|a, b| (b.created, &b.id).cmp(&(a.created, &a.id)));
            let got = self
                .org
                .get(&format!("/contacts?pageSize=4&{query}"))
                .await
                .ok(200);
            assert_eq!(
                got["tabs"],
                self.tabs(&matching),
                "{when}: tabs of ?{query}"
            );
            assert_eq!(
                got["meta"]["total"],
                matching.len(),
                "{when}: total of ?{query}"
            );
            let first: Vec<String> = matching.iter().take(4).map(|p| p.id.clone()).collect();
            assert_eq!(ids(&got), first, "{when}: first page of ?{query}");
            for tab in ["customers", "no_consent"] {
                let got = self
                    .org
                    .get(&format!("/contacts?pageSize=2&page=2&tab={tab}&{query}"))
                    .await
                    .ok(200);
                let second: Vec<String> = ids(&got);
                let expected: Vec<String> = matching
                    .iter()
                    .filter(|p| match tab {
                        "no_consent" => !p.consent,
                        t => self.tab_of(p) == Some(t),
                    })
                    .skip(2)
                    .take(2)
                    .map(|p| p.id.clone())
                    .collect();
                assert_eq!(second, expected, "{when}: page 2 of ?tab={tab}&{query}");
            }
        }
        let s = self.org.get("/contacts?days=7").await.ok(200)["summary"].clone();
        let all: Vec<&Person> = people.iter().collect();
        let recent: Vec<&Person> = people
            .iter()
            .filter(|p| p.created >= now - 7 * DAY_MS)
            .collect();
        let t = self.tabs(&all);
        let with = t["all"].as_u64().unwrap() - t["no_consent"].as_u64().unwrap();
        assert_eq!(s["total"], t["all"], "{when}: summary total");
        assert_eq!(s["withConsent"], with, "{when}: withConsent");
        assert_eq!(
            s["withoutConsent"], t["no_consent"],
            "{when}: withoutConsent"
        );
        assert_eq!(s["newInPeriod"], recent.len(), "{when}: newInPeriod");
        assert_eq!(
            s["leadsNew"],
            self.tabs(&recent)["leads"],
            "{when}: leadsNew"
        );
        assert_eq!(
            s["leadsInProgress"], t["in_progress"],
            "{when}: leadsInProgress"
        );
        assert_eq!(s["customers"], t["customers"], "{when}: customers");
        let customers_new = people
            .iter()
            .filter(|p| self.tab_of(p) == Some("customers"))
            .filter(|p| {
                self.staged
                    .get(&p.id)
                    .is_some_and(|at| *at >= now - 7 * DAY_MS)
            })
            .count();
        assert_eq!(
            s["customersNewInPeriod"], customers_new,
            "{when}: customersNewInPeriod"
        );
        // Each tag once, by key, spelled as its oldest contact spells it.
        let mut tags: BTreeMap<String, (i64, String, String)> = BTreeMap::new();
        for p in &people {
            for t in &p.tags {
                let e =
                    tags.entry(t.to_lowercase())
                        .or_insert((p.created, p.id.clone(), t.clone()));
                if (p.created, &p.id) < (e.0, &e.1) {
                    *e = (p.created, p.id.clone(), t.clone());
                }
            }
        }
        let expected: Vec<String> = tags.into_values().map(|(_, _, t)| t).collect();
        assert_eq!(s["tags"], json!(expected), "{when}: summary tags");
    }

    async fn add(&mut self, body: Value) -> String {
        let c = self.org.contact(body).await;
        let id = c.id().to_owned();
        if c["lifecycleStageId"].is_string() {
            self.staged.insert(id.clone(), self.now());
        }
        self.alive.push(id.clone());
        id
    }

    async fn fold(&self) {
        wm_server::db::contacts::counts::fold(&self.org.app.state.db.conn)
            .await
            .expect("fold");
    }
}

#[tokio::test]
async fn tabs_and_summary_stay_exact_through_every_kind_of_change() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let stages = org.get("/lifecycle-stages").await.ok(200);
    let category = stages["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let c = match s["name"].as_str().unwrap() {
                "Lead" => "LEAD",
                "Qualified" => "IN_PROGRESS",
                "Customer" => "CUSTOMER",
                _ => "INACTIVE",
            };
            (s.id().to_owned(), c)
        })
        .collect();
    let mut w = World {
        org,
        alive: Vec::new(),
        category,
        staged: HashMap::new(),
    };
    let (lead, customer, qualified) = (
        w.org.stage("Lead").await,
        w.org.stage("Customer").await,
        w.org.stage("Qualified").await,
    );
    let user = w.org.user_id.clone();
    w.org
        .admin(Method::POST, "/channels", Some(json!({"type": "EMAIL"})))
        .await
        .ok(201);

    // Contacts spread over a day and weeks, some stages, consents, owners, tags.
    let a = w.add(json!({"fullName": "Ana Pérez", "primaryPhone": "+525511110001", "tags": ["VIP", "lead"],
                          "consent": {"given": true}, "lifecycleStageId": customer, "ownerId": user})).await;
    app.clock.advance(Duration::hours(6));
    let b = w
        .add(
            json!({"fullName": "Bruno", "primaryPhone": "+525511110002", "tags": ["vip"],
                          "source": "IMPORT"}),
        )
        .await;
    app.clock.advance(Duration::hours(6));
    let c = w
        .add(
            json!({"fullName": "Carla Pérez", "tags": ["Promo"], "lifecycleStageId": qualified,
                          "consent": {"given": true}}),
        )
        .await;
    app.clock.advance(Duration::days(3));
    let d = w
        .add(
            json!({"fullName": "Dan", "primaryEmail": "dan@example.com", "lifecycleStageId": lead}),
        )
        .await;
    w.check("after creates").await;

    // The period now starts between a's and b's creation, inside one day.
    app.clock.advance(Duration::days(4) - Duration::hours(9));
    w.check("period starting mid-day").await;

    // Updates: stage, consent, owner, tags, text.
    w.org
        .patch(&format!("/contacts/{b}"), json!({"lifecycleStageId": customer, "consent": {"given": true},
                                                 "ownerId": user, "tags": ["VIP", "new"], "fullName": "Bruno Pérez"}))
        .await
        .ok(200);
    w.staged.insert(b.clone(), w.now());
    w.org
        .patch(
            &format!("/contacts/{a}"),
            json!({"ownerId": null, "consent": {"given": false}, "tags": []}),
        )
        .await
        .ok(200);
    w.check("after updates").await;
    w.fold().await;
    w.check("after a fold").await;

    // Bulk: a stage, tags and no owner for three.
    w.org
        .post(
            "/contacts/bulk",
            json!({"ids": [a, c, d], "lifecycleStageId": customer,
                                         "addTags": ["vip", "bulk"], "ownerId": null}),
        )
        .await
        .ok(201);
    // `a` was a customer already: its stage (and when it entered it) stays.
    for id in [&c, &d] {
        w.staged.insert(id.clone(), w.now());
    }
    w.check("after bulk").await;

    // Identities: an e-mail one, and a second phone identity (counted once).
    w.org
        .post(
            &format!("/contacts/{c}/identities"),
            json!({"channelType": "EMAIL", "externalId": "carla@example.com"}),
        )
        .await
        .ok(201);
    w.org
        .post(
            &format!("/contacts/{a}/identities"),
            json!({"channelType": "MESSAGING_APP_A", "externalId": "525511119999"}),
        )
        .await
        .ok(201);
    w.org
        .patch(&format!("/contacts/{a}"), json!({"lifecycleStageId": lead}))
        .await
        .ok(200);
    w.staged.insert(a.clone(), w.now());
    w.check("after identities").await;

    // A delete, an import (new and updated rows) and an inbound message.
    w.org.delete(&format!("/contacts/{d}")).await.ok(200);
    w.alive.retain(|x| *x != d);
    let csv = "fullName,primaryPhone,tags\nEva Pérez,+525511110005,vip;Imported\nBruno again,+525511110002,late\n";
    let job = upload(
        &w.org,
        Some(json!({"dedupe": "UPDATE"})),
        ("p.csv", "text/csv", csv.as_bytes()),
    )
    .await
    .ok(202);
    while import_pass(&app).await > 0 {}
    let job = w
        .org
        .get(&format!("/contacts/imports/{}", job.id()))
        .await
        .ok(200);
    assert_eq!(
        (job["created"].as_u64(), job["updated"].as_u64()),
        (Some(1), Some(1)),
        "{job}"
    );
    let eva = w.org.get("/contacts?q=eva").await.ok(200)["data"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    w.alive.push(eva);
    let inbound = w
        .org
        .admin(Method::POST, "/inbound", Some(json!({"channelType": "MESSAGING_APP_A",
                                                     "externalId": "525511110077", "fullName": "Fede"})))
        .await
        .ok(200);
    let fede = inbound["contactId"]
        .as_str()
        .expect("inbound contact")
        .to_owned();
    w.alive.push(fede);
    w.check("after delete, import and inbound").await;

    // The clock moves the period past everything.
    app.clock.advance(Duration::days(10));
    w.check("ten days on").await;
    w.fold().await;
    w.check("folded again").await;
}
