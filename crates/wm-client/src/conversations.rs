//! `/conversations`: the inbox — list (with filters, tabs, summary and a stream), get,
//! change status or assignee (`conversations:write`), and read a thread's messages newest
//! first (keyset pages, or every message as a stream).
//!
//! ```no_run
//! use futures::TryStreamExt;
//! use wm_client::types::conversations::ConversationFilter;
//! use wm_client::types::enums::ConversationStatus;
//! # async fn run(client: wm_client::Client) -> Result<(), wm_client::Error> {
//! let inbox = client.conversations().list().filter(ConversationFilter::Unassigned).send().await?;
//! println!("{} unassigned, oldest waiting {} min", inbox.tabs.unassigned,
//!     inbox.summary.oldest_waiting_minutes);
//! let open: Vec<_> = client
//!     .conversations()
//!     .list()
//!     .status(ConversationStatus::Open)
//!     .page_size(100)
//!     .stream()
//!     .try_collect()
//!     .await?;
//! if let Some(first) = open.first() {
//!     let c = client.conversations().get(first.id).await?;
//!     println!("{:?} on {}", c.contact.full_name, c.channel.channel_type);
//!     let thread: Vec<_> = client.conversations().messages(c.id).stream().try_collect().await?;
//!     println!("{} messages", thread.len());
//! }
//! # Ok(()) }
//! ```

use futures::{Stream, TryStreamExt};
use uuid::Uuid;
use wm_types::conversations::{
    Conversation, ConversationFilter, ConversationList, ListConversationsQuery, UpdateConversation,
};
use wm_types::enums::{ChannelType, ConversationStatus};
use wm_types::messages::{ListMessagesQuery, MarkedRead, Message, MessageList, SendMessage};

use crate::http::Request;
use crate::pagination::{PageStream, page_setters, stream_list};
use crate::{Client, Error};

impl Client {
    /// The conversations resource (scopes `conversations:read`, `conversations:write`).
    pub fn conversations(&self) -> Conversations<'_> {
        Conversations { client: self }
    }
}

/// The conversations resource: `client.conversations()`.
#[derive(Debug, Clone, Copy)]
pub struct Conversations<'c> {
    client: &'c Client,
}

impl<'c> Conversations<'c> {
    /// `GET /conversations`: a builder of filters, then `.send()` or `.stream()`.
    pub fn list(&self) -> ListConversations<'c> {
        ListConversations {
            client: self.client,
            query: ListConversationsQuery::default(),
        }
    }

    /// `GET /conversations/{id}` (without messages).
    pub async fn get(&self, id: Uuid) -> Result<Conversation, Error> {
        self.client
            .send(Request::get(format!("/conversations/{id}")))
            .await
    }

    /// `PATCH /conversations/{id}` (scope `conversations:write`): status and/or assignee
    /// (`Some(None)` unassigns).
    pub async fn update(
        &self,
        id: Uuid,
        change: &UpdateConversation,
    ) -> Result<Conversation, Error> {
        self.client
            .send(Request::patch(format!("/conversations/{id}")).json(change)?)
            .await
    }

    /// `POST /conversations/{id}/messages` (scope `conversations:write`): a reply, queued
    /// PENDING and sent at most once. Outside the 24-hour window only a template is taken
    /// (a free-form reply is `CONVERSATION_WINDOW_CLOSED`).
    pub async fn reply(&self, id: Uuid, message: &SendMessage) -> Result<Message, Error> {
        self.client
            .send(Request::post(format!("/conversations/{id}/messages")).json(message)?)
            .await
    }

    /// `POST /conversations/{id}/read` (scope `conversations:write`): the customer's
    /// messages marked read, at the platform too.
    pub async fn mark_read(&self, id: Uuid) -> Result<MarkedRead, Error> {
        self.client
            .send(Request::post(format!("/conversations/{id}/read")))
            .await
    }

    /// `GET /conversations/{id}/messages`: a builder, then `.send()` for one page or
    /// `.stream()` for the whole thread, newest first.
    pub fn messages(&self, id: Uuid) -> ListMessages<'c> {
        ListMessages::of(self.client, format!("/conversations/{id}/messages"))
    }
}

/// `GET /conversations/{id}/messages` and `GET /contacts/{id}/messages` paging.
#[derive(Debug, Clone)]
#[must_use = "a list builder does nothing until .send() or .stream()"]
pub struct ListMessages<'c> {
    client: &'c Client,
    path: String,
    query: ListMessagesQuery,
}

impl<'c> ListMessages<'c> {
    /// The messages at `path`, from the newest.
    pub(crate) fn of(client: &'c Client, path: String) -> Self {
        ListMessages {
            client,
            path,
            query: ListMessagesQuery::default(),
        }
    }

    /// `pageSize` (1–100, default 50).
    pub fn page_size(mut self, n: u64) -> Self {
        self.query.page_size = Some(n);
        self
    }

    /// `before`: only messages older than this one.
    pub fn before(mut self, id: Uuid) -> Self {
        self.query.before = Some(id);
        self
    }

    /// One page, newest first; `meta.hasMore` says whether older ones remain.
    pub async fn send(&self) -> Result<MessageList, Error> {
        self.client
            .send(Request::get(self.path.clone()).query(&self.query)?)
            .await
    }

    /// Every message from `before` (or the newest) back to the first, a page at a time.
    pub fn stream(self) -> impl Stream<Item = Result<Message, Error>> + 'c {
        futures::stream::try_unfold(Some(self), |next| async move {
            let Some(list) = next else {
                return Ok(None);
            };
            let page = list.send().await?;
            let after = match (page.meta.has_more, page.data.last()) {
                (true, Some(last)) => Some(list.clone().before(last.id)),
                _ => None,
            };
            Ok(Some((
                futures::stream::iter(page.data.into_iter().map(Ok)),
                after,
            )))
        })
        .try_flatten()
    }
}

/// `GET /conversations` filters. Unset filters are not sent.
#[derive(Debug, Clone)]
#[must_use = "a list builder does nothing until .send() or .stream()"]
pub struct ListConversations<'c> {
    client: &'c Client,
    query: ListConversationsQuery,
}

impl ListConversations<'_> {
    /// Replaces every filter with a wire query struct.
    pub fn with_query(mut self, query: ListConversationsQuery) -> Self {
        self.query = query;
        self
    }

    /// The filters as they will be sent.
    pub fn query(&self) -> &ListConversationsQuery {
        &self.query
    }

    /// `filter`: all, unassigned (not resolved, no assignee), mine (assigned to the key's
    /// user) or resolved.
    pub fn filter(mut self, filter: ConversationFilter) -> Self {
        self.query.filter = Some(filter);
        self
    }

    /// `status`: OPEN, PENDING or RESOLVED.
    pub fn status(mut self, status: ConversationStatus) -> Self {
        self.query.status = Some(status);
        self
    }

    /// `channelId`.
    pub fn channel_id(mut self, id: Uuid) -> Self {
        self.query.channel_id = Some(id);
        self
    }

    /// `channelType`.
    pub fn channel_type(mut self, channel_type: ChannelType) -> Self {
        self.query.channel_type = Some(channel_type);
        self
    }

    /// `contactId`.
    pub fn contact_id(mut self, id: Uuid) -> Self {
        self.query.contact_id = Some(id);
        self
    }

    /// `assignedToUserId`.
    pub fn assigned_to_user_id(mut self, id: Uuid) -> Self {
        self.query.assigned_to_user_id = Some(id);
        self
    }

    /// `q`: substring of the contact's name, phone or e-mail (max 100).
    pub fn q(mut self, q: impl Into<String>) -> Self {
        self.query.q = Some(q.into());
        self
    }

    page_setters!();

    /// Fetches one page (latest activity first), with `meta`, `tabs` and `summary`.
    pub async fn send(self) -> Result<ConversationList, Error> {
        self.client
            .send(Request::get("/conversations").query(&self.query)?)
            .await
    }

    /// Every matching conversation, across pages.
    pub fn stream(self) -> PageStream<Conversation> {
        stream_list::<ConversationList, _>(self.client, "/conversations".to_owned(), self.query)
    }
}
