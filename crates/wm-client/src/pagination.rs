//! Paginated lists as streams.
//!
//! Every list builder with `page`/`pageSize` has `.send()` (one page, with its `meta`) and
//! `.stream()`: a [`PageStream`] that yields the items one by one, fetching page after page
//! (starting at the builder's `page`, default 1, with its `page_size`) until
//! `meta.totalPages` — or an empty page — is reached. A failed page (after the client's
//! retries) is yielded as one `Err` and ends the stream. Each page is a separate request,
//! so items added or removed meanwhile may shift between pages.
//!
//! ```no_run
//! use futures::{StreamExt, TryStreamExt};
//! # async fn run(client: wm_client::Client) -> Result<(), wm_client::Error> {
//! let mut vips = client.contacts().list().tag("vip").page_size(100).stream();
//! while let Some(contact) = vips.next().await {
//!     println!("{}", contact?.id);
//! }
//! let all: Vec<_> = client.campaigns().list().stream().try_collect().await?;
//! # Ok(()) }
//! ```

use std::future::Future;

use futures::StreamExt;
use futures::stream::{self, BoxStream};
use serde::Serialize;
use wm_types::PageMeta;

use crate::Error;

/// The items of a paginated list across all its pages. `'static`, `Send` and `Unpin`:
/// it can be polled with `StreamExt::next`, collected with `TryStreamExt::try_collect`,
/// or moved into a task.
pub type PageStream<T> = BoxStream<'static, Result<T, Error>>;

/// `page` and `pageSize` of the plain paginated endpoints; `None` leaves the server's
/// default (1 and 20).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PageParams {
    pub(crate) page: Option<u64>,
    pub(crate) page_size: Option<u64>,
}

struct State<T, F> {
    fetch: F,
    next: Option<u64>,
    buffered: std::vec::IntoIter<T>,
}

/// Walks the pages from `first`: `fetch(page)` returns that page's items and meta.
pub(crate) fn paginate<T, F, Fut>(first: u64, fetch: F) -> PageStream<T>
where
    T: Send + 'static,
    F: FnMut(u64) -> Fut + Send + 'static,
    Fut: Future<Output = Result<(Vec<T>, PageMeta), Error>> + Send + 'static,
{
    let state = State {
        fetch,
        next: Some(first),
        buffered: Vec::new().into_iter(),
    };
    stream::unfold(state, |mut st| async move {
        loop {
            if let Some(item) = st.buffered.next() {
                return Some((Ok(item), st));
            }
            let page = st.next.take()?;
            match (st.fetch)(page).await {
                Ok((items, meta)) => {
                    st.next = (page < meta.total_pages && !items.is_empty()).then_some(page + 1);
                    st.buffered = items.into_iter();
                }
                // `next` stays None: the error is the last item.
                Err(e) => return Some((Err(e), st)),
            }
        }
    })
    .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::executor::block_on;

    fn meta(page: u64, total: u64) -> PageMeta {
        PageMeta::new(page, 2, total)
    }

    #[test]
    fn walks_until_total_pages_then_stops() {
        let s = paginate(1, |p| async move {
            let items = match p {
                1 => vec![1, 2],
                2 => vec![3, 4],
                3 => vec![5],
                _ => panic!("page {p} should not be asked"),
            };
            Ok((items, meta(p, 5)))
        });
        let got: Vec<_> = block_on(s.collect::<Vec<_>>())
            .into_iter()
            .map(|r| r.expect("item"))
            .collect();
        assert_eq!(got, vec![1, 2, 3, 4, 5]);
    }

    #[test]
    fn an_error_is_the_last_item_and_an_empty_page_ends() {
        let s = paginate(1, |p| async move {
            match p {
                1 => Ok((vec![1], meta(1, 10))),
                _ => Err(Error::Decode("boom".into())),
            }
        });
        let got = block_on(s.collect::<Vec<_>>());
        assert_eq!(got.len(), 2);
        assert!(matches!(got[1], Err(Error::Decode(_))));
        let s = paginate(1, |p| async move { Ok((Vec::<u8>::new(), meta(p, 10))) });
        assert!(block_on(s.collect::<Vec<_>>()).is_empty());
    }
}

/// A list answer: its items and where the page sits.
pub(crate) trait Listing<T>: serde::de::DeserializeOwned + Send + 'static {
    /// Items and `meta`.
    fn split(self) -> (Vec<T>, PageMeta);
}

impl<T: serde::de::DeserializeOwned + Send + 'static> Listing<T> for wm_types::Page<T> {
    fn split(self) -> (Vec<T>, PageMeta) {
        (self.data, self.meta)
    }
}

macro_rules! listing {
    ($($list:ty => $item:ty),+ $(,)?) => {$(
        impl Listing<$item> for $list {
            fn split(self) -> (Vec<$item>, PageMeta) {
                (self.data, self.meta)
            }
        }
    )+};
}
listing!(
    wm_types::contacts::ContactList => wm_types::contacts::Contact,
    wm_types::campaigns::CampaignList => wm_types::campaigns::Campaign,
    wm_types::conversations::ConversationList => wm_types::conversations::Conversation,
);

/// A list query with `page` and `pageSize`: where a stream starts, and how it asks for the
/// next page without touching the caller's filters.
pub(crate) trait PagedQuery: Serialize + Clone + Send + Sync + 'static {
    /// The page the caller asked for, if any.
    fn page(&self) -> Option<u64>;
    /// The same query, at `page`.
    fn with_page(self, page: u64) -> Self;
}

macro_rules! paged_query {
    ($($query:ty),+ $(,)?) => {$(
        impl PagedQuery for $query {
            fn page(&self) -> Option<u64> {
                self.page
            }
            fn with_page(self, page: u64) -> Self {
                Self { page: Some(page), ..self }
            }
        }
    )+};
}
paged_query!(
    PageParams,
    wm_types::contacts::ListContactsQuery,
    wm_types::contacts::TimelineQuery,
    wm_types::campaigns::ListCampaignsQuery,
    wm_types::campaigns::RecipientsQuery,
    wm_types::conversations::ListConversationsQuery,
    wm_types::automations::LogsQuery,
);

/// The `page` and `page_size` setters of a list builder whose `query` is a [`PagedQuery`];
/// one definition so every builder documents and bounds them alike.
macro_rules! page_setters {
    () => {
        /// `page` (1-based); where a stream starts.
        pub fn page(mut self, page: u64) -> Self {
            self.query.page = Some(page);
            self
        }

        /// `pageSize` (1–100).
        pub fn page_size(mut self, page_size: u64) -> Self {
            self.query.page_size = Some(page_size);
            self
        }
    };
}
pub(crate) use page_setters;

/// Every item of a paginated `GET path`, from the query's page (default 1) on; `L` is the
/// list body.
pub(crate) fn stream_list<L, T>(
    client: &crate::Client,
    path: String,
    query: impl PagedQuery,
) -> PageStream<T>
where
    L: Listing<T>,
    T: Send + 'static,
{
    let client = client.clone();
    let first = query.page().unwrap_or(1);
    paginate(first, move |page| {
        let (client, path) = (client.clone(), path.clone());
        let query = query.clone().with_page(page);
        async move {
            let list: L = client
                .send(crate::http::Request::get(path).query(&query)?)
                .await?;
            Ok(list.split())
        }
    })
}
