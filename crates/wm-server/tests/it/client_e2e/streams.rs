//! A page stream across pages through the client.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::http::Method;
use futures::TryStreamExt;
use uuid::Uuid;
use wm_client::Error;

use crate::support::TestApp;

use super::{client, mexicans, serve_router};

#[tokio::test]
async fn a_stream_walks_three_pages_of_contacts() {
    let app = TestApp::new().await;
    let org = app.org().await;
    // The app's router, counting the `GET /contacts` requests it serves.
    let lists = Arc::new(AtomicUsize::new(0));
    let seen = lists.clone();
    let counted = app.router.clone().layer(axum::middleware::from_fn(
        move |req: axum::extract::Request, next: axum::middleware::Next| {
            if req.method() == Method::GET && req.uri().path() == "/api/v1/contacts" {
                seen.fetch_add(1, Ordering::SeqCst);
            }
            next.run(req)
        },
    ));
    let base = serve_router(counted).await;
    let c = client(&base, &org.key);
    let tagged = mexicans(&app, &c, 7, "paged", 0).await;
    mexicans(&app, &c, 2, "other", 50).await;

    let first = c
        .contacts()
        .list()
        .tag("paged")
        .page_size(3)
        .send()
        .await
        .expect("page 1");
    assert_eq!((first.meta.total, first.meta.total_pages), (7, 3));
    lists.store(0, Ordering::SeqCst);
    let streamed: Vec<_> = c
        .contacts()
        .list()
        .tag("paged")
        .page_size(3)
        .stream()
        .try_collect()
        .await
        .expect("stream");
    assert_eq!(lists.load(Ordering::SeqCst), 3, "one request per page");
    let ids: Vec<Uuid> = streamed.iter().map(|x| x.id).collect();
    let newest_first: Vec<Uuid> = tagged.iter().rev().copied().collect();
    assert_eq!(ids, newest_first, "every contact once, in list order");
    assert!(streamed.iter().all(|x| x.tags == ["paged"]));
    // From the builder's page on.
    let rest: Vec<_> = c
        .contacts()
        .list()
        .tag("paged")
        .page(2)
        .page_size(3)
        .stream()
        .try_collect()
        .await
        .expect("from page 2");
    assert_eq!(
        rest.iter().map(|x| x.id).collect::<Vec<_>>(),
        newest_first[3..].to_vec()
    );
    // A page the server refuses ends the stream with the typed error.
    let mut bad = c.contacts().list().page_size(101).stream();
    let err = bad.try_next().await.expect_err("invalid pageSize");
    assert!(matches!(err, Error::Validation { .. }), "{err:?}");
    assert!(bad.try_next().await.expect("ended").is_none());
}
