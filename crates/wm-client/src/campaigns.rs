//! `/campaigns`: list (with a stream), create, get, recipients (list, stream, add), cost
//! preview, send, pause, resume and duplicate.
//!
//! ```no_run
//! use wm_client::types::campaigns::{Audience, CreateCampaign};
//! # async fn run(client: wm_client::Client, phone: uuid::Uuid, template: uuid::Uuid)
//! #     -> Result<(), wm_client::Error> {
//! let draft = client
//!     .campaigns()
//!     .create(&CreateCampaign {
//!         name: "Black Friday".into(),
//!         phone_number_id: phone,
//!         template_id: template,
//!         scheduled_at: None,
//!         variables: None,
//!     })
//!     .await?;
//! let audience = Audience { tag: Some("vip".into()), ..Default::default() };
//! client.campaigns().add_recipients(draft.id, &audience).await?;
//! if client.campaigns().preview_cost(draft.id).await?.wallet.sufficient {
//!     client.campaigns().send_now(draft.id).await?;
//! }
//! # Ok(()) }
//! ```

use uuid::Uuid;
use wm_types::campaigns::{
    Audience, AudienceResult, Campaign, CampaignList, CampaignTab, CostPreview, CreateCampaign,
    ListCampaignsQuery, Recipient, RecipientFilter, RecipientsQuery, SendCampaign,
    TemplateCategory,
};
use wm_types::common::Page;

use crate::http::Request;
use crate::pagination::{PageStream, page_setters, stream_list};
use crate::{Client, Error};

impl Client {
    /// The campaigns resource.
    pub fn campaigns(&self) -> Campaigns<'_> {
        Campaigns { client: self }
    }
}

/// The campaigns resource: `client.campaigns()`.
///
/// Writes here (create, add recipients, send, pause, resume, duplicate) are POSTs: they are
/// retried on 429 and connection errors only, never on 5xx or timeouts (see
/// [`crate::retry`]), so a send is not charged twice by the client.
#[derive(Debug, Clone, Copy)]
pub struct Campaigns<'c> {
    client: &'c Client,
}

impl<'c> Campaigns<'c> {
    /// `GET /campaigns`: a builder of filters, then `.send()` or `.stream()`.
    pub fn list(&self) -> ListCampaigns<'c> {
        ListCampaigns {
            client: self.client,
            query: ListCampaignsQuery::default(),
        }
    }

    /// `POST /campaigns`: a new DRAFT.
    pub async fn create(&self, body: &CreateCampaign) -> Result<Campaign, Error> {
        self.client
            .send(Request::post("/campaigns").json(body)?)
            .await
    }

    /// `GET /campaigns/{id}`: the detail.
    pub async fn get(&self, id: Uuid) -> Result<Campaign, Error> {
        self.client
            .send(Request::get(format!("/campaigns/{id}")))
            .await
    }

    /// `GET /campaigns/{id}/recipients`: a builder, then `.send()` or `.stream()`.
    pub fn recipients(&self, id: Uuid) -> ListRecipients<'c> {
        ListRecipients {
            client: self.client,
            id,
            query: RecipientsQuery::default(),
        }
    }

    /// `POST /campaigns/{id}/recipients`: adds an audience (exactly one source).
    pub async fn add_recipients(
        &self,
        id: Uuid,
        audience: &Audience,
    ) -> Result<AudienceResult, Error> {
        self.client
            .send(Request::post(format!("/campaigns/{id}/recipients")).json(audience)?)
            .await
    }

    /// `GET /campaigns/{id}/preview-cost`.
    pub async fn preview_cost(&self, id: Uuid) -> Result<CostPreview, Error> {
        self.client
            .send(Request::get(format!("/campaigns/{id}/preview-cost")))
            .await
    }

    /// `POST /campaigns/{id}/send` with a body (`when`: now, scheduled or staggered).
    /// Fields left `None` are not sent.
    pub async fn send(&self, id: Uuid, body: &SendCampaign) -> Result<Campaign, Error> {
        // SendCampaign writes `None` as null; leave such fields out, as the spec's
        // examples do.
        let mut value = serde_json::to_value(body)
            .map_err(|e| Error::Config(format!("request body could not be serialised: {e}")))?;
        if let serde_json::Value::Object(map) = &mut value {
            map.retain(|_, v| !v.is_null());
        }
        self.client
            .send(Request::post(format!("/campaigns/{id}/send")).json(&value)?)
            .await
    }

    /// `POST /campaigns/{id}/send` without a body: send now.
    pub async fn send_now(&self, id: Uuid) -> Result<Campaign, Error> {
        self.client
            .send(Request::post(format!("/campaigns/{id}/send")))
            .await
    }

    /// `POST /campaigns/{id}/pause` (a sending campaign).
    pub async fn pause(&self, id: Uuid) -> Result<Campaign, Error> {
        self.client
            .send(Request::post(format!("/campaigns/{id}/pause")))
            .await
    }

    /// `POST /campaigns/{id}/resume` (a paused campaign).
    pub async fn resume(&self, id: Uuid) -> Result<Campaign, Error> {
        self.client
            .send(Request::post(format!("/campaigns/{id}/resume")))
            .await
    }

    /// `POST /campaigns/{id}/duplicate`: a new DRAFT with `sourceCampaignId`.
    pub async fn duplicate(&self, id: Uuid) -> Result<Campaign, Error> {
        self.client
            .send(Request::post(format!("/campaigns/{id}/duplicate")))
            .await
    }
}

/// `GET /campaigns` filters. Unset filters are not sent.
#[derive(Debug, Clone)]
#[must_use = "a list builder does nothing until .send() or .stream()"]
pub struct ListCampaigns<'c> {
    client: &'c Client,
    query: ListCampaignsQuery,
}

impl ListCampaigns<'_> {
    /// Replaces every filter with a wire query struct.
    pub fn with_query(mut self, query: ListCampaignsQuery) -> Self {
        self.query = query;
        self
    }

    /// The filters as they will be sent.
    pub fn query(&self) -> &ListCampaignsQuery {
        &self.query
    }

    /// `tab`: all, sending, scheduled, drafts, errors or finished.
    pub fn tab(mut self, tab: CampaignTab) -> Self {
        self.query.tab = Some(tab);
        self
    }

    /// `category`: the template's category.
    pub fn category(mut self, category: TemplateCategory) -> Self {
        self.query.category = Some(category);
        self
    }

    /// `phoneNumberId`: the sender number.
    pub fn phone_number_id(mut self, id: Uuid) -> Self {
        self.query.phone_number_id = Some(id);
        self
    }

    /// `q`: name substring (max 100).
    pub fn q(mut self, q: impl Into<String>) -> Self {
        self.query.q = Some(q.into());
        self
    }

    /// `days`: created in the last 1–365 days (also the summary's period).
    pub fn days(mut self, days: u32) -> Self {
        self.query.days = Some(days);
        self
    }

    page_setters!();

    /// Fetches one page, with `meta`, `tabs` and `summary`.
    pub async fn send(self) -> Result<CampaignList, Error> {
        self.client
            .send(Request::get("/campaigns").query(&self.query)?)
            .await
    }

    /// Every matching campaign, across pages.
    pub fn stream(self) -> PageStream<Campaign> {
        stream_list::<CampaignList, _>(self.client, "/campaigns".to_owned(), self.query)
    }
}

/// `GET /campaigns/{id}/recipients` query.
#[derive(Debug, Clone)]
#[must_use = "a list builder does nothing until .send() or .stream()"]
pub struct ListRecipients<'c> {
    client: &'c Client,
    id: Uuid,
    query: RecipientsQuery,
}

impl ListRecipients<'_> {
    /// `filter`: all, delivered, read, replied, failed or pending.
    pub fn filter(mut self, filter: RecipientFilter) -> Self {
        self.query.filter = Some(filter);
        self
    }

    page_setters!();

    /// Fetches one page.
    pub async fn send(self) -> Result<Page<Recipient>, Error> {
        let path = format!("/campaigns/{}/recipients", self.id);
        self.client
            .send(Request::get(path).query(&self.query)?)
            .await
    }

    /// Every matching recipient, across pages.
    pub fn stream(self) -> PageStream<Recipient> {
        stream_list::<Page<Recipient>, _>(
            self.client,
            format!("/campaigns/{}/recipients", self.id),
            self.query,
        )
    }
}
