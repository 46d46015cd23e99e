//! GET /contacts: order, pagination, every filter, tabs and summary.

use axum::http::Method;
use chrono::Duration;
use serde_json::json;

use crate::support::{IdOf, TestApp, ids};

#[tokio::test]
async fn newest_first_with_pagination_meta() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let mut created = Vec::new();
    for i in 0..5 {
        created.push(
            org.contact(json!({"fullName": format!("C{i}")})).await["id"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
        app.clock.advance(Duration::seconds(1));
    }
    created.reverse();
    let page1 = org.get("/contacts?pageSize=2").await.ok(200);
    assert_eq!(
        page1["meta"],
        json!({"page": 1, "pageSize": 2, "total": 5, "totalPages": 3})
    );
    assert_eq!(ids(&page1), created[0..2]);
    let page3 = org.get("/contacts?pageSize=2&page=3").await.ok(200);
    assert_eq!(ids(&page3), created[4..5]);
    let beyond = org.get("/contacts?pageSize=2&page=9").await.ok(200);
    assert_eq!(ids(&beyond), Vec::<String>::new());
    // List items omit organizationId and carry lastConversation.
    let item = &page1["data"][0];
    assert!(item.get("organizationId").is_none());
    assert_eq!(item["lastConversation"], json!(null));
    assert!(item.get("openDeals").is_none());
}

#[tokio::test]
async fn tabs_filter_by_stage_category_and_consent() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let lead = org.stage("Lead").await;
    let qualified = org.stage("Qualified").await;
    let customer = org.stage("Customer").await;
    let inactive = org.stage("Inactive").await;
    let none = org
        .contact(json!({"fullName": "NoStage", "consent": {"given": true}}))
        .await;
    let l = org
        .contact(json!({"fullName": "Lead", "lifecycleStageId": lead, "consent": {"given": true}}))
        .await;
    let q = org
        .contact(json!({"fullName": "Qual", "lifecycleStageId": qualified}))
        .await;
    let c = org
        .contact(
            json!({"fullName": "Cust", "lifecycleStageId": customer, "consent": {"given": true}}),
        )
        .await;
    let i = org
        .contact(
            json!({"fullName": "Inact", "lifecycleStageId": inactive, "consent": {"given": true}}),
        )
        .await;
    let all = org.get("/contacts").await.ok(200);
    assert_eq!(
        all["tabs"],
        json!({"all": 5, "leads": 2, "in_progress": 1, "customers": 1, "inactive": 1, "no_consent": 1})
    );
    let id = |v: &serde_json::Value| v.id().to_owned();
    let mut leads = ids(&org.get("/contacts?tab=leads").await.ok(200));
    leads.sort();
    let mut expected = vec![id(&none), id(&l)];
    expected.sort();
    assert_eq!(leads, expected);
    assert_eq!(
        ids(&org.get("/contacts?tab=in_progress").await.ok(200)),
        vec![id(&q)]
    );
    assert_eq!(
        ids(&org.get("/contacts?tab=customers").await.ok(200)),
        vec![id(&c)]
    );
    assert_eq!(
        ids(&org.get("/contacts?tab=inactive").await.ok(200)),
        vec![id(&i)]
    );
    let nc = org.get("/contacts?tab=no_consent").await.ok(200);
    assert_eq!(ids(&nc), vec![id(&q)]);
    assert_eq!(nc["meta"]["total"], 1);
    // Tabs count under the other filters.
    let filtered = org.get("/contacts?q=a").await.ok(200);
    assert_eq!(
        filtered["tabs"]["all"], 4,
        "NoStage, Lead, Qual, Inact contain an a"
    );
}

#[tokio::test]
async fn field_filters() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let lead = org.stage("Lead").await;
    org.admin(Method::POST, "/channels", Some(json!({"type": "EMAIL"})))
        .await
        .ok(201);
    let a = org
        .contact(json!({"fullName": "Ana Gómez", "primaryPhone": "+5215511112222", "company": "Acme Corp",
            "lifecycleStageId": lead, "ownerId": org.user_id, "source": "IMPORT", "tags": ["VIP"]}))
        .await;
    let b = org
        .contact(
            json!({"fullName": "Bruno", "primaryEmail": "bruno@Globex.com", "tags": ["wholesale"]}),
        )
        .await;
    let (a, b) = (a.id().to_owned(), b.id().to_owned());
    org.post(
        &format!("/contacts/{b}/identities"),
        json!({"channelType": "EMAIL", "externalId": "bruno@globex.com"}),
    )
    .await
    .ok(201);
    let only = |path: &str| {
        let org = &org;
        let path = path.to_owned();
        async move { ids(&org.get(&path).await.ok(200)) }
    };
    assert_eq!(
        only(&format!("/contacts?lifecycleStageId={lead}")).await,
        vec![a.clone()]
    );
    assert_eq!(
        only(&format!("/contacts?ownerId={}", org.user_id)).await,
        vec![a.clone()]
    );
    assert_eq!(only("/contacts?ownerId=none").await, vec![b.clone()]);
    assert_eq!(only("/contacts?source=IMPORT").await, vec![a.clone()]);
    assert_eq!(only("/contacts?source=MANUAL").await, vec![b.clone()]);
    assert_eq!(only("/contacts?channelType=EMAIL").await, vec![b.clone()]);
    assert_eq!(
        only("/contacts?channelType=MESSAGING_APP_A").await,
        vec![a.clone()]
    );
    assert_eq!(only("/contacts?tag=vip").await, vec![a.clone()]);
    assert_eq!(only("/contacts?tag=WHOLESALE").await, vec![b.clone()]);
    assert_eq!(only("/contacts?tag=none").await, Vec::<String>::new());
    // q/search: case-insensitive substring of name, phone, e-mail, company.
    assert_eq!(only("/contacts?q=GÓMEZ").await, vec![a.clone()]);
    assert_eq!(only("/contacts?q=1111").await, vec![a.clone()]);
    assert_eq!(only("/contacts?search=globex").await, vec![b.clone()]);
    assert_eq!(only("/contacts?q=acme%20corp").await, vec![a.clone()]);
    assert_eq!(
        only("/contacts?q=%25").await,
        Vec::<String>::new(),
        "% is literal"
    );
    // ids: comma-separated and repeated.
    let mut both = only(&format!("/contacts?ids={a},{b}")).await;
    both.sort();
    let mut expected = vec![a.clone(), b.clone()];
    expected.sort();
    assert_eq!(both, expected);
    let mut both = only(&format!("/contacts?ids={a}&ids={b}")).await;
    both.sort();
    assert_eq!(both, expected);
    // Combined filters are ANDed.
    assert_eq!(
        only(&format!("/contacts?ids={a},{b}&tag=vip")).await,
        vec![a.clone()]
    );
}

#[tokio::test]
async fn days_counts_contacts_created_in_the_last_n_days() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let customer = org.stage("Customer").await;
    let old = org
        .contact(
            json!({"fullName": "Old", "lifecycleStageId": customer, "consent": {"given": true}}),
        )
        .await;
    app.clock.advance(Duration::days(20));
    let new = org
        .contact(json!({"fullName": "New", "tags": ["b", "A"]}))
        .await;
    assert_eq!(
        ids(&org.get("/contacts?days=7").await.ok(200)),
        vec![new.id().to_owned()]
    );
    assert_eq!(
        org.get("/contacts?days=30").await.ok(200)["meta"]["total"],
        2
    );
    let s = org.get("/contacts?days=7").await.ok(200)["summary"].clone();
    assert_eq!(s["days"], 7);
    assert_eq!(s["total"], 2);
    assert_eq!(s["newInPeriod"], 1);
    assert_eq!(s["withConsent"], 1);
    assert_eq!(s["withoutConsent"], 1);
    assert_eq!(s["consentPct"], 50.0);
    assert_eq!(s["leadsNew"], 1);
    assert_eq!(s["leadsInProgress"], 0);
    assert_eq!(s["customers"], 1);
    assert_eq!(
        s["customersNewInPeriod"], 0,
        "Old became a customer 20 days ago"
    );
    assert_eq!(s["tags"], json!(["A", "b"]));
    let s30 = org.get("/contacts").await.ok(200)["summary"].clone();
    assert_eq!(s30["days"], 30);
    assert_eq!(s30["customersNewInPeriod"], 1);
    let _ = old;
}

#[tokio::test]
async fn another_organisations_contacts_never_show() {
    let app = TestApp::new().await;
    let org = app.org().await;
    let other = app.org().await;
    let theirs = other
        .contact(json!({"fullName": "Theirs", "tags": ["secret"]}))
        .await;
    let mine = org
        .get(&format!("/contacts?ids={}", theirs.id()))
        .await
        .ok(200);
    assert_eq!(mine["meta"]["total"], 0);
    let all = org.get("/contacts").await.ok(200);
    assert_eq!(all["summary"]["total"], 0);
    assert_eq!(all["summary"]["tags"], json!([]));
}
