//! Bodies of the operator API (`/api/v1/admin`), which stands in for the dashboard.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::common::{Money, Timestamp};
use crate::enums::{ChannelType, DealStatus, Scope, StageCategory};

/// `POST /admin/organizations`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateOrganization {
    /// Name.
    #[schemars(length(min = 1, max = 160))]
    pub name: String,
    /// ISO 4217 currency, default USD.
    #[serde(default)]
    #[schemars(extend("format" = "iso4217"))]
    pub currency: Option<String>,
    /// IANA time zone, default UTC.
    #[serde(default)]
    #[schemars(extend("format" = "timezone"))]
    pub timezone: Option<String>,
    /// UTILITY messages included each month, default 0.
    #[serde(default)]
    #[schemars(range(min = 0, max = 10_000_000))]
    pub included_utility_messages: Option<i64>,
}

/// An organisation (tenant).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Organization {
    /// Organisation id.
    pub id: Uuid,
    /// Name.
    pub name: String,
    /// Currency of every amount.
    pub currency: String,
    /// Time zone of calendar-day figures.
    pub timezone: String,
    /// UTILITY messages included each month.
    pub included_utility_messages: i64,
    /// Creation time.
    pub created_at: Timestamp,
}

/// `POST /admin/organizations/{orgId}/users`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateUser {
    /// Display name.
    #[schemars(length(min = 1, max = 160))]
    pub full_name: String,
    /// E-mail address.
    #[schemars(email)]
    pub email: String,
}

/// `POST /admin/organizations/{orgId}/api-keys`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateApiKey {
    /// A label.
    #[schemars(length(min = 1, max = 120))]
    pub name: String,
    /// The user the key acts as.
    pub user_id: Uuid,
    /// Granted scopes (a scope may repeat, up to twice the number of scopes).
    #[schemars(length(min = 1, max = Scope::ALL.len() * 2))]
    pub scopes: Vec<Scope>,
    /// Optional expiry.
    #[serde(default)]
    pub expires_at: Option<Timestamp>,
}

/// An API key, without its secret.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApiKey {
    /// Key id.
    pub id: Uuid,
    /// Label.
    pub name: String,
    /// The user it acts as.
    pub user_id: Uuid,
    /// The first characters, to recognise it.
    pub prefix: String,
    /// Granted scopes.
    pub scopes: Vec<Scope>,
    /// Expiry.
    pub expires_at: Option<Timestamp>,
    /// Revocation time.
    pub revoked_at: Option<Timestamp>,
    /// Creation time.
    pub created_at: Timestamp,
}

/// The answer to a key creation: the only time the plaintext key is shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ApiKeyCreated {
    /// The key's record.
    #[serde(flatten)]
    pub api_key: ApiKey,
    /// `wm_live_` + 32 base62 characters. Store it now: only its hash is kept.
    pub key: String,
}

/// `POST /admin/organizations/{orgId}/lifecycle-stages`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateLifecycleStage {
    /// Name.
    #[schemars(length(min = 1, max = 80))]
    pub name: String,
    /// Position.
    #[schemars(range(min = 0, max = 10_000))]
    pub order: i32,
    /// Category.
    pub category: StageCategory,
}

/// `POST /admin/organizations/{orgId}/channels`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateChannel {
    /// Channel type.
    #[serde(rename = "type")]
    pub channel_type: ChannelType,
}

/// A channel of the organisation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Channel {
    /// Channel id.
    pub id: Uuid,
    /// Type.
    #[serde(rename = "type")]
    pub channel_type: ChannelType,
    /// Whether it is active.
    pub active: bool,
    /// Creation time.
    pub created_at: Timestamp,
    /// How the business calls it (connected accounts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The provider it goes through (`messenger`, `instagram`, `webchat`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The platform's id of the account (a Page id, an Instagram account id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account_id: Option<String>,
    /// The Page an Instagram account sends through.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_id: Option<String>,
    /// `ACTIVE`, or `TOKEN_INVALID` when the platform refused its token.
    pub status: String,
    /// Why it is not ACTIVE, in the platform's words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_reason: Option<String>,
    /// Whether a human agent's late reply is tagged `HUMAN_AGENT`.
    pub human_agent: bool,
    /// A website chat's public token (its script is `/widget/{websiteToken}.js`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website_token: Option<String>,
    /// A website chat's settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webchat: Option<crate::channels::WebchatSettings>,
    /// A new website chat's identity-verification secret: shown this once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity_secret: Option<String>,
}

/// `POST /admin/organizations/{orgId}/deals`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateDeal {
    /// The contact.
    pub contact_id: Uuid,
    /// Title.
    #[schemars(length(min = 1, max = 200))]
    pub title: String,
    /// Value.
    #[schemars(range(min = 0, max = 1e12))]
    pub value: Money,
}

/// `PATCH /admin/organizations/{orgId}/deals/{id}`: closing a deal unblocks deletion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateDeal {
    /// New status.
    pub status: DealStatus,
}

/// A deal with a contact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Deal {
    /// Deal id.
    pub id: Uuid,
    /// The contact.
    pub contact_id: Uuid,
    /// Title.
    pub title: String,
    /// Value.
    pub value: Money,
    /// Status.
    pub status: DealStatus,
    /// Creation time.
    pub created_at: Timestamp,
}

/// A part of a platform webhook wm could not apply (`GET /admin/platform/unapplied`): a
/// message naming no sender, a status or field wm does not read, an event for an account
/// that is no organisation's. Kept 7 days.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnappliedPart {
    /// Its id.
    pub id: Uuid,
    /// The platform (`whatsapp`, …).
    pub provider: String,
    /// The kept webhook it was part of.
    pub event_id: Option<Uuid>,
    /// The business account it named (WhatsApp: a phone number id).
    pub account: Option<String>,
    /// Why it was not applied.
    pub reason: String,
    /// The part as the platform sent it (JSON, at most 4 KiB).
    pub part: String,
    /// When it arrived.
    pub created_at: Timestamp,
}
