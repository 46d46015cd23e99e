//! `/webhooks`: list, create (the secret is shown once), get, update, delete, the delivery
//! log (with a stream) and manual retry of a delivery.
//!
//! ```no_run
//! use wm_client::types::events::EventKind;
//! use wm_client::types::webhooks::CreateWebhook;
//! # async fn run(client: wm_client::Client) -> Result<(), wm_client::Error> {
//! let created = client
//!     .webhooks()
//!     .create(&CreateWebhook {
//!         url: "https://example.com/hooks/wm".into(),
//!         events: vec![EventKind::ContactCreated],
//!         description: None,
//!     })
//!     .await?;
//! println!("store this secret now: {}", created.secret);
//! # Ok(()) }
//! ```

use uuid::Uuid;
use wm_types::common::{Deleted, Page};
use wm_types::lookups::List;
use wm_types::webhooks::{CreateWebhook, Delivery, UpdateWebhook, Webhook, WebhookCreated};

use crate::http::Request;
use crate::pagination::{PageParams, PageStream, page_setters, stream_list};
use crate::{Client, Error};

impl Client {
    /// The webhooks resource.
    pub fn webhooks(&self) -> Webhooks<'_> {
        Webhooks { client: self }
    }
}

/// The webhooks resource: `client.webhooks()`.
#[derive(Debug, Clone, Copy)]
pub struct Webhooks<'c> {
    client: &'c Client,
}

impl<'c> Webhooks<'c> {
    /// `GET /webhooks`: every webhook of the organisation (at most 10, unpaginated; the
    /// `{data}` envelope is removed).
    pub async fn list(&self) -> Result<Vec<Webhook>, Error> {
        let list: List<Webhook> = self.client.send(Request::get("/webhooks")).await?;
        Ok(list.data)
    }

    /// `POST /webhooks`: the answer is the only time the secret is shown.
    pub async fn create(&self, body: &CreateWebhook) -> Result<WebhookCreated, Error> {
        self.client
            .send(Request::post("/webhooks").json(body)?)
            .await
    }

    /// `GET /webhooks/{id}` (without its secret).
    pub async fn get(&self, id: Uuid) -> Result<Webhook, Error> {
        self.client
            .send(Request::get(format!("/webhooks/{id}")))
            .await
    }

    /// `PATCH /webhooks/{id}`: only the fields set in `patch` change; `status: ACTIVE`
    /// reactivates a paused webhook.
    pub async fn update(&self, id: Uuid, patch: &UpdateWebhook) -> Result<Webhook, Error> {
        self.client
            .send(Request::patch(format!("/webhooks/{id}")).json(patch)?)
            .await
    }

    /// `DELETE /webhooks/{id}`.
    pub async fn delete(&self, id: Uuid) -> Result<Deleted, Error> {
        self.client
            .send(Request::delete(format!("/webhooks/{id}")))
            .await
    }

    /// `GET /webhooks/{id}/deliveries` (the last 7 days): a builder, then `.send()` or
    /// `.stream()`.
    pub fn deliveries(&self, id: Uuid) -> ListDeliveries<'c> {
        ListDeliveries {
            client: self.client,
            id,
            query: PageParams::default(),
        }
    }

    /// `POST /webhooks/{id}/deliveries/{deliveryId}/retry`: queues another attempt (202).
    pub async fn retry_delivery(&self, id: Uuid, delivery_id: Uuid) -> Result<Delivery, Error> {
        self.client
            .send(Request::post(format!(
                "/webhooks/{id}/deliveries/{delivery_id}/retry"
            )))
            .await
    }
}

/// `GET /webhooks/{id}/deliveries` query.
#[derive(Debug, Clone)]
#[must_use = "a list builder does nothing until .send() or .stream()"]
pub struct ListDeliveries<'c> {
    client: &'c Client,
    id: Uuid,
    query: PageParams,
}

impl ListDeliveries<'_> {
    page_setters!();

    /// Fetches one page, newest first.
    pub async fn send(self) -> Result<Page<Delivery>, Error> {
        let path = format!("/webhooks/{}/deliveries", self.id);
        self.client
            .send(Request::get(path).query(&self.query)?)
            .await
    }

    /// Every delivery, across pages.
    pub fn stream(self) -> PageStream<Delivery> {
        stream_list::<Page<Delivery>, _>(
            self.client,
            format!("/webhooks/{}/deliveries", self.id),
            self.query,
        )
    }
}
