//! Query strings exactly as the server reads them: camelCase names, enum wire spellings,
//! `ids=a,b`, URL-encoded values, unset filters left out.

use wiremock::matchers::{method, path, query_param, query_param_is_missing};
use wiremock::{Mock, ResponseTemplate};
use wm_client::types::campaigns::TemplateCategory;
use wm_client::types::campaigns::{CampaignTab, RecipientFilter};
use wm_client::types::contacts::{ContactTab, TimelineFilter};
use wm_client::types::enums::{ChannelType, ContactSource};

use crate::support::{Harness, api, campaign_list, contact_list, id, page};

/// The received query as sorted decoded pairs.
fn pairs(req: &wiremock::Request) -> Vec<(String, String)> {
    let mut p: Vec<_> = req.url.query_pairs().into_owned().collect();
    p.sort();
    p
}

#[tokio::test]
async fn contact_filters_are_sent_as_the_server_expects() {
    let h = Harness::new().await;
    let (a, b, stage) = (id(1), id(2), id(3));
    Mock::given(method("GET"))
        .and(path(api("/contacts")))
        .and(query_param("tab", "in_progress"))
        .and(query_param("lifecycleStageId", stage.to_string()))
        .and(query_param("ownerId", "none"))
        .and(query_param("source", "WEBSITE_FORM"))
        .and(query_param("channelType", "MESSAGING_APP_A"))
        .and(query_param("tag", "vip & co"))
        .and(query_param("q", "ana maría"))
        .and(query_param("search", "x=y"))
        .and(query_param("days", "30"))
        .and(query_param("ids", format!("{a},{b}")))
        .and(query_param("page", "2"))
        .and(query_param("pageSize", "100"))
        .respond_with(ResponseTemplate::new(200).set_body_json(contact_list(vec![], 2, 100, 0)))
        .expect(1)
        .mount(&h.server)
        .await;

    let list = h
        .client
        .contacts()
        .list()
        .tab(ContactTab::InProgress)
        .lifecycle_stage_id(stage)
        .unowned()
        .source(ContactSource::WebsiteForm)
        .channel_type(ChannelType::MessagingAppA)
        .tag("vip & co")
        .q("ana maría")
        .search("x=y")
        .days(30)
        .ids([a, b])
        .page(2)
        .page_size(100)
        .send()
        .await
        .expect("list");
    assert_eq!(list.meta.page, 2);

    let reqs = h.requests().await;
    let raw = reqs[0].url.query().expect("query");
    // One `ids` pair, comma-joined (the comma percent-encoded); reserved characters encoded.
    assert_eq!(raw.matches("ids=").count(), 1, "{raw}");
    assert!(raw.contains(&format!("ids={a}%2C{b}")), "{raw}");
    assert!(raw.contains("tag=vip+%26+co"), "{raw}");
    assert!(raw.contains("search=x%3Dy"), "{raw}");
    assert_eq!(pairs(&reqs[0]).len(), 12);
}

#[tokio::test]
async fn unset_filters_are_not_sent() {
    let h = Harness::new().await;
    Mock::given(method("GET"))
        .and(path(api("/contacts")))
        .respond_with(ResponseTemplate::new(200).set_body_json(contact_list(vec![], 1, 20, 0)))
        .mount(&h.server)
        .await;
    h.client.contacts().list().send().await.expect("list");
    h.client
        .contacts()
        .list()
        .ids([])
        .owner_id(id(7))
        .send()
        .await
        .expect("list");
    let reqs = h.requests().await;
    assert_eq!(reqs[0].url.query(), None);
    assert_eq!(
        pairs(&reqs[1]),
        vec![("ownerId".to_owned(), id(7).to_string())]
    );
}

#[tokio::test]
async fn raw_pairs_of_list_contacts_are_encoded() {
    let h = Harness::new().await;
    Mock::given(method("GET"))
        .and(path(api("/contacts")))
        .and(query_param("tag", "WIRE & more"))
        .and(query_param("pageSize", "5"))
        .respond_with(ResponseTemplate::new(200).set_body_json(contact_list(vec![], 1, 5, 0)))
        .expect(1)
        .mount(&h.server)
        .await;
    h.client
        .list_contacts(&[("tag", "WIRE & more"), ("pageSize", "5")])
        .await
        .expect("list");
}

#[tokio::test]
async fn timeline_filter_is_sent_as_type() {
    let h = Harness::new().await;
    Mock::given(method("GET"))
        .and(path(api(&format!("/contacts/{}/timeline", id(1)))))
        .and(query_param("type", "notes"))
        .and(query_param("pageSize", "50"))
        .and(query_param_is_missing("page"))
        .respond_with(ResponseTemplate::new(200).set_body_json(page(vec![], 1, 50, 0)))
        .expect(1)
        .mount(&h.server)
        .await;
    h.client
        .contacts()
        .timeline(id(1))
        .kind(TimelineFilter::Notes)
        .page_size(50)
        .send()
        .await
        .expect("timeline");
}

#[tokio::test]
async fn campaign_filters_are_sent_as_the_server_expects() {
    let h = Harness::new().await;
    Mock::given(method("GET"))
        .and(path(api("/campaigns")))
        .and(query_param("tab", "drafts"))
        .and(query_param("category", "UTILITY"))
        .and(query_param("phoneNumberId", id(4).to_string()))
        .and(query_param("q", "black friday"))
        .and(query_param("days", "365"))
        .and(query_param("page", "3"))
        .and(query_param("pageSize", "10"))
        .respond_with(ResponseTemplate::new(200).set_body_json(campaign_list(vec![], 3, 10, 0)))
        .expect(1)
        .mount(&h.server)
        .await;
    h.client
        .campaigns()
        .list()
        .tab(CampaignTab::Drafts)
        .category(TemplateCategory::Utility)
        .phone_number_id(id(4))
        .q("black friday")
        .days(365)
        .page(3)
        .page_size(10)
        .send()
        .await
        .expect("list");
    assert_eq!(pairs(&h.requests().await[0]).len(), 7);
}

#[tokio::test]
async fn recipient_and_delivery_pages_are_sent() {
    let h = Harness::new().await;
    Mock::given(method("GET"))
        .and(path(api(&format!("/campaigns/{}/recipients", id(1)))))
        .and(query_param("filter", "failed"))
        .and(query_param("page", "2"))
        .respond_with(ResponseTemplate::new(200).set_body_json(page(vec![], 2, 20, 0)))
        .expect(1)
        .mount(&h.server)
        .await;
    Mock::given(method("GET"))
        .and(path(api(&format!("/webhooks/{}/deliveries", id(2)))))
        .and(query_param("pageSize", "100"))
        .respond_with(ResponseTemplate::new(200).set_body_json(page(vec![], 1, 100, 0)))
        .expect(1)
        .mount(&h.server)
        .await;
    h.client
        .campaigns()
        .recipients(id(1))
        .filter(RecipientFilter::Failed)
        .page(2)
        .send()
        .await
        .expect("recipients");
    h.client
        .webhooks()
        .deliveries(id(2))
        .page_size(100)
        .send()
        .await
        .expect("deliveries");
}
