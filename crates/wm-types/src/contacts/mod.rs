//! Contacts, their identities, notes and timeline, and the requests that change them.

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use uuid::Uuid;

use crate::common::{Money, PageMeta, Timestamp, double_option};
use crate::enums::{ChannelType, ConsentHow, ContactSource, ConversationStatus};

mod history;
pub use history::{
    AuthorRef, CampaignRef, ChannelRef, ConversationRef, CreateIdentity, CreateNote, Identity,
    Note, TimelineEntry, TimelineFilter, TimelineKind, TimelineQuery,
};

/// `{id, name, order}` of the contact's lifecycle stage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StageRef {
    /// Stage id.
    pub id: Uuid,
    /// Stage name.
    pub name: String,
    /// Position in the funnel.
    pub order: i32,
}

/// `{id, fullName, email}` of a user (a contact's owner, a conversation's assignee).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UserRef {
    /// User id.
    pub id: Uuid,
    /// Display name.
    pub full_name: String,
    /// E-mail address.
    pub email: String,
}

/// Consent to be messaged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Consent {
    /// Whether consent was given.
    pub given: bool,
    /// When it was given or withdrawn.
    #[serde(default)]
    pub at: Option<Timestamp>,
    /// How it was obtained.
    #[serde(default)]
    pub how: Option<ConsentHow>,
}

/// One channel identity as embedded in a contact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct IdentityRef {
    /// Identity id.
    pub id: Uuid,
    /// The channel's type.
    pub channel_type: ChannelType,
    /// The contact's id on that channel (a phone without `+`, a username, an address; on
    /// MESSAGING_APP_A also the business-scoped user id of a person who hides their phone
    /// behind a username, `US.13491208655302741918`).
    pub external_id: String,
    /// The username the person shows on that channel, when they have one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// The platform's scoped id of the person (Instagram's IGSID), which wm answers them at,
    /// when `externalId` shows their username instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scoped_id: Option<String>,
}

/// `{id, status, channelType, updatedAt}` of the contact's latest conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LastConversation {
    /// Conversation id.
    pub id: Uuid,
    /// Its status.
    pub status: ConversationStatus,
    /// Its channel's type.
    pub channel_type: ChannelType,
    /// Last activity.
    pub updated_at: Timestamp,
}

/// An open deal shown on the contact detail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OpenDeal {
    /// Deal id.
    pub id: Uuid,
    /// Title.
    pub title: String,
    /// Value in the organisation's currency.
    pub value: Money,
    /// Creation time.
    pub created_at: Timestamp,
}

/// A contact. `organizationId` is omitted in list items, `lastConversation` appears only in
/// list items and `openDeals` only on the detail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Contact {
    /// Contact id.
    pub id: Uuid,
    /// Owning organisation (create, get and update only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub organization_id: Option<Uuid>,
    /// Name, max 160.
    pub full_name: Option<String>,
    /// `+` and 6–15 digits; unique per organisation.
    pub primary_phone: Option<String>,
    /// E-mail address.
    pub primary_email: Option<String>,
    /// Company, max 160.
    pub company: Option<String>,
    /// Two-letter country.
    pub country: Option<String>,
    /// Where the contact came from.
    pub source: ContactSource,
    /// Lifecycle stage id.
    pub lifecycle_stage_id: Option<Uuid>,
    /// Lifecycle stage.
    pub lifecycle_stage: Option<StageRef>,
    /// Owner id.
    pub owner_id: Option<Uuid>,
    /// Owner.
    pub owner: Option<UserRef>,
    /// True withdraws the contact from messaging.
    pub opted_out: bool,
    /// Consent status.
    pub consent: Consent,
    /// Tags, at most 50.
    pub tags: Vec<String>,
    /// Channel identities.
    pub identities: Vec<IdentityRef>,
    /// Latest conversation (list items only).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "double_option"
    )]
    #[schemars(with = "Option<LastConversation>")]
    pub last_conversation: Option<Option<LastConversation>>,
    /// Open deals (detail only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_deals: Option<Vec<OpenDeal>>,
    /// Creation time.
    pub created_at: Timestamp,
    /// Last change.
    pub updated_at: Timestamp,
}

/// Longest name or company.
pub const MAX_NAME: usize = 160;
/// Longest phone as typed.
pub const MAX_PHONE: usize = 32;
/// Most tags on a contact.
pub const MAX_TAGS: usize = 50;
/// Longest tag.
pub const MAX_TAG_LEN: usize = 60;
/// Longest first note.
pub const MAX_NOTE: usize = 4000;
/// Most ids in a bulk update or an `ids` filter.
pub const MAX_IDS: usize = 500;
/// Most tags added by one bulk update.
pub const MAX_ADD_TAGS: usize = 20;
/// Longest search text.
pub const MAX_SEARCH: usize = 120;

/// Consent as sent in a request.
pub type ConsentInput = Consent;

/// `POST /contacts`. No field is required.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateContact {
    /// Name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = MAX_NAME))]
    pub full_name: Option<String>,
    /// International format (`+` and 6–15 digits; spaces, dashes, dots, parentheses allowed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("format" = "phone"), length(max = MAX_PHONE))]
    pub primary_phone: Option<String>,
    /// E-mail address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(email)]
    pub primary_email: Option<String>,
    /// Company.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = MAX_NAME))]
    pub company: Option<String>,
    /// Country.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 2))]
    pub country: Option<String>,
    /// A stage of the organisation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifecycle_stage_id: Option<Uuid>,
    /// A user of the organisation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner_id: Option<Uuid>,
    /// Source, default MANUAL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<ContactSource>,
    /// Withdrawn from messaging.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opted_out: Option<bool>,
    /// Consent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consent: Option<ConsentInput>,
    /// Tags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = MAX_TAGS), inner(length(max = MAX_TAG_LEN)))]
    pub tags: Option<Vec<String>>,
    /// First internal note.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = MAX_NOTE))]
    pub note: Option<String>,
}

/// `PATCH /contacts/{id}`: only sent fields change; `null` clears a nullable field.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateContact {
    /// Name; null removes it.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "double_option"
    )]
    #[schemars(with = "Option<String>", length(max = MAX_NAME))]
    pub full_name: Option<Option<String>>,
    /// Phone; null removes it.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "double_option"
    )]
    #[schemars(
        with = "Option<String>",
        extend("format" = "phone"),
        length(max = MAX_PHONE)
    )]
    pub primary_phone: Option<Option<String>>,
    /// E-mail; null removes it.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "double_option"
    )]
    #[schemars(with = "Option<String>", email)]
    pub primary_email: Option<Option<String>>,
    /// Company; null removes it.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "double_option"
    )]
    #[schemars(with = "Option<String>", length(max = MAX_NAME))]
    pub company: Option<Option<String>>,
    /// Country; null removes it.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "double_option"
    )]
    #[schemars(with = "Option<String>", length(max = 2))]
    pub country: Option<Option<String>>,
    /// Stage; null removes it.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "double_option"
    )]
    #[schemars(with = "Option<Uuid>")]
    pub lifecycle_stage_id: Option<Option<Uuid>>,
    /// Owner; null removes it.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "double_option"
    )]
    #[schemars(with = "Option<Uuid>")]
    pub owner_id: Option<Option<Uuid>>,
    /// Source (not nullable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "ContactSource")]
    pub source: Option<ContactSource>,
    /// Withdrawn from messaging (not nullable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "bool")]
    pub opted_out: Option<bool>,
    /// Consent (not nullable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "ConsentInput")]
    pub consent: Option<ConsentInput>,
    /// Tags (replaces the list; not nullable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        with = "Vec<String>",
        length(max = MAX_TAGS),
        inner(length(max = MAX_TAG_LEN))
    )]
    pub tags: Option<Vec<String>>,
}

/// `POST /contacts/bulk`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BulkUpdateContacts {
    /// Contacts to change.
    #[schemars(length(max = MAX_IDS))]
    pub ids: Vec<Uuid>,
    /// Stage to move them to (not nullable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Uuid")]
    pub lifecycle_stage_id: Option<Uuid>,
    /// Tags to add (not nullable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        with = "Vec<String>",
        length(max = MAX_ADD_TAGS),
        inner(length(max = MAX_TAG_LEN))
    )]
    pub add_tags: Option<Vec<String>>,
    /// Owner; null removes it.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "double_option"
    )]
    #[schemars(with = "Option<Uuid>")]
    pub owner_id: Option<Option<Uuid>>,
}

/// `{updated, skipped}` of a bulk update.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BulkResult {
    /// Contacts of the organisation that were processed.
    pub updated: u64,
    /// Ids that are not the organisation's.
    pub skipped: u64,
}
/// Tabs of the contact list.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ContactTab {
    /// Everyone.
    #[default]
    All,
    /// Stage category LEAD or no stage.
    Leads,
    /// Stage category IN_PROGRESS.
    InProgress,
    /// Stage category CUSTOMER.
    Customers,
    /// Stage category INACTIVE.
    Inactive,
    /// No consent given.
    NoConsent,
}

/// The `ownerId` filter: a user or `none`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, JsonSchema)]
#[schemars(with = "String", extend("format" = "uuid-or-none"))]
pub enum OwnerFilter {
    /// Contacts without owner.
    Unowned,
    /// Contacts of that owner.
    User(Uuid),
}

impl Serialize for OwnerFilter {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            OwnerFilter::Unowned => s.serialize_str("none"),
            OwnerFilter::User(id) => s.collect_str(id),
        }
    }
}

impl<'de> Deserialize<'de> for OwnerFilter {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if s == "none" {
            return Ok(OwnerFilter::Unowned);
        }
        Uuid::parse_str(&s)
            .map(OwnerFilter::User)
            .map_err(serde::de::Error::custom)
    }
}

/// `GET /contacts` query.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListContactsQuery {
    /// Page, default 1.
    #[serde(default)]
    #[schemars(range(min = 1, max = crate::common::MAX_PAGE))]
    pub page: Option<u64>,
    /// Page size, 1–100, default 20.
    #[serde(default)]
    #[schemars(range(min = 1, max = 100))]
    pub page_size: Option<u64>,
    /// Tab, default all.
    #[serde(default)]
    pub tab: Option<ContactTab>,
    /// Stage filter.
    #[serde(default)]
    pub lifecycle_stage_id: Option<Uuid>,
    /// `none` or a user id.
    #[serde(default)]
    pub owner_id: Option<OwnerFilter>,
    /// Source filter.
    #[serde(default)]
    pub source: Option<ContactSource>,
    /// Contacts with an identity of that channel type.
    #[serde(default)]
    pub channel_type: Option<ChannelType>,
    /// Tag (case-insensitive).
    #[serde(default)]
    #[schemars(length(max = MAX_TAG_LEN))]
    pub tag: Option<String>,
    /// Words of name, phone, e-mail or company.
    #[serde(default)]
    #[schemars(length(max = MAX_SEARCH))]
    pub q: Option<String>,
    /// Same as `q`.
    #[serde(default)]
    #[schemars(length(max = MAX_SEARCH))]
    pub search: Option<String>,
    /// Created in the last 7, 30 or 90 days. The enum lists `null` because the schema of an
    /// optional field is nullable with `default: null`, which its enum must allow.
    #[serde(default)]
    #[schemars(extend("enum" = [7, 30, 90, null]))]
    pub days: Option<u32>,
    /// Ids (`ids=a,b` or repeated).
    #[serde(default)]
    #[schemars(length(max = MAX_IDS))]
    pub ids: Option<Vec<Uuid>>,
}

/// Counts per tab, under the other filters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ContactTabs {
    /// All.
    pub all: u64,
    /// Leads.
    pub leads: u64,
    /// In progress.
    pub in_progress: u64,
    /// Customers.
    pub customers: u64,
    /// Inactive.
    pub inactive: u64,
    /// Without consent.
    pub no_consent: u64,
}

/// Organisation-wide figures over the last `days` days.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContactSummary {
    /// Period length (the `days` filter, 30 by default).
    pub days: u32,
    /// Contacts of the organisation.
    pub total: u64,
    /// Created in the period.
    pub new_in_period: u64,
    /// Consent given.
    pub with_consent: u64,
    /// Consent not given.
    pub without_consent: u64,
    /// withConsent / total × 100, one decimal.
    pub consent_pct: f64,
    /// Leads created in the period.
    pub leads_new: u64,
    /// Contacts in an IN_PROGRESS stage.
    pub leads_in_progress: u64,
    /// Contacts in a CUSTOMER stage.
    pub customers: u64,
    /// Contacts that entered a CUSTOMER stage in the period.
    pub customers_new_in_period: u64,
    /// Every tag in use, sorted.
    pub tags: Vec<String>,
}

/// `GET /contacts` response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ContactList {
    /// Contacts of this page, newest first.
    pub data: Vec<Contact>,
    /// Pagination.
    pub meta: PageMeta,
    /// Counts per tab.
    pub tabs: ContactTabs,
    /// Figures.
    pub summary: ContactSummary,
}
