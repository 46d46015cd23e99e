//! The validator's declarations as they were written by hand before they were derived
//! from the wire types, and a comparison of both over a generated corpus of bodies: the
//! proof that deriving changed no message and no order. Temporary: removed once it passed.
#![allow(dead_code, unused_imports, unused_macros, clippy::all)]

/// Shorthands for building schemas.
pub mod kinds {
    use crate::validate::Kind;

    /// Any string.
    pub fn string() -> Kind {
        Kind::Str {
            min: None,
            max: None,
            not_blank: false,
        }
    }
    /// A string of at most `n` characters.
    pub fn string_max(n: usize) -> Kind {
        Kind::Str {
            min: None,
            max: Some(n),
            not_blank: false,
        }
    }
    /// A string of `min..=max` characters.
    pub fn string_len(min: usize, max: usize) -> Kind {
        Kind::Str {
            min: Some(min),
            max: Some(max),
            not_blank: false,
        }
    }
    /// A string with at least one non-blank character and at most `max` characters.
    pub fn text(max: Option<usize>) -> Kind {
        Kind::Str {
            min: None,
            max,
            not_blank: true,
        }
    }
    /// One of the given strings.
    pub fn one_of<S: ToString>(values: &[S]) -> Kind {
        Kind::OneOf(values.iter().map(ToString::to_string).collect())
    }
    /// An integer within bounds.
    pub fn int(min: Option<i64>, max: Option<i64>) -> Kind {
        Kind::Int { min, max }
    }
    /// An array of `item` with a maximum size.
    pub fn array(item: Kind, max: Option<usize>) -> Kind {
        Kind::Array {
            item: Box::new(item),
            min: None,
            max,
        }
    }
    /// An array of `item` with both bounds.
    pub fn array_len(item: Kind, min: usize, max: usize) -> Kind {
        Kind::Array {
            item: Box::new(item),
            min: Some(min),
            max: Some(max),
        }
    }
    /// A nested object.
    pub fn object(schema: super::Schema) -> Kind {
        Kind::Object(Box::new(schema))
    }
}

/// The highest page.
pub const MAX_PAGE: i64 = wm_types::common::MAX_PAGE as i64;
/// The `page` and `pageSize` fields every paginated query has.
pub fn with_paging(schema: Schema) -> Schema {
    schema
        .optional("page", kinds::int(Some(1), Some(MAX_PAGE)))
        .optional("pageSize", kinds::int(Some(1), Some(100)))
}

pub mod contacts {
    use super::kinds::*;
    use super::with_paging;
    use crate::validate::{Kind, Schema};
    use chrono::NaiveDate;
    use serde_json::Value;
    use std::sync::LazyLock;
    use wm_types::automations::*;
    use wm_types::campaigns::*;
    use wm_types::enums::*;
    use wm_types::events::EventKind;
    use wm_types::imports::*;
    use wm_types::webhooks::*;
    macro_rules! schema {
        ($ty:ty, $name:ident, $build:expr) => {
            pub static $name: LazyLock<Schema> = LazyLock::new(|| $build);
        };
    }
    use crate::contacts::*;
    use crate::contacts::{MAX_NAME, MAX_SEARCH};
    use crate::phone::Phone;
    fn consent_schema() -> Schema {
        Schema::new()
            .required("given", Kind::Bool)
            .optional("at", Kind::DateTime)
            .optional("how", one_of(&ConsentHow::wire_values()))
    }

    fn phone_kind() -> Kind {
        Kind::Custom(|v| match v.as_str() {
            Some(s) if s.chars().count() > MAX_PHONE => Some(format!(
                "must be shorter than or equal to {MAX_PHONE} characters"
            )),
            Some(s) if Phone::parse(s).is_ok() => None,
            _ => Some(
                "must be a phone number in international format (+ followed by 6 to 15 digits)"
                    .to_owned(),
            ),
        })
    }

    /// The fields POST and PATCH share; `nullable` says whether `null` clears a field.
    fn contact_fields(patch: bool) -> Schema {
        let s = Schema::new();
        let opt = |s: Schema, name, kind| {
            if patch {
                s.optional_not_null(name, kind)
            } else {
                s.optional(name, kind)
            }
        };
        let s = s
            .optional("fullName", string_max(MAX_NAME))
            .optional("primaryPhone", phone_kind())
            .optional("primaryEmail", Kind::Email)
            .optional("company", string_max(MAX_NAME))
            .optional("country", string_max(2))
            .optional("lifecycleStageId", Kind::Uuid)
            .optional("ownerId", Kind::Uuid);
        let s = opt(s, "source", one_of(&ContactSource::wire_values()));
        let s = opt(s, "optedOut", Kind::Bool);
        let s = opt(s, "consent", object(consent_schema()));
        opt(
            s,
            "tags",
            array(string_max(crate::tags::MAX_TAG_LEN), Some(MAX_TAGS)),
        )
    }

    pub static CREATE: LazyLock<Schema> =
        LazyLock::new(|| contact_fields(false).optional("note", string_max(MAX_NOTE)));
    pub static UPDATE: LazyLock<Schema> = LazyLock::new(|| contact_fields(true));
    pub static BULK: LazyLock<Schema> = LazyLock::new(|| {
        Schema::new()
            .required("ids", array(Kind::Uuid, Some(MAX_IDS)))
            .optional_not_null("lifecycleStageId", Kind::Uuid)
            .optional_not_null(
                "addTags",
                array(string_max(crate::tags::MAX_TAG_LEN), Some(MAX_ADD_TAGS)),
            )
            .optional("ownerId", Kind::Uuid)
    });
    pub static IDENTITY: LazyLock<Schema> = LazyLock::new(|| {
        Schema::new()
            .required("channelType", one_of(&ChannelType::wire_values()))
            .required("externalId", text(Some(255)))
    });
    pub static NOTE: LazyLock<Schema> = LazyLock::new(|| {
        Schema::new().required(
            "body",
            Kind::Str {
                min: Some(1),
                max: None,
                not_blank: true,
            },
        )
    });
    pub static LIST: LazyLock<Schema> = LazyLock::new(|| {
        with_paging(Schema::new())
            .optional(
                "tab",
                one_of(&[
                    "all",
                    "leads",
                    "in_progress",
                    "customers",
                    "inactive",
                    "no_consent",
                ]),
            )
            .optional("lifecycleStageId", Kind::Uuid)
            .optional(
                "ownerId",
                Kind::Custom(|v| match v.as_str() {
                    Some("none") => None,
                    Some(s) if crate::validate::is_uuid(s) && s == s.to_lowercase() => None,
                    _ => Some("must be the word none or a lowercase UUID".to_owned()),
                }),
            )
            .optional("source", one_of(&ContactSource::wire_values()))
            .optional("channelType", one_of(&ChannelType::wire_values()))
            .optional("tag", string_max(crate::tags::MAX_TAG_LEN))
            .optional("q", string_max(MAX_SEARCH))
            .optional("search", string_max(MAX_SEARCH))
            .optional("days", Kind::IntOneOf(vec![7, 30, 90]))
            .optional("ids", array(Kind::Uuid, Some(MAX_IDS)))
            .list_param("ids")
    });
    pub static TIMELINE: LazyLock<Schema> = LazyLock::new(|| {
        with_paging(Schema::new()).optional(
            "type",
            one_of(&["all", "conversations", "campaigns", "notes"]),
        )
    });
}

pub mod campaigns {
    use super::kinds::*;
    use super::with_paging;
    use crate::validate::{Kind, Schema};
    use chrono::NaiveDate;
    use serde_json::Value;
    use std::sync::LazyLock;
    use wm_types::automations::*;
    use wm_types::campaigns::*;
    use wm_types::enums::*;
    use wm_types::events::EventKind;
    use wm_types::imports::*;
    use wm_types::webhooks::*;
    macro_rules! schema {
        ($ty:ty, $name:ident, $build:expr) => {
            pub static $name: LazyLock<Schema> = LazyLock::new(|| $build);
        };
    }
    use crate::campaigns::*;
    pub const WHEN: [&str; 3] = ["now", "scheduled", "staggered"];
    pub const TABS: [&str; 6] = [
        "all",
        "sending",
        "scheduled",
        "drafts",
        "errors",
        "finished",
    ];
    pub const RECIPIENT_FILTERS: [&str; 6] =
        ["all", "delivered", "read", "replied", "failed", "pending"];
    pub const PROVIDER_STATUSES: [&str; 3] = ["DELIVERED", "READ", "FAILED"];
    pub const BATCH_SIZE: (i64, i64) = (10, 5000);
    pub const BATCH_INTERVAL_MIN: (i64, i64) = (1, 1440);
    fn object_kind() -> Kind {
        Kind::Custom(|v| match v {
            Value::Object(_) => None,
            _ => Some("must be an object".to_owned()),
        })
    }

    schema!(
        CreateCampaign,
        CREATE,
        Schema::new()
            .required("name", string_len(MIN_NAME, MAX_NAME))
            .required("phoneNumberId", Kind::Uuid)
            .required("templateId", Kind::Uuid)
            .optional("scheduledAt", Kind::DateTime)
            .optional("variables", object_kind())
    );
    schema!(
        Audience,
        AUDIENCE,
        Schema::new()
            .optional("contactIds", array(Kind::Uuid, Some(MAX_CONTACT_IDS)))
            .optional("lifecycleStageId", Kind::Uuid)
            .optional("tag", string_max(MAX_TAG))
            .optional("all", Kind::Bool)
    );
    schema!(
        SendCampaign,
        SEND,
        Schema::new()
            .optional("when", one_of(&WHEN))
            .optional("scheduledAt", Kind::DateTime)
            .optional("batchSize", int(Some(BATCH_SIZE.0), Some(BATCH_SIZE.1)))
            .optional(
                "batchIntervalMin",
                int(Some(BATCH_INTERVAL_MIN.0), Some(BATCH_INTERVAL_MIN.1))
            )
    );
    schema!(
        ListCampaignsQuery,
        LIST,
        with_paging(Schema::new())
            .optional("tab", one_of(&TABS))
            .optional("category", one_of(&TemplateCategory::wire_values()))
            .optional("phoneNumberId", Kind::Uuid)
            .optional("q", string_max(MAX_SEARCH))
            .optional("days", int(Some(1), Some(365)))
    );
    schema!(
        RecipientsQuery,
        RECIPIENTS,
        with_paging(Schema::new()).optional("filter", one_of(&RECIPIENT_FILTERS))
    );
    /// Messages per second a number may be paced at (the Cloud API's ceiling is 1,000).
    pub const MPS: (i64, i64) = (1, 1000);

    schema!(
        CreatePhoneNumber,
        PHONE_NUMBER,
        Schema::new()
            .required("numberE164", Kind::Phone { max: None })
            .required("displayName", string_len(1, 100))
            .optional("qualityRating", one_of(&QualityRating::wire_values()))
            .optional("platformPhoneNumberId", string_len(1, 64))
            .optional("wabaId", string_len(1, 64))
            .optional("accessToken", string_len(1, 4096))
            .optional("mps", int(Some(MPS.0), Some(MPS.1)))
    );
    schema!(
        UpdatePhoneNumber,
        UPDATE_PHONE_NUMBER,
        Schema::new()
            .optional_not_null("displayName", string_len(1, 100))
            .optional_not_null("qualityRating", one_of(&QualityRating::wire_values()))
            .optional("platformPhoneNumberId", string_len(1, 64))
            .optional("wabaId", string_len(1, 64))
            .optional("accessToken", string_len(1, 4096))
            .optional("mps", int(Some(MPS.0), Some(MPS.1)))
    );
    schema!(
        CreateTemplate,
        TEMPLATE,
        Schema::new()
            .required("name", string_len(1, 100))
            .required("category", one_of(&TemplateCategory::wire_values()))
            .required("language", string_len(2, 15))
            .required("bodyText", string_len(1, 1024))
            .optional("status", one_of(&TemplateStatus::wire_values()))
    );
    schema!(
        TopUp,
        TOP_UP,
        Schema::new().required(
            "amount",
            Kind::Number {
                min: Some(0.000001),
                max: Some(1e9)
            }
        )
    );
    schema!(
        ProviderEvent,
        PROVIDER_EVENT,
        Schema::new()
            .required("providerMessageId", string_len(1, 200))
            .required("status", one_of(&PROVIDER_STATUSES))
            .optional("error", string_max(500))
    );
    schema!(
        Inbound,
        INBOUND,
        Schema::new()
            .required("channelType", one_of(&ChannelType::wire_values()))
            .required("externalId", text(Some(255)))
            .optional("fullName", string_max(crate::contacts::MAX_NAME))
    );

    pub static SET_RATES: LazyLock<Schema> = LazyLock::new(|| {
        let money = || Kind::Number {
            min: Some(0.0),
            max: Some(1000.0),
        };
        Schema::new().required(
            "markets",
            Kind::Array {
                item: Box::new(object(
                    Schema::new()
                        .required("market", string_len(2, 20))
                        .required("label", string_len(1, 100))
                        .required("marketing", money())
                        .required("utility", money())
                        .required("authentication", money())
                        .required(
                            "effectiveFrom",
                            Kind::Custom(|v| {
                                match v
                                    .as_str()
                                    .map(|s| chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d"))
                                {
                                    Some(Ok(_)) => None,
                                    _ => Some("must be a date (YYYY-MM-DD)".to_owned()),
                                }
                            }),
                        ),
                )),
                min: None,
                max: Some(500),
            },
        )
    });
}

pub mod admin {
    use super::kinds::*;
    use super::with_paging;
    use crate::validate::{Kind, Schema};
    use chrono::NaiveDate;
    use serde_json::Value;
    use std::sync::LazyLock;
    use wm_types::automations::*;
    use wm_types::campaigns::*;
    use wm_types::enums::*;
    use wm_types::events::EventKind;
    use wm_types::imports::*;
    use wm_types::webhooks::*;
    macro_rules! schema {
        ($ty:ty, $name:ident, $build:expr) => {
            pub static $name: LazyLock<Schema> = LazyLock::new(|| $build);
        };
    }
    schema!(
        CreateOrganization,
        ORG,
        Schema::new()
            .required("name", string_len(1, 160))
            .optional(
                "currency",
                Kind::Custom(|v| match v.as_str() {
                    Some(s) if s.len() == 3 && s.bytes().all(|b| b.is_ascii_uppercase()) => None,
                    _ => Some("must be a 3-letter ISO 4217 code".to_owned()),
                })
            )
            .optional(
                "timezone",
                Kind::Custom(|v| match v.as_str() {
                    Some(s) if crate::time::is_timezone(s) => None,
                    _ => Some(
                        "must be an IANA time zone such as UTC or America/Mexico_City".to_owned()
                    ),
                })
            )
            .optional("includedUtilityMessages", int(Some(0), Some(10_000_000)))
    );
    schema!(
        CreateUser,
        USER,
        Schema::new()
            .required("fullName", string_len(1, 160))
            .required("email", Kind::Email)
    );
    schema!(
        CreateApiKey,
        KEY,
        Schema::new()
            .required("name", string_len(1, 120))
            .required("userId", Kind::Uuid)
            .required(
                "scopes",
                Kind::Array {
                    item: Box::new(one_of(&Scope::wire_values())),
                    min: Some(1),
                    max: Some(Scope::ALL.len() * 2),
                }
            )
            .optional("expiresAt", Kind::DateTime)
    );
    schema!(
        CreateLifecycleStage,
        STAGE,
        Schema::new()
            .required("name", string_len(1, 80))
            .required("order", int(Some(0), Some(10_000)))
            .required("category", one_of(&StageCategory::wire_values()))
    );
    schema!(
        CreateChannel,
        CHANNEL,
        Schema::new().required("type", one_of(&ChannelType::wire_values()))
    );
    schema!(
        CreateDeal,
        DEAL,
        Schema::new()
            .required("contactId", Kind::Uuid)
            .required("title", string_len(1, 200))
            .required(
                "value",
                Kind::Number {
                    min: Some(0.0),
                    max: Some(1e12)
                }
            )
    );
    schema!(
        UpdateDeal,
        DEAL_PATCH,
        Schema::new().required("status", one_of(&DealStatus::wire_values()))
    );
}

pub mod automations {
    use super::kinds::*;
    use super::with_paging;
    use crate::validate::{Kind, Schema};
    use chrono::NaiveDate;
    use serde_json::Value;
    use std::sync::LazyLock;
    use wm_types::automations::*;
    use wm_types::campaigns::*;
    use wm_types::enums::*;
    use wm_types::events::EventKind;
    use wm_types::imports::*;
    use wm_types::webhooks::*;
    macro_rules! schema {
        ($ty:ty, $name:ident, $build:expr) => {
            pub static $name: LazyLock<Schema> = LazyLock::new(|| $build);
        };
    }
    use crate::automations::*;
    fn step_schema() -> Kind {
        object(
            Schema::new()
                .required(
                    "type",
                    one_of(&wm_types::automations::StepType::wire_values()),
                )
                .required(
                    "config",
                    object(
                        Schema::new()
                            .required("kind", one_of(&StepKind::wire_values()))
                            .required(
                                "value",
                                Kind::Custom(|v| {
                                    (v.is_null()).then(|| "should not be empty".to_owned())
                                }),
                            ),
                    ),
                ),
        )
    }

    fn object_kind() -> Kind {
        Kind::Custom(|v| (!v.is_object()).then(|| "must be an object".to_owned()))
    }

    /// 1 to [`MAX_STEPS`] steps, each checked on its own.
    fn steps_kind() -> Kind {
        Kind::Array {
            item: Box::new(step_schema()),
            min: Some(1),
            max: Some(MAX_STEPS),
        }
    }

    pub static CREATE: LazyLock<Schema> = LazyLock::new(|| {
        Schema::new()
            .required("name", string_len(1, 120))
            .optional(
                "status",
                one_of(&wm_types::automations::AutomationStatus::wire_values()),
            )
            .required("triggerType", one_of(&TriggerType::wire_values()))
            .optional("triggerConfig", object_kind())
            .required("steps", steps_kind())
            .optional("templateKey", string_max(120))
            .required("createdByUserId", Kind::Uuid)
    });
    pub static UPDATE: LazyLock<Schema> = LazyLock::new(|| {
        Schema::new()
            .optional_not_null("name", string_len(1, 120))
            .optional_not_null(
                "status",
                one_of(&wm_types::automations::AutomationStatus::wire_values()),
            )
            .optional_not_null("triggerType", one_of(&TriggerType::wire_values()))
            .optional_not_null("triggerConfig", object_kind())
            .optional_not_null("steps", steps_kind())
            .optional("templateKey", string_max(120))
    });
    pub static LIST: LazyLock<Schema> = LazyLock::new(|| {
        Schema::new()
            .optional("tab", one_of(&["all", "active", "paused", "drafts"]))
            .optional("trigger", one_of(&TriggerType::wire_values()))
            .optional("q", string_max(120))
            .optional("includeArchived", one_of(&["true", "false"]))
    });
    pub static LOGS: LazyLock<Schema> = LazyLock::new(|| {
        with_paging(Schema::new()).optional(
            "result",
            one_of(&[
                "all",
                "completed",
                "waiting",
                "condition",
                "skipped",
                "failed",
            ]),
        )
    });
}

pub mod webhooks {
    use super::kinds::*;
    use super::with_paging;
    use crate::validate::{Kind, Schema};
    use chrono::NaiveDate;
    use serde_json::Value;
    use std::sync::LazyLock;
    use wm_types::automations::*;
    use wm_types::campaigns::*;
    use wm_types::enums::*;
    use wm_types::events::EventKind;
    use wm_types::imports::*;
    use wm_types::webhooks::*;
    macro_rules! schema {
        ($ty:ty, $name:ident, $build:expr) => {
            pub static $name: LazyLock<Schema> = LazyLock::new(|| $build);
        };
    }
    fn events_kind() -> Kind {
        Kind::Array {
            item: Box::new(one_of(&EventKind::wire_values())),
            min: Some(1),
            max: Some(EventKind::ALL.len() * 2),
        }
    }

    pub static CREATE: LazyLock<Schema> = LazyLock::new(|| {
        Schema::new()
            .required("url", string_len(1, 2048))
            .required("events", events_kind())
            .optional("description", string_max(500))
    });
    pub static UPDATE: LazyLock<Schema> = LazyLock::new(|| {
        Schema::new()
            .optional_not_null("url", string_len(1, 2048))
            .optional_not_null("events", events_kind())
            .optional("description", string_max(500))
            .optional_not_null("status", one_of(&WebhookStatus::wire_values()))
    });
}

pub mod conversations {
    use super::kinds::*;
    use super::with_paging;
    use crate::validate::{Kind, Schema};
    use chrono::NaiveDate;
    use serde_json::Value;
    use std::sync::LazyLock;
    use wm_types::automations::*;
    use wm_types::campaigns::*;
    use wm_types::enums::*;
    use wm_types::events::EventKind;
    use wm_types::imports::*;
    use wm_types::webhooks::*;
    macro_rules! schema {
        ($ty:ty, $name:ident, $build:expr) => {
            pub static $name: LazyLock<Schema> = LazyLock::new(|| $build);
        };
    }
    pub static LIST: LazyLock<Schema> = LazyLock::new(|| {
        with_paging(Schema::new())
            .optional("filter", one_of(&["all", "unassigned", "mine", "resolved"]))
            .optional("status", one_of(&ConversationStatus::wire_values()))
            .optional("channelId", Kind::Uuid)
            .optional("channelType", one_of(&ChannelType::wire_values()))
            .optional("contactId", Kind::Uuid)
            .optional("assignedToUserId", Kind::Uuid)
            .optional("q", string_max(100))
    });
    pub static UPDATE: LazyLock<Schema> = LazyLock::new(|| {
        Schema::new()
            .optional_not_null("status", one_of(&ConversationStatus::wire_values()))
            .optional("assignedToUserId", Kind::Uuid)
    });
}

pub mod reports {
    use super::kinds::*;
    use super::with_paging;
    use crate::validate::{Kind, Schema};
    use chrono::NaiveDate;
    use serde_json::Value;
    use std::sync::LazyLock;
    use wm_types::automations::*;
    use wm_types::campaigns::*;
    use wm_types::enums::*;
    use wm_types::events::EventKind;
    use wm_types::imports::*;
    use wm_types::webhooks::*;
    macro_rules! schema {
        ($ty:ty, $name:ident, $build:expr) => {
            pub static $name: LazyLock<Schema> = LazyLock::new(|| $build);
        };
    }
    fn date_kind() -> Kind {
        Kind::Custom(
            |v| match v.as_str().map(|s| NaiveDate::parse_from_str(s, "%Y-%m-%d")) {
                Some(Ok(_)) => None,
                _ => Some("must be a date (YYYY-MM-DD)".to_owned()),
            },
        )
    }

    pub static QUERY: LazyLock<Schema> = LazyLock::new(|| {
        Schema::new()
            .optional("from", date_kind())
            .optional("to", date_kind())
    });
}

pub mod imports {
    use super::kinds::*;
    use super::with_paging;
    use crate::validate::{Kind, Schema};
    use chrono::NaiveDate;
    use serde_json::Value;
    use std::sync::LazyLock;
    use wm_types::automations::*;
    use wm_types::campaigns::*;
    use wm_types::enums::*;
    use wm_types::events::EventKind;
    use wm_types::imports::*;
    use wm_types::webhooks::*;
    macro_rules! schema {
        ($ty:ty, $name:ident, $build:expr) => {
            pub static $name: LazyLock<Schema> = LazyLock::new(|| $build);
        };
    }
    use crate::imports::*;
    fn mapping_kind() -> Kind {
        Kind::Custom(|v| {
            let Some(map) = v.as_object() else {
                return Some("must be an object".to_owned());
            };
            let mut seen = Vec::new();
            for (column, field) in map {
                match field.as_str() {
                    Some(f) if FIELDS.contains(&f) => {
                        if seen.contains(&f) {
                            return Some(format!("maps more than one column to {f}"));
                        }
                        seen.push(f);
                    }
                    _ => {
                        return Some(format!(
                            "value of column {column} must be one of the following values: {}",
                            FIELDS.join(", ")
                        ));
                    }
                }
            }
            None
        })
    }

    pub static OPTIONS: LazyLock<Schema> = LazyLock::new(|| {
        Schema::new()
            .optional("format", one_of(&ImportFormat::wire_values()))
            .optional("dedupe", one_of(&DedupeMode::wire_values()))
            .optional("mapping", mapping_kind())
            .optional("tagSeparator", string_len(1, MAX_TAG_SEPARATOR))
    });
}

/// The old-vs-new comparison.
mod compare {
    use serde_json::{Map, Value, json};

    use crate::validate::{Kind, Schema, Validated, parse_value};

    const UUID: &str = "67e55044-10b1-426f-9247-bb680e5fe0c8";

    fn strings() -> Vec<Value> {
        [
            "",
            "  ",
            "x",
            "NOPE",
            UUID,
            "67E55044-10B1-426F-9247-BB680E5FE0C8",
            "ana@example.com",
            "ana@localhost",
            "2026-01-01",
            "2026-13-01",
            "2026-01-01T10:00:00Z",
            "+5215512345678",
            "+52 (55) 1234-5678 0000000000000000000000000000",
            "none",
            "USD",
            "usd",
            "UTC",
            "America/Mexico_City",
            "Mars/Olympus",
            "a\u{0}b",
            "all",
            "true",
            "now",
        ]
        .into_iter()
        .map(Value::from)
        .collect()
    }

    fn generic() -> Vec<Value> {
        let mut v = vec![
            Value::Null,
            json!(0),
            json!(-1),
            json!(1.5),
            json!(true),
            json!([]),
            json!({}),
            json!(7),
            json!(30),
            json!(1_000_001),
            json!(1e12 + 1.0),
            json!(["a", 1]),
            json!({"a": 1}),
        ];
        v.extend(strings());
        v
    }

    /// A value that passes `kind` (or the best guess), to build bodies that reach serde.
    fn good(kind: &Kind) -> Value {
        match kind {
            Kind::Str { min, .. } => Value::from("x".repeat(min.unwrap_or(1).max(1))),
            Kind::Email => json!("ana@example.com"),
            Kind::Uuid => json!(UUID),
            Kind::Bool => json!(true),
            Kind::Int { min, max } => json!(min.unwrap_or(0).min(max.unwrap_or(i64::MAX))),
            Kind::Number { min, .. } => json!(min.unwrap_or(1.0)),
            Kind::OneOf(v) => json!(v[0]),
            Kind::IntOneOf(v) => json!(v[0]),
            Kind::DateTime => json!("2026-01-01T10:00:00Z"),
            Kind::Date => json!("2026-01-01"),
            Kind::Phone { .. } => json!("+5215512345678"),
            Kind::Array { item, min, .. } => {
                Value::Array(vec![good(item); min.unwrap_or(1).max(1)])
            }
            Kind::Object(s) => good_body(s),
            Kind::Map => json!({}),
            Kind::Any => json!("x"),
            Kind::Custom(check) => generic()
                .into_iter()
                .find(|v| check(v).is_none())
                .unwrap_or(Value::Null),
        }
    }

    fn good_body(s: &Schema) -> Value {
        Value::Object(
            s.fields
                .iter()
                .filter(|f| f.required)
                .map(|f| (f.name.to_string(), good(&f.kind)))
                .collect(),
        )
    }

    fn samples(kind: &Kind) -> Vec<Value> {
        let mut v = generic();
        let lens = |n: usize| [n.saturating_sub(1), n, n + 1];
        match kind {
            Kind::Str { .. } | Kind::Phone { .. } => {
                let (min, max) = match kind {
                    Kind::Str { min, max, .. } => (*min, *max),
                    Kind::Phone { max } => (None, *max),
                    _ => (None, None),
                };
                for n in min.iter().chain(max.iter()).flat_map(|n| lens(*n)) {
                    v.push(Value::from("x".repeat(n)));
                    v.push(Value::from(format!("+{}", "5".repeat(n.saturating_sub(1)))));
                }
            }
            Kind::Int { min, max } => {
                for n in min.iter().chain(max.iter()) {
                    v.extend([json!(n - 1), json!(n), json!(n + 1)]);
                }
            }
            Kind::Number { min, max } => {
                for n in min.iter().chain(max.iter()) {
                    v.extend([json!(n - 0.0000001), json!(n), json!(n + 1.0)]);
                }
            }
            Kind::OneOf(values) => {
                v.extend(values.iter().map(|s| json!(s)));
                v.extend(values.iter().map(|s| json!(s.to_lowercase())));
            }
            Kind::IntOneOf(values) => v.extend(values.iter().map(|n| json!(n))),
            Kind::Array { item, min, max } => {
                v.extend(samples(item).into_iter().map(|s| json!([s])));
                for n in min.iter().chain(max.iter()).flat_map(|n| lens(*n)) {
                    v.push(Value::Array(vec![good(item); n]));
                }
            }
            Kind::Object(s) => {
                v.push(good_body(s));
                for (i, f) in s.fields.iter().enumerate() {
                    for sample in samples(&f.kind).into_iter().take(40) {
                        let mut b = good_body(s);
                        b[f.name.as_ref()] = sample;
                        if i % 2 == 0 {
                            b["zz"] = json!(1);
                        }
                        v.push(b);
                    }
                }
            }
            _ => {}
        }
        v
    }

    fn bodies(s: &Schema) -> Vec<Value> {
        let mut out = vec![json!({}), json!([]), json!("x"), good_body(s)];
        out.push(json!({"zzz": 1, "aaa": 2, "mmm\u{0}": 3, "b": "\u{0}"}));
        for f in &s.fields {
            for sample in samples(&f.kind) {
                let mut alone = Map::new();
                alone.insert(f.name.to_string(), sample.clone());
                out.push(Value::Object(alone));
                let mut b = good_body(s);
                b[f.name.as_ref()] = sample;
                out.push(b);
            }
        }
        // Every field wrong at once: the order of the messages.
        for sample in generic() {
            out.push(Value::Object(
                s.fields
                    .iter()
                    .map(|f| (f.name.to_string(), sample.clone()))
                    .collect(),
            ));
        }
        out
    }

    fn queries(s: &Schema) -> Vec<Vec<(String, String)>> {
        let raws = [
            "1", "0", "-1", "x", "a,b", "101", "none", "true", "all", "7", UUID,
        ];
        let mut out = Vec::new();
        for f in &s.fields {
            for r in raws {
                let name = f.name.to_string();
                out.push(vec![(name.clone(), r.to_owned())]);
                out.push(vec![(name.clone(), r.to_owned()), (name, r.to_owned())]);
            }
        }
        out.push(vec![("zzz".into(), "1".into()), ("aaa".into(), "2".into())]);
        out
    }

    /// Compares the old schema with `T`'s derived one over the corpus; returns (cases, diffs).
    pub fn compare<T: Validated>(name: &str, old: &Schema) -> (usize, usize, Vec<String>) {
        let new = T::schema();
        let outcome = |s: &Schema, v: Value| -> (Result<(), Vec<String>>, Value) {
            let mut checked = v.clone();
            let _ = s.check(&mut checked);
            (parse_value::<T>(s, v).map(|_| ()), checked)
        };
        let mut diffs = Vec::new();
        let mut cases = 0;
        let mut improved = 0;
        for body in bodies(old) {
            cases += 1;
            let (a, b) = (outcome(old, body.clone()), outcome(new, body.clone()));
            if a != b && !words_for_serde_text(&a.0, &b.0) {
                diffs.push(format!("{name} {body}\n  old {:?}\n  new {:?}", a.0, b.0));
            } else if a != b {
                improved += 1;
            }
        }
        for q in queries(old) {
            cases += 1;
            let (qa, qb) = (old.query_value(&q), new.query_value(&q));
            let (a, b) = (outcome(old, qa.clone()), outcome(new, qb.clone()));
            if qa != qb || a != b {
                diffs.push(format!(
                    "{name} ?{q:?}\n  old {qa} {:?}\n  new {qb} {:?}",
                    a.0, b.0
                ));
            }
        }
        (cases, improved, diffs)
    }

    /// Whether the only difference is that a body the old schema let through to serde (whose
    /// message names no field) is now refused by the validator, in its words.
    fn words_for_serde_text(old: &Result<(), Vec<String>>, new: &Result<(), Vec<String>>) -> bool {
        let serde = [
            "invalid type",
            "invalid value",
            "missing field",
            "unknown variant",
        ];
        matches!((old, new), (Err(o), Err(_)) if o.len() == 1 && serde.iter().any(|p| o[0].starts_with(p)))
    }
}

#[test]
fn derived_schemas_answer_as_the_hand_written_ones() {
    use compare::compare;
    use wm_types::{admin::*, automations::*, campaigns::*, contacts::*, conversations::*};
    use wm_types::{imports::ImportOptions, reports::ReportQuery, webhooks::*};
    let runs = [
        compare::<CreateContact>("CreateContact", &contacts::CREATE),
        compare::<UpdateContact>("UpdateContact", &contacts::UPDATE),
        compare::<BulkUpdateContacts>("BulkUpdateContacts", &contacts::BULK),
        compare::<CreateIdentity>("CreateIdentity", &contacts::IDENTITY),
        compare::<CreateNote>("CreateNote", &contacts::NOTE),
        compare::<ListContactsQuery>("ListContactsQuery", &contacts::LIST),
        compare::<TimelineQuery>("TimelineQuery", &contacts::TIMELINE),
        compare::<CreateCampaign>("CreateCampaign", &campaigns::CREATE),
        compare::<Audience>("Audience", &campaigns::AUDIENCE),
        compare::<SendCampaign>("SendCampaign", &campaigns::SEND),
        compare::<ListCampaignsQuery>("ListCampaignsQuery", &campaigns::LIST),
        compare::<RecipientsQuery>("RecipientsQuery", &campaigns::RECIPIENTS),
        compare::<CreatePhoneNumber>("CreatePhoneNumber", &campaigns::PHONE_NUMBER),
        compare::<UpdatePhoneNumber>("UpdatePhoneNumber", &campaigns::UPDATE_PHONE_NUMBER),
        compare::<CreateTemplate>("CreateTemplate", &campaigns::TEMPLATE),
        compare::<TopUp>("TopUp", &campaigns::TOP_UP),
        compare::<ProviderEvent>("ProviderEvent", &campaigns::PROVIDER_EVENT),
        compare::<Inbound>("Inbound", &campaigns::INBOUND),
        compare::<SetRates>("SetRates", &campaigns::SET_RATES),
        compare::<CreateOrganization>("CreateOrganization", &admin::ORG),
        compare::<CreateUser>("CreateUser", &admin::USER),
        compare::<CreateApiKey>("CreateApiKey", &admin::KEY),
        compare::<CreateLifecycleStage>("CreateLifecycleStage", &admin::STAGE),
        compare::<CreateChannel>("CreateChannel", &admin::CHANNEL),
        compare::<CreateDeal>("CreateDeal", &admin::DEAL),
        compare::<UpdateDeal>("UpdateDeal", &admin::DEAL_PATCH),
        compare::<CreateAutomation>("CreateAutomation", &automations::CREATE),
        compare::<UpdateAutomation>("UpdateAutomation", &automations::UPDATE),
        compare::<ListAutomationsQuery>("ListAutomationsQuery", &automations::LIST),
        compare::<LogsQuery>("LogsQuery", &automations::LOGS),
        compare::<CreateWebhook>("CreateWebhook", &webhooks::CREATE),
        compare::<UpdateWebhook>("UpdateWebhook", &webhooks::UPDATE),
        compare::<ListConversationsQuery>("ListConversationsQuery", &conversations::LIST),
        compare::<UpdateConversation>("UpdateConversation", &conversations::UPDATE),
        compare::<ReportQuery>("ReportQuery", &reports::QUERY),
        compare::<ImportOptions>("ImportOptions", &imports::OPTIONS),
        compare::<wm_types::PageQuery>("PageQuery", &PAGING),
    ];
    let cases: usize = runs.iter().map(|r| r.0).sum();
    let improved: usize = runs.iter().map(|r| r.1).sum();
    let diffs: Vec<&String> = runs.iter().flat_map(|r| r.2.iter()).collect();
    let out =
        std::env::var("WM_COMPARE_OUT").unwrap_or_else(|_| "/tmp/validate-compare.txt".into());
    let _ = std::fs::write(
        &out,
        diffs.iter().map(|d| format!("{d}\n")).collect::<String>(),
    );
    eprintln!(
        "{} schemas, {cases} cases, {improved} where serde's text became the validator's words, {} other differences (listed in {out})",
        runs.len(),
        diffs.len()
    );
    assert!(diffs.is_empty());
}

static PAGING: std::sync::LazyLock<Schema> =
    std::sync::LazyLock::new(|| with_paging(Schema::new()));
use super::Schema;
