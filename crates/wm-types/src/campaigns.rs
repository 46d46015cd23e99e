//! Campaigns and their recipients. Templates, sender numbers and the wallet live in
//! [`crate::catalog`] and are re-exported here, where campaigns use them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::common::{Money, PageMeta, Timestamp};
use crate::enums::RecipientStatus;

pub use crate::catalog::{
    CreatePhoneNumber, CreateTemplate, Inbound, LedgerEntry, LedgerKind, MPS, MarketRateInput,
    PhoneNumber, ProviderEvent, QualityRating, SetRates, Template, TemplateCategory, TemplateRef,
    TemplateStatus, TemplateSync, TopUp, UpdatePhoneNumber, Wallet,
};

wire_enum!(
    /// Where a campaign stands.
    CampaignStatus {
        Draft = "DRAFT",
        Scheduled = "SCHEDULED",
        Sending = "SENDING",
        Paused = "PAUSED",
        Completed = "COMPLETED",
    }
);

/// Shortest campaign name.
pub const MIN_NAME: usize = 2;
/// Longest campaign name.
pub const MAX_NAME: usize = 200;
/// Most contacts in one audience request.
pub const MAX_CONTACT_IDS: usize = 20_000;
/// Longest audience tag.
pub const MAX_TAG: usize = 60;
/// Longest campaign search text.
pub const MAX_SEARCH: usize = 100;
/// Staggered batch size bounds.
pub const BATCH_SIZE: (u32, u32) = (10, 5000);
/// Staggered batch interval bounds, in minutes.
pub const BATCH_INTERVAL_MIN: (u32, u32) = (1, 1440);

/// Why the service paused a campaign.
pub const STOP_INSUFFICIENT_BALANCE: &str = "INSUFFICIENT_BALANCE";

wire_enum!(
    /// Why the service paused a campaign (`stopReason`): the wallet, or what the messaging
    /// platform said of the account, the number or the template.
    StopReason {
        InsufficientBalance = "INSUFFICIENT_BALANCE",
        PlatformTokenExpired = "PLATFORM_TOKEN_EXPIRED",
        PlatformPermissionDenied = "PLATFORM_PERMISSION_DENIED",
        PlatformAccountLocked = "PLATFORM_ACCOUNT_LOCKED",
        PlatformSpamLimit = "PLATFORM_SPAM_LIMIT",
        PlatformPolicyBlock = "PLATFORM_POLICY_BLOCK",
        PlatformPaymentIssue = "PLATFORM_PAYMENT_ISSUE",
        PlatformNumberNotRegistered = "PLATFORM_NUMBER_NOT_REGISTERED",
        PlatformNotConfigured = "PLATFORM_NOT_CONFIGURED",
        PlatformBadResponse = "PLATFORM_BAD_RESPONSE",
        TemplateNotFound = "TEMPLATE_NOT_FOUND",
        TemplatePaused = "TEMPLATE_PAUSED",
        TemplateDisabled = "TEMPLATE_DISABLED",
    }
);

/// The template as embedded in a campaign: `{name, category, language}` in lists, plus
/// `{id, bodyText, status}` on the detail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CampaignTemplate {
    /// Template id (detail).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<Uuid>,
    /// Name.
    pub name: String,
    /// Category.
    pub category: TemplateCategory,
    /// Language.
    pub language: String,
    /// Body (detail).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_text: Option<String>,
    /// Review state (detail).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<TemplateStatus>,
}

/// The sender number as embedded in a campaign: `{numberE164, displayName}` in lists, plus
/// `{id, qualityRating}` on the detail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CampaignPhoneNumber {
    /// Number id (detail).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<Uuid>,
    /// The number.
    pub number_e164: String,
    /// Display name.
    pub display_name: String,
    /// Quality rating (detail).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quality_rating: Option<QualityRating>,
}

/// The recipient funnel: sent, delivered and read count recipients that reached at least
/// that step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CampaignStats {
    /// Recipients.
    pub total: u64,
    /// Not processed yet.
    pub pending: u64,
    /// Sent or further.
    pub sent: u64,
    /// Delivered or further.
    pub delivered: u64,
    /// Read or further.
    pub read: u64,
    /// Replied.
    pub replied: u64,
    /// Failed.
    pub failed: u64,
    /// processed / total × 100 (one decimal).
    pub progress_pct: f64,
}

/// Failures grouped by reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ErrorByReason {
    /// The provider's or the service's reason.
    pub reason: String,
    /// Recipients that failed for it.
    pub count: u64,
}

/// `{id, fullName, primaryPhone}` of a recipient's contact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecipientContact {
    /// Contact id.
    pub id: Uuid,
    /// Name.
    pub full_name: Option<String>,
    /// Phone.
    pub primary_phone: Option<String>,
}

/// A recent reply to a campaign.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LastReply {
    /// Who replied.
    pub contact: RecipientContact,
    /// When.
    pub replied_at: Timestamp,
}

/// A campaign. `organizationId` and the list fields always; the detail adds
/// `estimatedCost`, `realCost`, `errorsByReason`, `lastReplies` and fuller template and
/// phone-number objects.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Campaign {
    /// Campaign id.
    pub id: Uuid,
    /// Organisation.
    pub organization_id: Uuid,
    /// Sender number.
    pub phone_number_id: Uuid,
    /// Template.
    pub template_id: Uuid,
    /// Name, at least 2 characters.
    pub name: String,
    /// Status.
    pub status: CampaignStatus,
    /// When a scheduled send starts.
    pub scheduled_at: Option<Timestamp>,
    /// When sending started.
    pub started_at: Option<Timestamp>,
    /// When it completed.
    pub completed_at: Option<Timestamp>,
    /// When it was paused.
    pub paused_at: Option<Timestamp>,
    /// When the next staggered batch goes out.
    pub next_batch_at: Option<Timestamp>,
    /// Staggered batch size.
    pub batch_size: Option<u32>,
    /// Minutes between staggered batches.
    pub batch_interval_min: Option<u32>,
    /// Why the service paused it; null for a user pause.
    #[schemars(with = "Option<StopReason>")]
    pub stop_reason: Option<String>,
    /// The campaign it was duplicated from.
    pub source_campaign_id: Option<Uuid>,
    /// Where each template variable comes from (`{"1": "{{firstName}}"}`).
    #[schemars(with = "std::collections::BTreeMap<String, String>")]
    pub variables: serde_json::Map<String, serde_json::Value>,
    /// Creation time.
    pub created_at: Timestamp,
    /// Last change.
    pub updated_at: Timestamp,
    /// Template.
    pub template: CampaignTemplate,
    /// Sender number.
    pub phone_number: CampaignPhoneNumber,
    /// Estimated cost of the pending recipients (detail; null without recipients).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimated_cost: Option<Option<Money>>,
    /// Charged so far, net of refunds (detail).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub real_cost: Option<Money>,
    /// The funnel.
    pub stats: CampaignStats,
    /// Failures by reason (detail).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub errors_by_reason: Option<Vec<ErrorByReason>>,
    /// Latest replies (detail).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_replies: Option<Vec<LastReply>>,
}

/// Counts per campaign tab.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CampaignTabs {
    /// All.
    pub all: u64,
    /// SENDING and PAUSED.
    pub sending: u64,
    /// SCHEDULED.
    pub scheduled: u64,
    /// DRAFT.
    pub drafts: u64,
    /// With a failed recipient or a stop reason.
    pub errors: u64,
    /// COMPLETED.
    pub finished: u64,
}

/// Figures of the campaigns created in the last `days` days.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CampaignSummary {
    /// Period length.
    pub days: u32,
    /// First day of the period (`2026-10-22`).
    pub since: String,
    /// Campaigns in the period.
    pub campaigns: u64,
    /// Recipients sent or further.
    pub sent: u64,
    /// delivered / sent × 100.
    pub delivered_pct: f64,
    /// read / sent × 100.
    pub read_pct: f64,
    /// Replies.
    pub replies: u64,
    /// replies / sent × 100.
    pub replies_pct: f64,
    /// Money charged, net of refunds.
    pub spend: Money,
    /// spend / sent.
    pub spend_per_message: Money,
}

/// `GET /campaigns` response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CampaignList {
    /// Campaigns, newest first.
    pub data: Vec<Campaign>,
    /// Pagination.
    pub meta: PageMeta,
    /// Counts per tab.
    pub tabs: CampaignTabs,
    /// Figures.
    pub summary: CampaignSummary,
}

/// Tabs of the campaign list.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CampaignTab {
    /// Every campaign.
    #[default]
    All,
    /// SENDING or PAUSED.
    Sending,
    /// SCHEDULED.
    Scheduled,
    /// DRAFT.
    Drafts,
    /// Stopped with a reason, or with failed recipients.
    Errors,
    /// COMPLETED.
    Finished,
}

impl CampaignTab {
    /// Every tab, in the spec's order.
    pub const ALL: [CampaignTab; 6] = [
        CampaignTab::All,
        CampaignTab::Sending,
        CampaignTab::Scheduled,
        CampaignTab::Drafts,
        CampaignTab::Errors,
        CampaignTab::Finished,
    ];
}

/// Which recipients of a campaign to list.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RecipientFilter {
    /// Every recipient.
    #[default]
    All,
    /// DELIVERED, READ or REPLIED.
    Delivered,
    /// READ or REPLIED.
    Read,
    /// REPLIED.
    Replied,
    /// FAILED.
    Failed,
    /// PENDING.
    Pending,
}

/// When `POST /campaigns/{id}/send` starts sending.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SendWhen {
    /// Now, everyone at once.
    #[default]
    Now,
    /// At `scheduledAt`.
    Scheduled,
    /// In batches of `batchSize` every `batchIntervalMin` minutes.
    Staggered,
}

/// `GET /campaigns` query.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListCampaignsQuery {
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
    pub tab: Option<CampaignTab>,
    /// Template category.
    #[serde(default)]
    pub category: Option<TemplateCategory>,
    /// Sender number.
    #[serde(default)]
    pub phone_number_id: Option<Uuid>,
    /// Name substring.
    #[serde(default)]
    #[schemars(length(max = MAX_SEARCH))]
    pub q: Option<String>,
    /// Created in the last 1–365 days.
    #[serde(default)]
    #[schemars(range(min = 1, max = 365))]
    pub days: Option<u32>,
}

/// `POST /campaigns`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateCampaign {
    /// Name.
    #[schemars(length(min = MIN_NAME, max = MAX_NAME))]
    pub name: String,
    /// A sender number of the organisation.
    pub phone_number_id: Uuid,
    /// An APPROVED template of the organisation.
    pub template_id: Uuid,
    /// Intended start (informative until sent with `when=scheduled`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduled_at: Option<Timestamp>,
    /// Template position → `{{fullName}}`-style placeholder or fixed text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<std::collections::BTreeMap<String, String>>")]
    pub variables: Option<serde_json::Map<String, serde_json::Value>>,
}

/// `POST /campaigns/{id}/recipients`: exactly one source.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(extend("minProperties" = 1, "maxProperties" = 1))]
pub struct Audience {
    /// Explicit contacts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = MAX_CONTACT_IDS))]
    pub contact_ids: Option<Vec<Uuid>>,
    /// Everyone in a stage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifecycle_stage_id: Option<Uuid>,
    /// Everyone with a tag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = MAX_TAG))]
    pub tag: Option<String>,
    /// Everyone (must be true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub all: Option<bool>,
}

/// What adding an audience did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AudienceResult {
    /// Contacts the source matched.
    pub total: u64,
    /// Opted out or without consent (not added).
    pub opted_out: u64,
    /// Without a phone (not added).
    pub without_phone: u64,
    /// Added, but their number has no known market: they end FAILED, uncharged.
    pub unpriceable: u64,
    /// total − optedOut − withoutPhone.
    pub eligible: u64,
    /// Newly added.
    pub added: u64,
    /// Eligible but already recipients.
    pub already_in: u64,
    /// Recipients of the campaign now.
    pub total_recipients: u64,
}

/// A recipient.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Recipient {
    /// Recipient id.
    pub id: Uuid,
    /// The contact.
    pub contact: RecipientContact,
    /// Destination market used for pricing (null when unpriceable).
    pub market: Option<String>,
    /// Status.
    pub status: RecipientStatus,
    /// When sent.
    pub sent_at: Option<Timestamp>,
    /// When delivered.
    pub delivered_at: Option<Timestamp>,
    /// When read.
    pub read_at: Option<Timestamp>,
    /// When it failed.
    pub failed_at: Option<Timestamp>,
    /// Why it failed.
    pub error_message: Option<String>,
    /// Charged for this message (0 when covered, refunded or unpriceable).
    pub total_cost: Money,
    /// Paid by the monthly included UTILITY allowance.
    pub covered_by_allowance: bool,
}

/// `GET /campaigns/{id}/recipients` query.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RecipientsQuery {
    /// Page.
    #[serde(default)]
    #[schemars(range(min = 1, max = crate::common::MAX_PAGE))]
    pub page: Option<u64>,
    /// Page size.
    #[serde(default)]
    #[schemars(range(min = 1, max = 100))]
    pub page_size: Option<u64>,
    /// all, delivered, read, replied, failed, pending.
    #[serde(default)]
    pub filter: Option<RecipientFilter>,
}

/// One market of a cost preview.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MarketCost {
    /// Market code.
    pub market: String,
    /// Its label.
    pub label: String,
    /// Recipients in it.
    pub recipient_count: u64,
    /// Price per message.
    pub total_cost: Money,
    /// recipientCount × price (after the allowance).
    pub subtotal: Money,
    /// The rate's effective date (`2026-07-01`).
    pub rate_effective_from: String,
}

/// The wallet part of a preview.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WalletPreview {
    /// Balance now.
    pub balance: Money,
    /// Balance after the send.
    pub after_send: Money,
    /// Whether the balance covers it.
    pub sufficient: bool,
}

/// `GET /campaigns/{id}/preview-cost`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CostPreview {
    /// Organisation currency.
    pub currency: String,
    /// Pending recipients.
    pub recipient_count: u64,
    /// Those with a market.
    pub priceable_count: u64,
    /// Those without (neither sent nor charged).
    pub unpriceable_count: u64,
    /// Sum of the subtotals.
    pub estimated_total: Money,
    /// Per market.
    pub by_market: Vec<MarketCost>,
    /// Wallet.
    pub wallet: WalletPreview,
    /// Included UTILITY messages left this month (UTILITY templates only).
    pub included_utility_remaining: Option<u64>,
}

/// `POST /campaigns/{id}/send` (no body means `now`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SendCampaign {
    /// When to send, default now.
    #[serde(default)]
    pub when: Option<SendWhen>,
    /// For `scheduled` (and optionally `staggered`): at least one minute ahead.
    #[serde(default)]
    pub scheduled_at: Option<Timestamp>,
    /// For `staggered`: contacts per batch.
    #[serde(default)]
    #[schemars(range(min = BATCH_SIZE.0, max = BATCH_SIZE.1))]
    pub batch_size: Option<u32>,
    /// For `staggered`: minutes between batches.
    #[serde(default)]
    #[schemars(range(min = BATCH_INTERVAL_MIN.0, max = BATCH_INTERVAL_MIN.1))]
    pub batch_interval_min: Option<u32>,
}
