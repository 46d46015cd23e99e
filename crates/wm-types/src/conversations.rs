//! Inbox conversations: the list, the detail, and the status and assignee changes; their
//! messages are in [`crate::messages`].

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::common::{PageMeta, Timestamp, double_option};
use crate::contacts::{ChannelRef, UserRef};
use crate::enums::{ChannelType, ConversationStatus};

wire_enum!(
    /// Who started a conversation.
    InitiatedBy {
        Contact = "CONTACT",
        Business = "BUSINESS",
    }
);

/// `{id, fullName, primaryPhone, primaryEmail}` of a conversation's contact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConversationContact {
    /// Contact id.
    pub id: Uuid,
    /// Name.
    pub full_name: Option<String>,
    /// Phone.
    pub primary_phone: Option<String>,
    /// E-mail.
    pub primary_email: Option<String>,
}

/// A conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Conversation {
    /// Conversation id.
    pub id: Uuid,
    /// Organisation.
    pub organization_id: Uuid,
    /// Contact.
    pub contact_id: Uuid,
    /// Contact.
    pub contact: ConversationContact,
    /// Channel.
    pub channel_id: Uuid,
    /// Channel.
    pub channel: ChannelRef,
    /// Opaque inbox identifier.
    pub external_conversation_id: String,
    /// OPEN, PENDING or RESOLVED.
    pub status: ConversationStatus,
    /// Who started it.
    pub initiated_by: InitiatedBy,
    /// Assignee.
    pub assigned_to_user_id: Option<Uuid>,
    /// Assignee.
    pub assigned_to: Option<UserRef>,
    /// When the customer-service window closes: 24 hours after the customer's last
    /// message (in the past once closed); null when the customer has not written. Outside
    /// it the platform takes only template messages.
    pub window_expires_at: Option<Timestamp>,
    /// Creation time.
    pub created_at: Timestamp,
    /// Last activity.
    pub updated_at: Timestamp,
}

/// Counts per tab.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ConversationTabs {
    /// All.
    pub all: u64,
    /// Not resolved and without assignee.
    pub unassigned: u64,
    /// Assigned to the key's user.
    pub mine: u64,
    /// Resolved.
    pub resolved: u64,
}

/// Figures; days are calendar days in the organisation's time zone.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConversationSummary {
    /// OPEN now.
    pub open: u64,
    /// Created today.
    pub new_in_period: u64,
    /// Created yesterday.
    pub new_in_previous_period: u64,
    /// Not resolved and without assignee.
    pub unassigned: u64,
    /// Minutes since the last activity of the longest-waiting OPEN or PENDING conversation.
    pub oldest_waiting_minutes: u64,
    /// Resolved today.
    pub resolved_today: u64,
    /// Resolved yesterday.
    pub resolved_yesterday: u64,
}

/// `GET /conversations` response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ConversationList {
    /// Latest activity first.
    pub data: Vec<Conversation>,
    /// Pagination.
    pub meta: PageMeta,
    /// Counts per tab.
    pub tabs: ConversationTabs,
    /// Figures.
    pub summary: ConversationSummary,
}

/// Tabs of the inbox.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ConversationFilter {
    /// Every conversation.
    #[default]
    All,
    /// Not resolved and assigned to nobody.
    Unassigned,
    /// Assigned to the caller.
    Mine,
    /// RESOLVED.
    Resolved,
}

impl ConversationFilter {
    /// Every tab, in the spec's order.
    pub const ALL: [ConversationFilter; 4] = [
        ConversationFilter::All,
        ConversationFilter::Unassigned,
        ConversationFilter::Mine,
        ConversationFilter::Resolved,
    ];
}

/// `GET /conversations` query.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListConversationsQuery {
    /// Page.
    #[serde(default)]
    #[schemars(range(min = 1, max = crate::common::MAX_PAGE))]
    pub page: Option<u64>,
    /// Page size.
    #[serde(default)]
    #[schemars(range(min = 1, max = 100))]
    pub page_size: Option<u64>,
    /// Tab, default all.
    #[serde(default)]
    pub filter: Option<ConversationFilter>,
    /// Status.
    #[serde(default)]
    pub status: Option<ConversationStatus>,
    /// Channel.
    #[serde(default)]
    pub channel_id: Option<Uuid>,
    /// Channel type.
    #[serde(default)]
    pub channel_type: Option<ChannelType>,
    /// Contact.
    #[serde(default)]
    pub contact_id: Option<Uuid>,
    /// Assignee.
    #[serde(default)]
    pub assigned_to_user_id: Option<Uuid>,
    /// Contact name, phone or e-mail substring.
    #[serde(default)]
    #[schemars(length(max = 100))]
    pub q: Option<String>,
}

/// `PATCH /conversations/{id}` (and the operator's
/// `PATCH /admin/organizations/{orgId}/conversations/{id}`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateConversation {
    /// New status (not nullable).
    #[serde(default)]
    #[schemars(with = "ConversationStatus")]
    pub status: Option<ConversationStatus>,
    /// Assignee; null unassigns.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "double_option"
    )]
    #[schemars(with = "Option<Uuid>")]
    pub assigned_to_user_id: Option<Option<Uuid>>,
}
