//! Automations (trigger → conditions, actions and waits) and the log of their runs.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::campaigns::RecipientContact;
use crate::common::{Money, Timestamp, double_option};

/// Most steps in an automation.
pub const MAX_STEPS: usize = 20;

/// The settings of a trigger, by trigger type: `stage` (LIFECYCLE_STAGE_ENTERED),
/// `campaignId` (CAMPAIGN_REPLIED, optional), `days` (NO_RESPONSE_DAYS), `threshold`
/// (WALLET_LOW_BALANCE). Documents `triggerConfig` (the server keeps it as given).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TriggerConfig {
    /// The stage entered (its name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage: Option<String>,
    /// The campaign replied to (any when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub campaign_id: Option<Uuid>,
    /// Days without a response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub days: Option<u32>,
    /// The balance under which it fires.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
}

wire_enum!(
    /// How a run of an automation stands: `waiting` on a WAIT step, or how it ended.
    RunResult {
        Waiting = "waiting",
        Completed = "completed",
        Condition = "condition",
        Skipped = "skipped",
        Failed = "failed",
    }
);

wire_enum!(
    /// What one step of a run did.
    StepOutcome {
        Waiting = "waiting",
        Passed = "passed",
        NotMet = "not_met",
        Done = "done",
        Sent = "sent",
        Charged = "charged",
        Skipped = "skipped",
        Failed = "failed",
    }
);

wire_enum!(
    /// Where an automation stands.
    AutomationStatus {
        Active = "ACTIVE",
        Paused = "PAUSED",
        PausedByFailure = "PAUSED_BY_FAILURE",
        Draft = "DRAFT",
        Archived = "ARCHIVED",
    }
);

wire_enum!(
    /// What starts a run.
    TriggerType {
        LifecycleStageEntered = "LIFECYCLE_STAGE_ENTERED",
        CampaignReplied = "CAMPAIGN_REPLIED",
        NoResponseDays = "NO_RESPONSE_DAYS",
        WalletLowBalance = "WALLET_LOW_BALANCE",
    }
);

wire_enum!(
    /// A step's type.
    StepType {
        Condition = "CONDITION",
        Action = "ACTION",
        Wait = "WAIT",
    }
);

wire_enum!(
    /// A step's kind: CHANNEL_IS, HAS_TAG (conditions), SEND_TEMPLATE, ADD_TAG, SET_STAGE
    /// (actions), MINUTES (wait).
    StepKind {
        ChannelIs = "CHANNEL_IS",
        HasTag = "HAS_TAG",
        SendTemplate = "SEND_TEMPLATE",
        AddTag = "ADD_TAG",
        SetStage = "SET_STAGE",
        Minutes = "MINUTES",
    }
);

/// `{kind, value}` of a step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StepConfig {
    /// Kind.
    pub kind: StepKind,
    /// What the kind reads: a channel type (CHANNEL_IS), a tag (HAS_TAG, ADD_TAG), a
    /// template name (SEND_TEMPLATE), a lifecycle stage name (SET_STAGE), or a whole
    /// number of minutes (MINUTES).
    #[schemars(with = "StepValue")]
    pub value: serde_json::Value,
}

/// The shapes of a step's `value`, for the document (the engine checks which one its kind
/// takes).
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum StepValue {
    /// A channel type (CHANNEL_IS), a tag (HAS_TAG, ADD_TAG), a template name
    /// (SEND_TEMPLATE) or a lifecycle stage name (SET_STAGE): 1 to 120 characters.
    Text(#[schemars(length(min = 1, max = 120))] String),
    /// Minutes to wait (MINUTES): 1 to 43,200 (30 days).
    Minutes(#[schemars(range(min = 1, max = 43_200))] i64),
}

/// One step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// CONDITION, ACTION or WAIT.
    #[serde(rename = "type")]
    pub step_type: StepType,
    /// What it does.
    pub config: StepConfig,
}

/// An automation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Automation {
    /// Automation id.
    pub id: Uuid,
    /// Organisation.
    pub organization_id: Uuid,
    /// Author.
    pub created_by_user_id: Uuid,
    /// Name.
    pub name: String,
    /// Status.
    pub status: AutomationStatus,
    /// Trigger.
    pub trigger_type: TriggerType,
    /// Trigger settings (`{stage}`, `{days}`, `{threshold}`, `{campaignId?}`).
    #[schemars(with = "TriggerConfig")]
    pub trigger_config: serde_json::Map<String, serde_json::Value>,
    /// Steps, in order.
    pub steps: Vec<Step>,
    /// Why it was paused by the service.
    pub paused_reason: Option<String>,
    /// Consecutive failed runs (five pause it).
    pub failure_count: u32,
    /// Last run.
    pub last_run_at: Option<Timestamp>,
    /// The template the automation is built around: the operator's `templateKey`, else the
    /// template name of its first SEND_TEMPLATE step, else `""`.
    pub template_key: String,
    /// Creation time.
    pub created_at: Timestamp,
    /// Last change.
    pub updated_at: Timestamp,
    /// The trigger in words.
    pub trigger_label: String,
    /// The steps in words.
    pub steps_summary: Vec<String>,
    /// Runs started in the last 7 days.
    pub runs7d: u64,
}

/// Figures of the automations list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AutomationSummary {
    /// ACTIVE.
    pub active: u64,
    /// PAUSED_BY_FAILURE.
    pub paused_by_failure: u64,
    /// PAUSED.
    pub paused: u64,
    /// DRAFT.
    pub drafts: u64,
    /// Runs in the last 7 days.
    pub runs7d: u64,
    /// Runs in the 7 days before.
    pub runs7d_previous: u64,
    /// Templates sent by runs in the last 7 days.
    pub templates_sent7d: u64,
    /// What they cost.
    pub templates_cost7d: Money,
    /// Organisation currency.
    pub currency: String,
    /// Failed runs in the last 7 days.
    pub failures7d: u64,
    /// The latest failure's error.
    pub failure_example: Option<String>,
}

/// `GET /automations` response (not paginated).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AutomationList {
    /// Automations, newest first.
    pub data: Vec<Automation>,
    /// Figures.
    pub summary: AutomationSummary,
}

/// Tabs of the automation list.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AutomationTab {
    /// Every automation (archived ones only with `includeArchived=true`).
    #[default]
    All,
    /// ACTIVE.
    Active,
    /// PAUSED or PAUSED_BY_FAILURE.
    Paused,
    /// DRAFT.
    Drafts,
}

/// Which runs of an automation to list.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunFilter {
    /// Every run.
    #[default]
    All,
    /// Ran to the end.
    Completed,
    /// Waiting on a WAIT step.
    Waiting,
    /// Stopped by a condition.
    Condition,
    /// Skipped (an opted-out contact, a duplicate).
    Skipped,
    /// Failed.
    Failed,
}

impl RunFilter {
    /// The stored `result` it selects (`None` for all).
    pub fn result(self) -> Option<&'static str> {
        match self {
            RunFilter::All => None,
            RunFilter::Completed => Some("completed"),
            RunFilter::Waiting => Some("waiting"),
            RunFilter::Condition => Some("condition"),
            RunFilter::Skipped => Some("skipped"),
            RunFilter::Failed => Some("failed"),
        }
    }
}

/// `GET /automations` query.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListAutomationsQuery {
    /// Tab, default all.
    #[serde(default)]
    pub tab: Option<AutomationTab>,
    /// Trigger type.
    #[serde(default)]
    pub trigger: Option<TriggerType>,
    /// Name substring.
    #[serde(default)]
    #[schemars(length(max = 120))]
    pub q: Option<String>,
    /// `true` includes archived ones.
    #[serde(default, with = "crate::common::bool_word")]
    #[schemars(with = "Option<bool>", extend("x-wm-words" = true))]
    pub include_archived: Option<bool>,
}

/// What one step of a run did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunStep {
    /// Position in the automation.
    pub index: u32,
    /// Its type.
    #[serde(rename = "type")]
    pub step_type: StepType,
    /// Its kind.
    pub kind: StepKind,
    /// What the step did.
    #[schemars(with = "StepOutcome")]
    pub outcome: String,
    /// Details (the template sent, the cost, the error).
    pub detail: Option<String>,
    /// When.
    pub at: Timestamp,
}

/// A run of an automation for a contact (or for the organisation, on wallet triggers).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AutomationRun {
    /// Run id.
    pub id: Uuid,
    /// Automation.
    pub automation_id: Uuid,
    /// The contact it ran for.
    pub contact: Option<RecipientContact>,
    /// How the run ended, or `waiting`.
    #[schemars(with = "RunResult")]
    pub result: String,
    /// Steps executed so far.
    pub steps: Vec<RunStep>,
    /// Why it failed.
    pub error: Option<String>,
    /// When it started.
    pub started_at: Timestamp,
    /// When it ended (null while waiting).
    pub finished_at: Option<Timestamp>,
}

/// `GET /automations/{id}/logs` query.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LogsQuery {
    /// Page.
    #[serde(default)]
    #[schemars(range(min = 1, max = crate::common::MAX_PAGE))]
    pub page: Option<u64>,
    /// Page size.
    #[serde(default)]
    #[schemars(range(min = 1, max = 100))]
    pub page_size: Option<u64>,
    /// all, completed, waiting, condition, skipped, failed.
    #[serde(default)]
    pub result: Option<RunFilter>,
}

/// `POST /admin/organizations/{orgId}/automations`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateAutomation {
    /// Name.
    #[schemars(length(min = 1, max = 120))]
    pub name: String,
    /// Default DRAFT.
    #[serde(default)]
    pub status: Option<AutomationStatus>,
    /// Trigger.
    pub trigger_type: TriggerType,
    /// Trigger settings.
    #[serde(default)]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub trigger_config: serde_json::Map<String, serde_json::Value>,
    /// Steps.
    #[schemars(length(min = 1, max = MAX_STEPS))]
    pub steps: Vec<Step>,
    /// Template it is built around.
    #[serde(default)]
    #[schemars(length(max = 120))]
    pub template_key: Option<String>,
    /// Author (a user of the organisation).
    pub created_by_user_id: Uuid,
}

/// `PATCH /admin/organizations/{orgId}/automations/{id}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateAutomation {
    /// Name (not nullable).
    #[serde(default)]
    #[schemars(with = "String", length(min = 1, max = 120))]
    pub name: Option<String>,
    /// Status (ACTIVE reactivates one paused by failure and resets its count).
    #[serde(default)]
    #[schemars(with = "AutomationStatus")]
    pub status: Option<AutomationStatus>,
    /// Trigger.
    #[serde(default)]
    #[schemars(with = "TriggerType")]
    pub trigger_type: Option<TriggerType>,
    /// Trigger settings.
    #[serde(default)]
    #[schemars(with = "serde_json::Map<String, serde_json::Value>")]
    pub trigger_config: Option<serde_json::Map<String, serde_json::Value>>,
    /// Steps.
    #[serde(default)]
    #[schemars(with = "Vec<Step>", length(min = 1, max = MAX_STEPS))]
    pub steps: Option<Vec<Step>>,
    /// Template key; null removes it.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "double_option"
    )]
    #[schemars(with = "Option<String>", length(max = 120))]
    pub template_key: Option<Option<String>>,
}
