//! `/contacts`: list (with filters and a stream), get, create, update, delete, bulk update,
//! timeline, notes and identities.
//!
//! ```no_run
//! use futures::TryStreamExt;
//! use wm_client::types::contacts::{ContactTab, CreateNote, TimelineFilter};
//! # async fn run(client: wm_client::Client, id: uuid::Uuid) -> Result<(), wm_client::Error> {
//! let page = client.contacts().list().tab(ContactTab::Customers).tag("vip").send().await?;
//! println!("{} customers tagged vip", page.meta.total);
//! let notes = client.contacts().timeline(id).kind(TimelineFilter::Notes).send().await?;
//! client.contacts().add_note(id, &CreateNote { body: "Called".into() }).await?;
//! let every_note: Vec<_> = client.contacts().notes(id).stream().try_collect().await?;
//! # Ok(()) }
//! ```

use uuid::Uuid;
use wm_types::common::{Deleted, Page};
use wm_types::contacts::{
    BulkResult, BulkUpdateContacts, Contact, ContactList, ContactTab, CreateContact,
    CreateIdentity, CreateNote, Identity, ListContactsQuery, Note, OwnerFilter, TimelineEntry,
    TimelineFilter, TimelineQuery, UpdateContact,
};
use wm_types::enums::{ChannelType, ContactSource};

use crate::http::Request;
use crate::pagination::{PageParams, PageStream, page_setters, stream_list};
use crate::{Client, Error};

impl Client {
    /// The contacts resource.
    pub fn contacts(&self) -> Contacts<'_> {
        Contacts { client: self }
    }

    /// `POST /contacts`; same as `self.contacts().create(body)`.
    pub async fn create_contact(&self, body: &CreateContact) -> Result<Contact, Error> {
        self.contacts().create(body).await
    }

    /// `GET /contacts/{id}`; same as `self.contacts().get(id)`.
    pub async fn get_contact(&self, id: Uuid) -> Result<Contact, Error> {
        self.contacts().get(id).await
    }

    /// `PATCH /contacts/{id}`; same as `self.contacts().update(id, body)`.
    pub async fn update_contact(&self, id: Uuid, body: &UpdateContact) -> Result<Contact, Error> {
        self.contacts().update(id, body).await
    }

    /// `DELETE /contacts/{id}`; same as `self.contacts().delete(id)`.
    pub async fn delete_contact(&self, id: Uuid) -> Result<Deleted, Error> {
        self.contacts().delete(id).await
    }

    /// `GET /contacts` with raw query pairs (URL-encoded here), for filters given as text;
    /// [`Contacts::list`] is the typed form.
    pub async fn list_contacts(&self, query: &[(&str, &str)]) -> Result<ContactList, Error> {
        self.send(Request::get("/contacts").pairs(query.iter().copied()))
            .await
    }
}

/// The contacts resource: `client.contacts()`.
#[derive(Debug, Clone, Copy)]
pub struct Contacts<'c> {
    client: &'c Client,
}

impl<'c> Contacts<'c> {
    /// `GET /contacts`: a builder of filters, then `.send()` or `.stream()`.
    pub fn list(&self) -> ListContacts<'c> {
        ListContacts {
            client: self.client,
            query: ListContactsQuery::default(),
        }
    }

    /// `GET /contacts/{id}`: the detail (with `openDeals`).
    pub async fn get(&self, id: Uuid) -> Result<Contact, Error> {
        self.client
            .send(Request::get(format!("/contacts/{id}")))
            .await
    }

    /// `POST /contacts`. A phone held by another contact is a 409
    /// [`crate::ErrorCode::ContactPhoneExists`] whose body has `contactId`.
    pub async fn create(&self, body: &CreateContact) -> Result<Contact, Error> {
        self.client
            .send(Request::post("/contacts").json(body)?)
            .await
    }

    /// `PATCH /contacts/{id}`: only the fields set in `patch` change (`Some(None)` clears).
    pub async fn update(&self, id: Uuid, patch: &UpdateContact) -> Result<Contact, Error> {
        self.client
            .send(Request::patch(format!("/contacts/{id}")).json(patch)?)
            .await
    }

    /// `DELETE /contacts/{id}`; a contact with history is a 409
    /// [`crate::ErrorCode::ContactHasHistory`].
    pub async fn delete(&self, id: Uuid) -> Result<Deleted, Error> {
        self.client
            .send(Request::delete(format!("/contacts/{id}")))
            .await
    }

    /// `POST /contacts/bulk`: stage, tags or owner of up to 500 contacts.
    pub async fn bulk(&self, body: &BulkUpdateContacts) -> Result<BulkResult, Error> {
        self.client
            .send(Request::post("/contacts/bulk").json(body)?)
            .await
    }

    /// `GET /contacts/{id}/timeline`: a builder, then `.send()` or `.stream()`.
    pub fn timeline(&self, id: Uuid) -> ListTimeline<'c> {
        ListTimeline {
            client: self.client,
            id,
            query: TimelineQuery::default(),
        }
    }

    /// `GET /contacts/{id}/messages` (`contacts:read` or `conversations:read`): the
    /// contact's whole history across conversations and channels, campaign and automation
    /// messages outside any conversation included; a builder, then `.send()` for one page or
    /// `.stream()` for all, newest first.
    pub fn messages(&self, id: Uuid) -> crate::conversations::ListMessages<'c> {
        crate::conversations::ListMessages::of(self.client, format!("/contacts/{id}/messages"))
    }

    /// `GET /contacts/{id}/notes`: a builder, then `.send()` or `.stream()`.
    pub fn notes(&self, id: Uuid) -> ListNotes<'c> {
        ListNotes {
            client: self.client,
            id,
            query: PageParams::default(),
        }
    }

    /// `POST /contacts/{id}/notes`, attributed to the API key's user.
    pub async fn add_note(&self, id: Uuid, body: &CreateNote) -> Result<Note, Error> {
        self.client
            .send(Request::post(format!("/contacts/{id}/notes")).json(body)?)
            .await
    }

    /// `POST /contacts/{id}/identities` (201 when new, 200 when the contact already has it;
    /// 409 when another contact has it).
    pub async fn add_identity(&self, id: Uuid, body: &CreateIdentity) -> Result<Identity, Error> {
        self.client
            .send(Request::post(format!("/contacts/{id}/identities")).json(body)?)
            .await
    }
}

/// `GET /contacts` filters. Unset filters are not sent.
#[derive(Debug, Clone)]
#[must_use = "a list builder does nothing until .send() or .stream()"]
pub struct ListContacts<'c> {
    client: &'c Client,
    query: ListContactsQuery,
}

impl ListContacts<'_> {
    /// Replaces every filter with a wire query struct.
    pub fn with_query(mut self, query: ListContactsQuery) -> Self {
        self.query = query;
        self
    }

    /// The filters as they will be sent.
    pub fn query(&self) -> &ListContactsQuery {
        &self.query
    }

    /// `tab`.
    pub fn tab(mut self, tab: ContactTab) -> Self {
        self.query.tab = Some(tab);
        self
    }

    /// `lifecycleStageId`.
    pub fn lifecycle_stage_id(mut self, id: Uuid) -> Self {
        self.query.lifecycle_stage_id = Some(id);
        self
    }

    /// `ownerId=<id>`: contacts of that user.
    pub fn owner_id(mut self, id: Uuid) -> Self {
        self.query.owner_id = Some(OwnerFilter::User(id));
        self
    }

    /// `ownerId=none`: contacts without owner.
    pub fn unowned(mut self) -> Self {
        self.query.owner_id = Some(OwnerFilter::Unowned);
        self
    }

    /// `source`.
    pub fn source(mut self, source: ContactSource) -> Self {
        self.query.source = Some(source);
        self
    }

    /// `channelType`: contacts with an identity on that channel type.
    pub fn channel_type(mut self, channel_type: ChannelType) -> Self {
        self.query.channel_type = Some(channel_type);
        self
    }

    /// `tag` (case-insensitive, max 60).
    pub fn tag(mut self, tag: impl Into<String>) -> Self {
        self.query.tag = Some(tag.into());
        self
    }

    /// `q`: substring of name, phone, e-mail or company (max 120).
    pub fn q(mut self, q: impl Into<String>) -> Self {
        self.query.q = Some(q.into());
        self
    }

    /// `search`: same as `q`.
    pub fn search(mut self, search: impl Into<String>) -> Self {
        self.query.search = Some(search.into());
        self
    }

    /// `days`: created in the last 7, 30 or 90 days (also the summary's period).
    pub fn days(mut self, days: u32) -> Self {
        self.query.days = Some(days);
        self
    }

    /// `ids=a,b`: only these contacts (max 500). An empty list sets no filter.
    pub fn ids(mut self, ids: impl IntoIterator<Item = Uuid>) -> Self {
        self.query.ids = Some(ids.into_iter().collect());
        self
    }

    page_setters!();

    /// Fetches one page, with `meta`, `tabs` and `summary`.
    pub async fn send(self) -> Result<ContactList, Error> {
        self.client
            .send(Request::get("/contacts").query(&self.query)?)
            .await
    }

    /// Every matching contact, across pages.
    pub fn stream(self) -> PageStream<Contact> {
        stream_list::<ContactList, _>(self.client, "/contacts".to_owned(), self.query)
    }
}

/// `GET /contacts/{id}/timeline` query.
#[derive(Debug, Clone)]
#[must_use = "a list builder does nothing until .send() or .stream()"]
pub struct ListTimeline<'c> {
    client: &'c Client,
    id: Uuid,
    query: TimelineQuery,
}

impl ListTimeline<'_> {
    /// `type`: all, conversations, campaigns or notes.
    pub fn kind(mut self, filter: TimelineFilter) -> Self {
        self.query.entry_type = Some(filter);
        self
    }

    page_setters!();

    /// Fetches one page, newest first.
    pub async fn send(self) -> Result<Page<TimelineEntry>, Error> {
        let path = format!("/contacts/{}/timeline", self.id);
        self.client
            .send(Request::get(path).query(&self.query)?)
            .await
    }

    /// Every entry, across pages.
    pub fn stream(self) -> PageStream<TimelineEntry> {
        stream_list::<Page<TimelineEntry>, _>(
            self.client,
            format!("/contacts/{}/timeline", self.id),
            self.query,
        )
    }
}

/// `GET /contacts/{id}/notes` query.
#[derive(Debug, Clone)]
#[must_use = "a list builder does nothing until .send() or .stream()"]
pub struct ListNotes<'c> {
    client: &'c Client,
    id: Uuid,
    query: PageParams,
}

impl ListNotes<'_> {
    page_setters!();

    /// Fetches one page.
    pub async fn send(self) -> Result<Page<Note>, Error> {
        let path = format!("/contacts/{}/notes", self.id);
        self.client
            .send(Request::get(path).query(&self.query)?)
            .await
    }

    /// Every note, across pages.
    pub fn stream(self) -> PageStream<Note> {
        stream_list::<Page<Note>, _>(
            self.client,
            format!("/contacts/{}/notes", self.id),
            self.query,
        )
    }
}
