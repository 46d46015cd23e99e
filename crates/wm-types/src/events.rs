//! Webhook events: the envelope every delivery carries and the payloads of each kind.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::common::{Timestamp, double_option};

wire_enum!(
    /// An event kind a webhook can subscribe to.
    EventKind {
        ContactCreated = "contact.created",
        ContactUpdated = "contact.updated",
        ContactStageChanged = "contact.stage_changed",
        CampaignFinished = "campaign.finished",
        CampaignReplied = "campaign.replied",
        ConversationOpened = "conversation.opened",
        ConversationAssigned = "conversation.assigned",
        ConversationClosed = "conversation.closed",
        MessageReceived = "message.received",
        MessageSent = "message.sent",
        AutomationRun = "automation.run",
        BotHandoff = "bot.handoff",
        BotMessage = "bot.message",
    }
);

impl EventKind {
    /// Whether the service emits this kind yet; the others (`bot.*`) are "coming soon" and
    /// may be subscribed to in advance.
    pub fn is_active(&self) -> bool {
        !matches!(self, EventKind::BotHandoff | EventKind::BotMessage)
    }
}

/// The body of every delivery: `{id, event, createdAt, data}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Event<T = serde_json::Value> {
    /// Delivery id; equals the `X-WM-Delivery` header. Process each id once.
    pub id: Uuid,
    /// Event kind.
    pub event: EventKind,
    /// When the change happened.
    pub created_at: Timestamp,
    /// The kind's payload.
    pub data: T,
}

/// Payload of `contact.created`, `contact.updated` and `contact.stage_changed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContactEventData {
    /// Organisation.
    pub organization_id: Uuid,
    /// Contact; fetch `GET /contacts/{contactId}` for the full record.
    pub contact_id: Uuid,
    /// Name.
    pub full_name: Option<String>,
    /// Phone.
    pub primary_phone: Option<String>,
    /// E-mail.
    pub primary_email: Option<String>,
    /// Stage name.
    pub lifecycle_stage: Option<String>,
    /// Names of the fields that changed (`contact.updated`, `contact.stage_changed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed_fields: Option<Vec<String>>,
    /// Stage name before the change (`contact.stage_changed`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "double_option"
    )]
    #[schemars(with = "Option<String>")]
    pub previous_stage: Option<Option<String>>,
}

/// Payload of `campaign.finished`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CampaignFinishedData {
    /// Organisation.
    pub organization_id: Uuid,
    /// Campaign.
    pub campaign_id: Uuid,
    /// Its name.
    pub name: String,
    /// Its status (COMPLETED).
    pub status: String,
    /// Recipients sent.
    pub sent: u64,
    /// Recipients failed.
    pub failed: u64,
}

/// Payload of `campaign.replied`: a recipient of a campaign answered it (the first answer
/// only; later messages are `message.received`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CampaignRepliedData {
    /// Organisation.
    pub organization_id: Uuid,
    /// Campaign.
    pub campaign_id: Uuid,
    /// The recipient (`GET /campaigns/{campaignId}/recipients`).
    pub recipient_id: Uuid,
    /// Contact.
    pub contact_id: Uuid,
    /// The answer, when kept (`GET /conversations/{id}/messages`).
    pub message_id: Option<Uuid>,
    /// When they answered.
    pub replied_at: Timestamp,
}

/// Payload of `conversation.opened`, `conversation.assigned` and `conversation.closed`: the
/// conversation as `GET /conversations/{id}` shows it after the change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConversationEventData {
    /// Organisation.
    pub organization_id: Uuid,
    /// The conversation.
    pub conversation: crate::conversations::Conversation,
}

/// Payload of `automation.run`: a run finished.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AutomationRunData {
    /// Organisation.
    pub organization_id: Uuid,
    /// Automation.
    pub automation_id: Uuid,
    /// Its name.
    pub automation_name: String,
    /// The run (`GET /automations/{id}/logs`).
    pub run_id: Uuid,
    /// The contact it ran for.
    pub contact_id: Option<Uuid>,
    /// completed, waiting, condition, skipped or failed (as in the run's log).
    pub result: String,
    /// Why it failed or was skipped.
    pub error: Option<String>,
}
