//! Validation schemas of the operator API bodies.

use std::sync::LazyLock;

use wm_types::admin::{
    CreateApiKey, CreateChannel, CreateDeal, CreateLifecycleStage, CreateOrganization, CreateUser,
    UpdateDeal,
};
use wm_types::enums::{ChannelType, DealStatus, Scope, StageCategory};

use crate::validate::kinds::*;
use crate::validate::{Kind, Schema, Validated};

macro_rules! schema {
    ($ty:ty, $name:ident, $build:expr) => {
        static $name: LazyLock<Schema> = LazyLock::new(|| $build);
        impl Validated for $ty {
            fn schema() -> &'static Schema {
                &$name
            }
        }
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
                _ =>
                    Some("must be an IANA time zone such as UTC or America/Mexico_City".to_owned()),
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
