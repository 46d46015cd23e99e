//! Webhooks: the resource, its management bodies and the delivery log.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::common::{Timestamp, double_option};
use crate::events::EventKind;

wire_enum!(
    /// Whether a webhook receives deliveries.
    WebhookStatus {
        Active = "ACTIVE",
        Paused = "PAUSED",
    }
);

wire_enum!(
    /// Where a delivery stands.
    DeliveryStatus {
        /// Waiting for its first attempt or a retry.
        Pending = "PENDING",
        /// A 2xx answer was received.
        Delivered = "DELIVERED",
        /// Every retry failed.
        Failed = "FAILED",
    }
);

/// `POST /webhooks`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateWebhook {
    /// An https URL that does not resolve to a private, loopback or link-local address.
    #[schemars(length(min = 1, max = 2048))]
    pub url: String,
    /// Event kinds to receive; coming-soon kinds may be subscribed in advance.
    #[schemars(length(min = 1, max = EventKind::ALL.len() * 2))]
    pub events: Vec<EventKind>,
    /// A note for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 500))]
    pub description: Option<String>,
}

/// `PATCH /webhooks/{id}`: only sent fields change; `status: ACTIVE` reactivates.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateWebhook {
    /// New URL (not nullable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", length(min = 1, max = 2048))]
    pub url: Option<String>,
    /// New subscription (not nullable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Vec<EventKind>", length(min = 1, max = EventKind::ALL.len() * 2))]
    pub events: Option<Vec<EventKind>>,
    /// New note; null removes it.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "double_option"
    )]
    #[schemars(with = "Option<String>", length(max = 500))]
    pub description: Option<Option<String>>,
    /// ACTIVE reactivates a paused webhook; PAUSED stops deliveries (not nullable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "WebhookStatus")]
    pub status: Option<WebhookStatus>,
}

/// A webhook, without its secret.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Webhook {
    /// Webhook id.
    pub id: Uuid,
    /// Target URL.
    pub url: String,
    /// Subscribed kinds.
    pub events: Vec<EventKind>,
    /// Note.
    pub description: Option<String>,
    /// ACTIVE or PAUSED.
    pub status: WebhookStatus,
    /// Consecutive deliveries whose retries were all exhausted (10 pause the webhook).
    pub consecutive_failures: u32,
    /// When it was paused.
    pub paused_at: Option<Timestamp>,
    /// Creation time.
    pub created_at: Timestamp,
    /// Last change.
    pub updated_at: Timestamp,
}

/// The answer to a creation: the only time the secret is shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WebhookCreated {
    /// The webhook.
    #[serde(flatten)]
    pub webhook: Webhook,
    /// `whsec_…`: the key of the deliveries' signatures. Store it now.
    pub secret: String,
}

/// One attempt of a delivery.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryAttempt {
    /// When it was made.
    pub at: Timestamp,
    /// The HTTP status received, if any.
    pub status_code: Option<u16>,
    /// How long it took.
    pub duration_ms: u64,
    /// The first 1 KiB of the response body.
    pub response_body: Option<String>,
    /// Why it failed without a response (timeout, refused, blocked address).
    pub error: Option<String>,
}

/// A delivery of one event to one webhook, with every attempt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Delivery {
    /// Delivery id: the body's `id` and `X-WM-Delivery`.
    pub id: Uuid,
    /// The webhook.
    pub webhook_id: Uuid,
    /// Event kind.
    pub event: EventKind,
    /// PENDING, DELIVERED or FAILED.
    pub status: DeliveryStatus,
    /// Attempts made.
    pub attempts: u32,
    /// When the next attempt is due (pending only).
    pub next_attempt_at: Option<Timestamp>,
    /// When a 2xx was received.
    pub delivered_at: Option<Timestamp>,
    /// When the event happened.
    pub created_at: Timestamp,
    /// Every attempt, oldest first.
    pub attempt_log: Vec<DeliveryAttempt>,
}
