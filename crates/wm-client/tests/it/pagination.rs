//! `.stream()` walks the pages until `meta.totalPages`, keeping the filters on each page.

use futures::{StreamExt, TryStreamExt};
use serde_json::Value;
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, ResponseTemplate};
use wm_client::Error;

use crate::support::{
    Harness, api, business, campaign, campaign_list, contact, contact_list, delivery, id, js, note,
    page, recipient, timeline_entry,
};

/// Mounts one mock per page (`page=1..`), each expected once, answering `envelope(items,
/// page, page_size, total)`.
pub(crate) async fn mount_pages(
    h: &Harness,
    route: &str,
    pages: Vec<Vec<Value>>,
    page_size: u64,
    envelope: fn(Vec<Value>, u64, u64, u64) -> Value,
) {
    let total: usize = pages.iter().map(Vec::len).sum();
    for (i, items) in pages.into_iter().enumerate() {
        let n = i as u64 + 1;
        Mock::given(method("GET"))
            .and(path(api(route)))
            .and(query_param("page", n.to_string()))
            .and(query_param("pageSize", page_size.to_string()))
            .respond_with(ResponseTemplate::new(200).set_body_json(envelope(
                items,
                n,
                page_size,
                total as u64,
            )))
            .expect(1)
            .mount(&h.server)
            .await;
    }
}

#[tokio::test]
async fn contacts_stream_walks_three_pages_keeping_the_filters() {
    let h = Harness::new().await;
    let pages = vec![
        vec![js(&contact(1)), js(&contact(2))],
        vec![js(&contact(3)), js(&contact(4))],
        vec![js(&contact(5))],
    ];
    mount_pages(&h, "/contacts", pages, 2, contact_list).await;

    let got: Vec<_> = h
        .client
        .contacts()
        .list()
        .tag("vip")
        .page_size(2)
        .stream()
        .try_collect()
        .await
        .expect("stream");
    let ids: Vec<_> = got.iter().map(|c| c.id).collect();
    assert_eq!(ids, (1..=5).map(id).collect::<Vec<_>>());
    let reqs = h.requests().await;
    assert_eq!(reqs.len(), 3, "stops at totalPages");
    assert!(
        reqs.iter()
            .all(|r| r.url.query_pairs().any(|(k, v)| k == "tag" && v == "vip"))
    );
}

#[tokio::test]
async fn a_stream_starts_at_the_builders_page() {
    let h = Harness::new().await;
    Mock::given(method("GET"))
        .and(path(api("/campaigns")))
        .and(query_param("page", "2"))
        .respond_with(ResponseTemplate::new(200).set_body_json(campaign_list(
            vec![js(&campaign(3))],
            2,
            20,
            21,
        )))
        .expect(1)
        .mount(&h.server)
        .await;
    let got: Vec<_> = h
        .client
        .campaigns()
        .list()
        .page(2)
        .stream()
        .try_collect()
        .await
        .expect("stream");
    assert_eq!(got.len(), 1);
}

#[tokio::test]
async fn a_failed_page_is_the_last_item() {
    let h = Harness::new().await;
    Mock::given(method("GET"))
        .and(query_param("page", "1"))
        .respond_with(ResponseTemplate::new(200).set_body_json(page(vec![js(&note(1))], 1, 1, 3)))
        .mount(&h.server)
        .await;
    Mock::given(method("GET"))
        .and(query_param("page", "2"))
        .respond_with(ResponseTemplate::new(404).set_body_json(business(404, None, "gone")))
        .expect(1)
        .mount(&h.server)
        .await;
    let items: Vec<_> = h
        .client
        .contacts()
        .notes(id(1))
        .page_size(1)
        .stream()
        .collect()
        .await;
    assert_eq!(items.len(), 2);
    assert!(items[0].is_ok());
    assert!(matches!(items[1], Err(Error::Api { status: 404, .. })));
}

#[tokio::test]
async fn an_empty_list_yields_nothing() {
    let h = Harness::new().await;
    mount_pages(&h, "/contacts", vec![vec![]], 20, contact_list).await;
    let n = h
        .client
        .contacts()
        .list()
        .page_size(20)
        .stream()
        .count()
        .await;
    assert_eq!(n, 0);
}

#[tokio::test]
async fn every_paginated_list_streams() {
    let h = Harness::new().await;
    let c = id(1);
    mount_pages(
        &h,
        "/campaigns",
        vec![vec![js(&campaign(1))], vec![js(&campaign(2))]],
        1,
        campaign_list,
    )
    .await;
    mount_pages(
        &h,
        &format!("/campaigns/{c}/recipients"),
        vec![vec![js(&recipient(1))], vec![js(&recipient(2))]],
        1,
        page,
    )
    .await;
    mount_pages(
        &h,
        &format!("/contacts/{c}/notes"),
        vec![vec![js(&note(1))], vec![js(&note(2))]],
        1,
        page,
    )
    .await;
    mount_pages(
        &h,
        &format!("/contacts/{c}/timeline"),
        vec![vec![js(&timeline_entry(1))], vec![js(&timeline_entry(2))]],
        1,
        page,
    )
    .await;
    mount_pages(
        &h,
        &format!("/webhooks/{c}/deliveries"),
        vec![vec![js(&delivery(1))], vec![js(&delivery(2))]],
        1,
        page,
    )
    .await;

    let cl = &h.client;
    let campaigns: Vec<_> = cl
        .campaigns()
        .list()
        .page_size(1)
        .stream()
        .try_collect()
        .await
        .expect("campaigns");
    let recipients: Vec<_> = cl
        .campaigns()
        .recipients(c)
        .page_size(1)
        .stream()
        .try_collect()
        .await
        .expect("recipients");
    let notes: Vec<_> = cl
        .contacts()
        .notes(c)
        .page_size(1)
        .stream()
        .try_collect()
        .await
        .expect("notes");
    let entries: Vec<_> = cl
        .contacts()
        .timeline(c)
        .page_size(1)
        .stream()
        .try_collect()
        .await
        .expect("timeline");
    let deliveries: Vec<_> = cl
        .webhooks()
        .deliveries(c)
        .page_size(1)
        .stream()
        .try_collect()
        .await
        .expect("deliveries");
    assert_eq!(campaigns, vec![campaign(1), campaign(2)]);
    assert_eq!(recipients, vec![recipient(1), recipient(2)]);
    assert_eq!(notes, vec![note(1), note(2)]);
    assert_eq!(entries, vec![timeline_entry(1), timeline_entry(2)]);
    assert_eq!(deliveries, vec![delivery(1), delivery(2)]);
}

#[tokio::test]
async fn a_stream_can_move_into_a_task() {
    let h = Harness::new().await;
    mount_pages(
        &h,
        "/contacts",
        vec![vec![js(&contact(1))]],
        20,
        contact_list,
    )
    .await;
    let stream = h.client.contacts().list().page_size(20).stream();
    let n = tokio::spawn(stream.count()).await.expect("task");
    assert_eq!(n, 1);
}
