//! The organisation's catalogue around campaigns: message templates, sender numbers, the
//! wallet and its ledger, and the operator and platform bodies that feed them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::common::{Money, Timestamp};
use crate::enums::RecipientStatus;

/// Messages per second a number may be paced at (the Cloud API's ceiling is 1,000).
pub const MPS: (u32, u32) = (1, 1000);

wire_enum!(
    /// The category of a message template, which decides its price.
    TemplateCategory {
        Marketing = "MARKETING",
        Utility = "UTILITY",
        Authentication = "AUTHENTICATION",
    }
);

wire_enum!(
    /// The messaging platform's review state of a template.
    TemplateStatus {
        Approved = "APPROVED",
        Pending = "PENDING",
        Rejected = "REJECTED",
        Paused = "PAUSED",
        Disabled = "DISABLED",
        InAppeal = "IN_APPEAL",
        PendingDeletion = "PENDING_DELETION",
        Deleted = "DELETED",
        LimitExceeded = "LIMIT_EXCEEDED",
    }
);

wire_enum!(
    /// The messaging platform's quality rating of a sender number.
    QualityRating {
        Green = "GREEN",
        Yellow = "YELLOW",
        Red = "RED",
    }
);

wire_enum!(
    /// A wallet ledger entry's kind.
    LedgerKind {
        TopUp = "TOP_UP",
        Charge = "CHARGE",
        Refund = "REFUND",
    }
);

/// A message template of the organisation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Template {
    /// Template id.
    pub id: Uuid,
    /// Name.
    pub name: String,
    /// Category.
    pub category: TemplateCategory,
    /// Language code (`es_MX`, `en`).
    pub language: String,
    /// Text with positional variables `{{1}}`, `{{2}}`.
    pub body_text: String,
    /// Review state; only APPROVED templates can be sent.
    pub status: TemplateStatus,
    /// The variable positions the body uses, in order (`["1", "2"]`).
    pub variables: Vec<String>,
    /// Creation time.
    pub created_at: Timestamp,
}

/// A sender phone number of the organisation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PhoneNumber {
    /// Number id.
    pub id: Uuid,
    /// `+` and digits.
    pub number_e164: String,
    /// Display name.
    pub display_name: String,
    /// Quality rating.
    pub quality_rating: QualityRating,
    /// The platform's id of this number (WhatsApp `phone_number_id`), when configured.
    pub platform_phone_number_id: Option<String>,
    /// The WhatsApp Business Account it belongs to.
    pub waba_id: Option<String>,
    /// Whether an access token is stored (the token itself is never returned).
    pub access_token_set: bool,
    /// Messages per second for this number (null: the server's default pace).
    pub mps: Option<u32>,
    /// Creation time.
    pub created_at: Timestamp,
}

/// A wallet ledger entry: every balance is the sum of its entries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LedgerEntry {
    /// Entry id.
    pub id: Uuid,
    /// TOP_UP, CHARGE or REFUND.
    pub kind: LedgerKind,
    /// Signed amount (charges negative).
    pub amount: Money,
    /// Balance after it.
    pub balance_after: Money,
    /// The campaign it concerns.
    pub campaign_id: Option<Uuid>,
    /// What it was for.
    pub description: String,
    /// When.
    pub created_at: Timestamp,
}

/// `GET /wallet`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Wallet {
    /// Currency.
    pub currency: String,
    /// Balance (never negative).
    pub balance: Money,
    /// UTILITY messages included each month.
    pub included_utility_messages: u64,
    /// Of which left this month.
    pub included_utility_remaining: u64,
    /// The latest ledger entries, newest first.
    pub recent_entries: Vec<LedgerEntry>,
}

/// `POST /admin/organizations/{orgId}/phone-numbers`. Its `Debug` hides the access token
/// (see [`REDACTED`]).
#[derive(Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreatePhoneNumber {
    /// `+` and digits.
    #[schemars(extend("format" = "phone"))]
    pub number_e164: String,
    /// Display name.
    #[schemars(length(min = 1, max = 100))]
    pub display_name: String,
    /// Default GREEN.
    #[serde(default)]
    pub quality_rating: Option<QualityRating>,
    /// The platform's id of this number (WhatsApp `phone_number_id`).
    #[serde(default)]
    #[schemars(length(min = 1, max = 64))]
    pub platform_phone_number_id: Option<String>,
    /// The WhatsApp Business Account id (template sync and template webhooks use it).
    #[serde(default)]
    #[schemars(length(min = 1, max = 64))]
    pub waba_id: Option<String>,
    /// The platform access token (stored encrypted, never returned).
    #[serde(default)]
    #[schemars(length(min = 1, max = 4096))]
    pub access_token: Option<String>,
    /// Messages per second for this number (numbers the platform upgraded).
    #[serde(default)]
    #[schemars(range(min = MPS.0, max = MPS.1))]
    pub mps: Option<u32>,
}

/// `PATCH /admin/organizations/{orgId}/phone-numbers/{id}`: only sent fields change;
/// `null` clears the platform fields. Its `Debug` hides the access token.
#[derive(Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdatePhoneNumber {
    /// Display name (not nullable).
    #[serde(default)]
    #[schemars(with = "String", length(min = 1, max = 100))]
    pub display_name: Option<String>,
    /// Quality rating (not nullable).
    #[serde(default)]
    #[schemars(with = "QualityRating")]
    pub quality_rating: Option<QualityRating>,
    /// The platform's id of this number.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "crate::common::double_option"
    )]
    #[schemars(with = "Option<String>", length(min = 1, max = 64))]
    pub platform_phone_number_id: Option<Option<String>>,
    /// The WhatsApp Business Account id.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "crate::common::double_option"
    )]
    #[schemars(with = "Option<String>", length(min = 1, max = 64))]
    pub waba_id: Option<Option<String>>,
    /// The platform access token (stored encrypted, never returned).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "crate::common::double_option"
    )]
    #[schemars(with = "Option<String>", length(min = 1, max = 4096))]
    pub access_token: Option<Option<String>>,
    /// Messages per second for this number.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "crate::common::double_option"
    )]
    #[schemars(with = "Option<u32>", range(min = MPS.0, max = MPS.1))]
    pub mps: Option<Option<u32>>,
}

/// What `Debug` shows in place of an access token: a body that reaches a log line, a panic
/// message or an error report (`{:?}`) must not carry the platform credential it brings.
pub const REDACTED: &str = "<redacted>";

/// `Some("<redacted>")` for a set token, so a debug print still says whether one was given.
fn redact<T>(token: &Option<T>) -> Option<&'static str> {
    token.as_ref().map(|_| REDACTED)
}

impl std::fmt::Debug for CreatePhoneNumber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CreatePhoneNumber")
            .field("number_e164", &self.number_e164)
            .field("display_name", &self.display_name)
            .field("quality_rating", &self.quality_rating)
            .field("platform_phone_number_id", &self.platform_phone_number_id)
            .field("waba_id", &self.waba_id)
            .field("access_token", &redact(&self.access_token))
            .field("mps", &self.mps)
            .finish()
    }
}

impl std::fmt::Debug for UpdatePhoneNumber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // `Some(None)` (a cleared token) carries no secret and stays visible as such.
        let token = self.access_token.as_ref().map(redact);
        f.debug_struct("UpdatePhoneNumber")
            .field("display_name", &self.display_name)
            .field("quality_rating", &self.quality_rating)
            .field("platform_phone_number_id", &self.platform_phone_number_id)
            .field("waba_id", &self.waba_id)
            .field("access_token", &token)
            .field("mps", &self.mps)
            .finish()
    }
}

/// What `POST /admin/organizations/{orgId}/templates/sync` did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TemplateSync {
    /// WhatsApp Business Accounts read.
    pub accounts: u64,
    /// Templates the platform has that were new here.
    pub created: u64,
    /// Templates whose category, status or text changed.
    pub updated: u64,
    /// Templates already as the platform has them.
    pub unchanged: u64,
    /// Templates of the organisation that no account listed (deleted at the platform, or
    /// added here by the operator): left as they are — wm cannot tell the two apart, and a
    /// template the platform no longer has pauses its campaign when sent (TEMPLATE_NOT_FOUND).
    pub left: u64,
    /// Those templates, by name and language, for the operator to review.
    pub left_templates: Vec<TemplateRef>,
}

/// A template named by what the platform knows it by, with its id and status here.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TemplateRef {
    /// Template id.
    pub id: Uuid,
    /// Name.
    pub name: String,
    /// Language code.
    pub language: String,
    /// Its status here (unchanged by the sync).
    pub status: TemplateStatus,
}

/// `POST /admin/organizations/{orgId}/templates`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateTemplate {
    /// Name.
    #[schemars(length(min = 1, max = 100))]
    pub name: String,
    /// Category.
    pub category: TemplateCategory,
    /// Language.
    #[schemars(length(min = 2, max = 15))]
    pub language: String,
    /// Body with `{{1}}`-style variables.
    #[schemars(length(min = 1, max = 1024))]
    pub body_text: String,
    /// Default APPROVED.
    #[serde(default)]
    pub status: Option<TemplateStatus>,
}

/// `POST /admin/organizations/{orgId}/wallet/top-ups`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TopUp {
    /// Amount to add, greater than 0.
    #[schemars(range(min = 0.000001, max = 1e9))]
    pub amount: Money,
}

/// `POST /admin/organizations/{orgId}/provider-events`: a status callback of the platform.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProviderEvent {
    /// The platform's message id.
    #[schemars(length(min = 1, max = 200))]
    pub provider_message_id: String,
    /// DELIVERED, READ or FAILED.
    #[schemars(extend("enum" = ["DELIVERED", "READ", "FAILED"]))]
    pub status: RecipientStatus,
    /// Why it failed.
    #[serde(default)]
    #[schemars(length(max = 500))]
    pub error: Option<String>,
}

/// `POST /admin/organizations/{orgId}/inbound`: a message from a contact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Inbound {
    /// Channel type.
    pub channel_type: crate::enums::ChannelType,
    /// The sender's id on it (phone digits for MESSAGING_APP_A; not blank).
    #[schemars(length(max = 255), regex(pattern = r"\S"))]
    pub external_id: String,
    /// Name, for a new contact.
    #[serde(default)]
    #[schemars(length(max = crate::contacts::MAX_NAME))]
    pub full_name: Option<String>,
    /// What they wrote (kept as a TEXT message of the conversation).
    #[serde(default)]
    #[schemars(length(max = 4096))]
    pub text: Option<String>,
}

/// A price row of an organisation's rate card, replacing (or adding) a market.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MarketRateInput {
    /// Market code (`MX`, `ROW_LATAM`, …).
    #[schemars(length(min = 2, max = 20))]
    pub market: String,
    /// Label.
    #[schemars(length(min = 1, max = 100))]
    pub label: String,
    /// Price of a MARKETING message.
    #[schemars(range(min = 0, max = 1000))]
    pub marketing: Money,
    /// Price of a UTILITY message.
    #[schemars(range(min = 0, max = 1000))]
    pub utility: Money,
    /// Price of an AUTHENTICATION message.
    #[schemars(range(min = 0, max = 1000))]
    pub authentication: Money,
    /// Effective date (`2026-11-01`).
    #[schemars(extend("format" = "date"))]
    pub effective_from: String,
}

/// `PUT /admin/organizations/{orgId}/rates`: the organisation's overrides of the shipped
/// rate card (an empty list restores it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetRates {
    /// Overrides.
    #[schemars(length(max = 500))]
    pub markets: Vec<MarketRateInput>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_an_access_token() {
        let create = CreatePhoneNumber {
            number_e164: "+525500000001".into(),
            display_name: "Ventas".into(),
            access_token: Some("EAAG-secret".into()),
            ..Default::default()
        };
        let update = UpdatePhoneNumber {
            access_token: Some(Some("EAAG-secret".into())),
            ..Default::default()
        };
        for shown in [
            format!("{create:?}"),
            format!("{create:#?}"),
            format!("{update:?}"),
        ] {
            assert!(!shown.contains("EAAG"), "{shown}");
            assert!(shown.contains(REDACTED), "{shown}");
        }
        assert!(format!("{create:?}").contains("+525500000001"));
        // The wire form is untouched.
        let wire = serde_json::to_value(&create).unwrap_or_default();
        assert_eq!(wire["accessToken"], "EAAG-secret");
        let cleared = UpdatePhoneNumber {
            access_token: Some(None),
            ..Default::default()
        };
        assert!(format!("{cleared:?}").contains("access_token: Some(None)"));
    }
}
