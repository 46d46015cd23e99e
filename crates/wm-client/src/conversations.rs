//! `/conversations`: the inbox, read-only — list (with filters, tabs, summary and a stream)
//! and get. Message content is not part of API v1.
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
//! }
//! # Ok(()) }
//! ```

use uuid::Uuid;
use wm_types::conversations::{
    Conversation, ConversationFilter, ConversationList, ListConversationsQuery,
};
use wm_types::enums::{ChannelType, ConversationStatus};

use crate::http::Request;
use crate::pagination::{PageStream, page_setters, stream_list};
use crate::{Client, Error};

impl Client {
    /// The conversations resource (scope `conversations:read`).
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
