//! Conversations, automations and reports: paths, query strings as the server reads them,
//! decoded answers, and the streams of their paginated lists.

use futures::TryStreamExt;
use serde_json::{Value, json};
use wiremock::matchers::{method, path, query_param, query_param_is_missing};
use wiremock::{Mock, ResponseTemplate};
use wm_client::reports::{NaiveDate, ReportDate};
use wm_client::types::automations::{AutomationTab, RunFilter, TriggerType};
use wm_client::types::conversations::ConversationFilter;
use wm_client::types::enums::{ChannelType, ConversationStatus};
use wm_client::types::reports::{
    CampaignDay, CampaignTotals, CommercialDay, CommercialTotals, ConversationDay,
    ConversationTotals, LifecycleDay, LifecycleTotals, TeamDay, TeamTotals, WalletDay,
    WalletTotals,
};
use wm_client::{Error, ErrorCode};

use crate::pagination::mount_pages;
use crate::support::{
    Harness, api, automation, automation_list, business, conversation, conversation_list, id, js,
    page, report, run,
};

/// The received query as sorted decoded pairs.
fn pairs(req: &wiremock::Request) -> Vec<(String, String)> {
    let mut p: Vec<_> = req.url.query_pairs().into_owned().collect();
    p.sort();
    p
}

fn owned(p: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut v: Vec<_> = p
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    v.sort();
    v
}

async fn on(h: &Harness, route: &str, body: Value) {
    Mock::given(method("GET"))
        .and(path(api(route)))
        .respond_with(ResponseTemplate::new(200).set_body_json(body))
        .expect(1)
        .mount(&h.server)
        .await;
}

#[tokio::test]
async fn conversation_filters_are_sent_as_the_server_expects() {
    let h = Harness::new().await;
    let (channel, contact, user) = (id(5), id(6), id(7));
    Mock::given(method("GET"))
        .and(path(api("/conversations")))
        .and(query_param("filter", "unassigned"))
        .and(query_param("status", "PENDING"))
        .and(query_param("channelId", channel.to_string()))
        .and(query_param("channelType", "MESSAGING_APP_A"))
        .and(query_param("contactId", contact.to_string()))
        .and(query_param("assignedToUserId", user.to_string()))
        .and(query_param("q", "ana & co"))
        .and(query_param("page", "2"))
        .and(query_param("pageSize", "50"))
        .respond_with(ResponseTemplate::new(200).set_body_json(conversation_list(
            vec![js(&conversation(1))],
            2,
            50,
            51,
        )))
        .expect(1)
        .mount(&h.server)
        .await;
    let list = h
        .client
        .conversations()
        .list()
        .filter(ConversationFilter::Unassigned)
        .status(ConversationStatus::Pending)
        .channel_id(channel)
        .channel_type(ChannelType::MessagingAppA)
        .contact_id(contact)
        .assigned_to_user_id(user)
        .q("ana & co")
        .page(2)
        .page_size(50)
        .send()
        .await
        .expect("list");
    assert_eq!(list.data, vec![conversation(1)]);
    assert_eq!((list.meta.page, list.meta.total_pages), (2, 2));
    assert_eq!(list.tabs.unassigned, 51);
    assert_eq!(list.summary.open, 51);
    let reqs = h.requests().await;
    assert_eq!(pairs(&reqs[0]).len(), 9);
    assert!(reqs[0].url.query().expect("query").contains("q=ana+%26+co"));
}

#[tokio::test]
async fn conversation_detail_and_stream() {
    let h = Harness::new().await;
    on(
        &h,
        &format!("/conversations/{}", id(3)),
        js(&conversation(3)),
    )
    .await;
    mount_pages(
        &h,
        "/conversations",
        vec![
            vec![js(&conversation(1)), js(&conversation(2))],
            vec![js(&conversation(3))],
        ],
        2,
        conversation_list,
    )
    .await;
    let got = h.client.conversations().get(id(3)).await.expect("get");
    assert_eq!(got, conversation(3));
    let all: Vec<_> = h
        .client
        .conversations()
        .list()
        .status(ConversationStatus::Open)
        .page_size(2)
        .stream()
        .try_collect()
        .await
        .expect("stream");
    assert_eq!(all, vec![conversation(1), conversation(2), conversation(3)]);
    let reqs = h.requests().await;
    assert_eq!(reqs.len(), 3);
    assert!(
        reqs[1..].iter().all(|r| r
            .url
            .query_pairs()
            .any(|(k, v)| k == "status" && v == "OPEN")),
        "every page keeps the filters"
    );
}

#[tokio::test]
async fn automation_list_filters_detail_and_errors() {
    let h = Harness::new().await;
    Mock::given(method("GET"))
        .and(path(api("/automations")))
        .and(query_param("tab", "paused"))
        .and(query_param("trigger", "NO_RESPONSE_DAYS"))
        .and(query_param("q", "welcome"))
        .and(query_param("includeArchived", "true"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(automation_list(vec![
                js(&automation(1)),
                js(&automation(2)),
            ])),
        )
        .expect(1)
        .mount(&h.server)
        .await;
    on(&h, &format!("/automations/{}", id(1)), js(&automation(1))).await;
    Mock::given(method("GET"))
        .and(path(api(&format!("/automations/{}", id(9)))))
        .respond_with(ResponseTemplate::new(404).set_body_json(business(
            404,
            None,
            "Automation not found",
        )))
        .mount(&h.server)
        .await;

    let a = h.client.automations();
    let list = a
        .list()
        .tab(AutomationTab::Paused)
        .trigger(TriggerType::NoResponseDays)
        .q("welcome")
        .include_archived(true)
        .send()
        .await
        .expect("list");
    assert_eq!(list.data, vec![automation(1), automation(2)]);
    assert_eq!(list.summary.active, 2);
    assert_eq!(list.summary.currency, "USD");
    let one = a.get(id(1)).await.expect("get");
    assert_eq!(
        one.trigger_label,
        "When a contact enters the stage Customer"
    );
    assert_eq!(one, automation(1));
    let missing = a.get(id(9)).await.expect_err("404");
    assert!(
        matches!(missing, Error::Api { status: 404, code: None, ref message, .. } if message == "Automation not found"),
        "{missing:?}"
    );
    // Unset filters are not sent; false is spelled as the server reads it.
    Mock::given(method("GET"))
        .and(path(api("/automations")))
        .respond_with(ResponseTemplate::new(200).set_body_json(automation_list(vec![])))
        .mount(&h.server)
        .await;
    a.list().send().await.expect("bare list");
    a.list()
        .include_archived(false)
        .send()
        .await
        .expect("false");
    let reqs = h.requests().await;
    assert_eq!(reqs[3].url.query(), None);
    assert_eq!(pairs(&reqs[4]), owned(&[("includeArchived", "false")]));
}

#[tokio::test]
async fn automation_logs_query_and_stream() {
    let h = Harness::new().await;
    let route = format!("/automations/{}/logs", id(1));
    Mock::given(method("GET"))
        .and(path(api(&route)))
        .and(query_param("result", "failed"))
        .and(query_param("page", "3"))
        .and(query_param("pageSize", "10"))
        .respond_with(ResponseTemplate::new(200).set_body_json(page(vec![js(&run(1))], 3, 10, 21)))
        .expect(1)
        .mount(&h.server)
        .await;
    let p = h
        .client
        .automations()
        .logs(id(1))
        .result(RunFilter::Failed)
        .page(3)
        .page_size(10)
        .send()
        .await
        .expect("logs");
    assert_eq!(p.data, vec![run(1)]);
    assert_eq!(p.meta.total, 21);

    let h = Harness::new().await;
    mount_pages(
        &h,
        &route,
        vec![vec![js(&run(1))], vec![js(&run(2))], vec![js(&run(3))]],
        1,
        page,
    )
    .await;
    let runs: Vec<_> = h
        .client
        .automations()
        .logs(id(1))
        .page_size(1)
        .stream()
        .try_collect()
        .await
        .expect("stream");
    assert_eq!(runs, vec![run(1), run(2), run(3)]);
}

#[tokio::test]
async fn every_report_has_its_path_and_period() {
    let h = Harness::new().await;
    let day = |name: &str| {
        Mock::given(method("GET"))
            .and(path(api(&format!("/reports/{name}"))))
            .and(query_param("from", "2026-11-10"))
            .and(query_param("to", "2026-11-11"))
    };
    let date = |d: &str| CommercialDay {
        date: d.into(),
        ..Default::default()
    };
    let bodies = [
        ("commercial", report::<CommercialTotals, _>(date)),
        (
            "lifecycle",
            report::<LifecycleTotals, _>(|d| LifecycleDay {
                date: d.into(),
                ..Default::default()
            }),
        ),
        (
            "campaigns",
            report::<CampaignTotals, _>(|d| CampaignDay {
                date: d.into(),
                ..Default::default()
            }),
        ),
        (
            "wallet",
            report::<WalletTotals, _>(|d| WalletDay {
                date: d.into(),
                ..Default::default()
            }),
        ),
        (
            "team",
            report::<TeamTotals, _>(|d| TeamDay {
                date: d.into(),
                ..Default::default()
            }),
        ),
        (
            "conversations",
            report::<ConversationTotals, _>(|d| ConversationDay {
                date: d.into(),
                ..Default::default()
            }),
        ),
    ];
    for (name, body) in bodies {
        day(name)
            .respond_with(ResponseTemplate::new(200).set_body_json(body))
            .expect(1)
            .mount(&h.server)
            .await;
    }
    let from = NaiveDate::from_ymd_opt(2026, 11, 10).expect("date");
    let r = h.client.reports();
    // NaiveDate, &NaiveDate, &str, String and ReportDate are all accepted.
    let c = r.commercial().from(from).to("2026-11-11").send().await;
    let c = c.expect("commercial");
    assert_eq!(c.period.from, "2026-11-10");
    assert_eq!(c.period.timezone, "UTC");
    assert_eq!(c.series.len(), 2);
    assert_eq!(c.series[1].date, "2026-11-11");
    let l = r
        .lifecycle()
        .from(ReportDate::from(&from))
        .to(String::from("2026-11-11"));
    assert_eq!(l.path(), "/reports/lifecycle");
    assert_eq!(l.query().from.as_deref(), Some("2026-11-10"));
    assert_eq!(l.send().await.expect("lifecycle").series.len(), 2);
    let to = from.succ_opt().expect("next day");
    let k = r.campaigns().from(from).to(to).send().await;
    assert_eq!(k.expect("campaigns").totals, CampaignTotals::default());
    let w = r.wallet().from(from).to(to).send().await.expect("wallet");
    assert_eq!(w.series[0].date, "2026-11-10");
    let t = r.team().from(from).to(to).send().await.expect("team");
    assert!(t.totals.members.is_empty());
    let v = r.conversations().from(from).to(to).send().await;
    assert_eq!(v.expect("conversations").series[1].opened, 0);
    for req in h.requests().await {
        assert_eq!(
            pairs(&req),
            owned(&[("from", "2026-11-10"), ("to", "2026-11-11")])
        );
    }
    assert_eq!(ReportDate::from(from).as_str(), "2026-11-10");
}

#[tokio::test]
async fn a_report_without_a_period_sends_no_query_and_errors_are_typed() {
    let h = Harness::new().await;
    Mock::given(method("GET"))
        .and(path(api("/reports/wallet")))
        .and(query_param_is_missing("from"))
        .and(query_param_is_missing("to"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(report::<WalletTotals, _>(|d| WalletDay {
                date: d.into(),
                ..Default::default()
            })),
        )
        .expect(1)
        .mount(&h.server)
        .await;
    Mock::given(method("GET"))
        .and(path(api("/reports/team")))
        .and(query_param("from", "11/10/2026"))
        .respond_with(ResponseTemplate::new(400).set_body_json(json!({
            "statusCode": 400, "message": ["from must be a date YYYY-MM-DD"], "error": "Bad Request"
        })))
        .expect(1)
        .mount(&h.server)
        .await;
    Mock::given(method("GET"))
        .and(path(api("/reports/commercial")))
        .respond_with(ResponseTemplate::new(403).set_body_json(business(
            403,
            Some("API_KEY_SCOPE_MISSING"),
            "This API key is missing the scope reports:read",
        )))
        .expect(1)
        .mount(&h.server)
        .await;
    let r = h.client.reports();
    let w = r.wallet().send().await.expect("default period");
    assert_eq!(w.period.to, "2026-11-11");
    assert_eq!(h.requests().await[0].url.query(), None);
    let bad = r.team().from("11/10/2026").send().await.expect_err("400");
    assert!(
        matches!(bad, Error::Validation { ref messages } if messages == &["from must be a date YYYY-MM-DD"]),
        "{bad:?}"
    );
    let denied = r.commercial().send().await.expect_err("403");
    assert_eq!(denied.code(), Some(ErrorCode::ApiKeyScopeMissing));
    assert_eq!(denied.status(), Some(403));
}
