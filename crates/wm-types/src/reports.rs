//! Reports: each has the period, totals and a per-day series (calendar days in the
//! organisation's time zone, every day present, zeros included).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::common::Money;

/// `?from=YYYY-MM-DD&to=YYYY-MM-DD` (inclusive; default the last 30 days).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReportQuery {
    /// First day.
    #[serde(default)]
    #[schemars(extend("format" = "date"))]
    pub from: Option<String>,
    /// Last day.
    #[serde(default)]
    #[schemars(extend("format" = "date"))]
    pub to: Option<String>,
}

/// The period a report covers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Period {
    /// First day.
    pub from: String,
    /// Last day.
    pub to: String,
    /// The organisation's time zone.
    pub timezone: String,
}

/// A report: period, totals, one row per day.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "{T}Report")]
pub struct Report<T, D> {
    /// Period.
    pub period: Period,
    /// Totals over the period.
    pub totals: T,
    /// One row per day.
    pub series: Vec<D>,
}

/// Commercial totals.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommercialTotals {
    /// Contacts created.
    pub new_contacts: u64,
    /// Moves into a CUSTOMER stage.
    pub new_customers: u64,
    /// Deals created.
    pub deals_created: u64,
    /// Their value.
    pub deals_value: Money,
    /// Of which WON now.
    pub deals_won: u64,
    /// Their value.
    pub deals_won_value: Money,
}

/// A commercial day.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommercialDay {
    /// Day.
    pub date: String,
    /// Contacts created.
    pub new_contacts: u64,
    /// Moves into a CUSTOMER stage.
    pub new_customers: u64,
    /// Deals created.
    pub deals_created: u64,
    /// Their value.
    pub deals_value: Money,
}

/// Contacts in a stage now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StageCount {
    /// Stage id (null: no stage).
    pub stage_id: Option<Uuid>,
    /// Stage name.
    pub stage: String,
    /// Category.
    pub category: Option<String>,
    /// Contacts.
    pub contacts: u64,
    /// Moves into it during the period.
    pub entered: u64,
}

/// Lifecycle totals.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LifecycleTotals {
    /// Stage changes in the period.
    pub stage_changes: u64,
    /// Per stage.
    pub by_stage: Vec<StageCount>,
}

/// A lifecycle day.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LifecycleDay {
    /// Day.
    pub date: String,
    /// Stage changes.
    pub stage_changes: u64,
}

/// Campaign totals (messages by the day each step happened).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CampaignTotals {
    /// Campaigns created.
    pub campaigns: u64,
    /// Messages sent.
    pub sent: u64,
    /// Delivered.
    pub delivered: u64,
    /// Read.
    pub read: u64,
    /// Replied.
    pub replied: u64,
    /// Failed.
    pub failed: u64,
    /// Charged for campaigns, net of refunds.
    pub spend: Money,
}

/// A campaign day.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CampaignDay {
    /// Day.
    pub date: String,
    /// Sent.
    pub sent: u64,
    /// Delivered.
    pub delivered: u64,
    /// Read.
    pub read: u64,
    /// Replied.
    pub replied: u64,
    /// Failed.
    pub failed: u64,
    /// Net spend.
    pub spend: Money,
}

/// Wallet totals.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WalletTotals {
    /// Money added.
    pub top_ups: Money,
    /// Money charged (positive).
    pub charges: Money,
    /// Money refunded.
    pub refunds: Money,
    /// topUps − charges + refunds.
    pub net: Money,
    /// Balance now.
    pub balance: Money,
}

/// A wallet day.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WalletDay {
    /// Day.
    pub date: String,
    /// Added.
    pub top_ups: Money,
    /// Charged.
    pub charges: Money,
    /// Refunded.
    pub refunds: Money,
    /// Balance at the end of the day.
    pub balance: Money,
}

/// One user's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TeamMember {
    /// User.
    pub user_id: Uuid,
    /// Name.
    pub full_name: String,
    /// Contacts they own now.
    pub contacts_owned: u64,
    /// Notes they wrote in the period.
    pub notes_written: u64,
    /// Unresolved conversations assigned to them now.
    pub conversations_assigned: u64,
    /// Conversations assigned to them resolved in the period.
    pub conversations_resolved: u64,
}

/// Team totals.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TeamTotals {
    /// Notes written.
    pub notes_written: u64,
    /// Conversations resolved.
    pub conversations_resolved: u64,
    /// Per user.
    pub members: Vec<TeamMember>,
}

/// A team day.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TeamDay {
    /// Day.
    pub date: String,
    /// Notes written.
    pub notes_written: u64,
    /// Conversations resolved.
    pub conversations_resolved: u64,
}

/// Conversation totals.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConversationTotals {
    /// Opened in the period.
    pub opened: u64,
    /// Resolved in the period.
    pub resolved: u64,
    /// OPEN now.
    pub open_now: u64,
    /// Average minutes from opening to resolution, for those resolved in the period.
    pub avg_resolution_minutes: u64,
}

/// A conversation day.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConversationDay {
    /// Day.
    pub date: String,
    /// Opened.
    pub opened: u64,
    /// Resolved.
    pub resolved: u64,
}
