//! Shared wire building blocks: timestamps, money, pagination and error bodies.

use std::borrow::Cow;

use chrono::{DateTime, SecondsFormat, TimeZone, Utc};
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A UTC instant written as `2026-11-21T10:00:00.000Z` (always milliseconds), as the spec asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(pub DateTime<Utc>);

impl Timestamp {
    /// From milliseconds since the Unix epoch, the storage form.
    pub fn from_millis(ms: i64) -> Self {
        Timestamp(Utc.timestamp_millis_opt(ms).single().unwrap_or_default())
    }
    /// Milliseconds since the Unix epoch.
    pub fn millis(&self) -> i64 {
        self.0.timestamp_millis()
    }
}

impl std::fmt::Display for Timestamp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.to_rfc3339_opts(SecondsFormat::Millis, true))
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <Cow<'de, str>>::deserialize(d)?;
        DateTime::parse_from_rfc3339(&s)
            .map(|t| Timestamp(t.with_timezone(&Utc)))
            .map_err(serde::de::Error::custom)
    }
}

impl JsonSchema for Timestamp {
    fn schema_name() -> Cow<'static, str> {
        "Timestamp".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string", "format": "date-time" })
    }
}

/// An amount of money in the organisation's currency, held as integer micro-units (1e-6)
/// so sums never drift; on the wire it is a plain JSON number.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Money(pub i64);

impl Money {
    /// Micro-units per currency unit.
    pub const MICROS: i64 = 1_000_000;

    /// Converts a decimal amount, rounding to the nearest micro-unit; `None` when it is not
    /// finite or does not fit.
    pub fn from_decimal(v: f64) -> Option<Money> {
        let micros = (v * Self::MICROS as f64).round();
        (micros.is_finite() && micros.abs() < 9.0e15).then_some(Money(micros as i64))
    }

    /// The amount as a decimal number for the wire.
    pub fn to_decimal(self) -> f64 {
        self.0 as f64 / Self::MICROS as f64
    }
}

impl Serialize for Money {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(self.to_decimal())
    }
}

impl<'de> Deserialize<'de> for Money {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = f64::deserialize(d)?;
        Money::from_decimal(v).ok_or_else(|| serde::de::Error::custom("amount out of range"))
    }
}

impl JsonSchema for Money {
    fn schema_name() -> Cow<'static, str> {
        "Money".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "number" })
    }
}

/// The `meta` of every paginated list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PageMeta {
    /// 1-based page number.
    #[schemars(range(min = 1, max = crate::common::MAX_PAGE))]
    pub page: u64,
    /// Items per page (1–100).
    #[schemars(range(min = 1, max = 100))]
    pub page_size: u64,
    /// Items across all pages.
    pub total: u64,
    /// Number of pages (0 when there are no items).
    pub total_pages: u64,
}

impl PageMeta {
    /// Builds the meta for `total` items.
    pub fn new(page: u64, page_size: u64, total: u64) -> Self {
        PageMeta {
            page,
            page_size,
            total,
            total_pages: total.div_ceil(page_size.max(1)),
        }
    }
}

/// A plain paginated list `{data, meta}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "{T}Page")]
pub struct Page<T> {
    /// The items of this page.
    pub data: Vec<T>,
    /// Where this page sits.
    pub meta: PageMeta,
}

/// The highest `page` any list accepts (100 million rows at `pageSize` 100), so page
/// arithmetic cannot overflow and a deep page is a clear 400.
pub const MAX_PAGE: u64 = 1_000_000;

/// Query of the plain paginated endpoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PageQuery {
    /// 1-based page, default 1.
    #[serde(default = "default_page")]
    #[schemars(range(min = 1, max = crate::common::MAX_PAGE))]
    pub page: u64,
    /// Items per page, 1–100, default 20.
    #[serde(default = "default_page_size")]
    #[schemars(range(min = 1, max = 100))]
    pub page_size: u64,
}

impl Default for PageQuery {
    fn default() -> Self {
        PageQuery {
            page: 1,
            page_size: 20,
        }
    }
}

/// Default page number.
pub fn default_page() -> u64 {
    1
}
/// Default page size.
pub fn default_page_size() -> u64 {
    20
}

/// The validation error body, NestJS/class-validator compatible.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ValidationErrorBody {
    /// Always 400.
    pub status_code: u16,
    /// One message per failed constraint.
    pub message: Vec<String>,
    /// Always `Bad Request`.
    pub error: String,
}

/// The business error body: `{statusCode, code?, message, ...extra}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BusinessErrorBody {
    /// The HTTP status.
    pub status_code: u16,
    /// A stable code when callers need to tell errors apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<crate::enums::ErrorCode>,
    /// For a person; may change.
    pub message: String,
    /// Extra fields of some codes (for example `contactId`, `fullName`).
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

/// The 409 `CONTACT_PHONE_EXISTS`: the business error with the contact that holds the
/// phone, so a caller can link to it or update it instead.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PhoneExistsErrorBody {
    /// 409.
    pub status_code: u16,
    /// `CONTACT_PHONE_EXISTS`.
    pub code: crate::enums::ErrorCode,
    /// For a person.
    pub message: String,
    /// The contact holding the phone.
    pub contact_id: uuid::Uuid,
    /// Its name.
    pub full_name: Option<String>,
}

/// `{deleted: true}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Deleted {
    /// Always true.
    pub deleted: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamp_always_has_millis_and_z() {
        let t = Timestamp::from_millis(1_795_000_000_000);
        assert_eq!(
            serde_json::to_string(&t).unwrap(),
            "\"2026-11-18T11:06:40.000Z\""
        );
        let back: Timestamp = serde_json::from_str("\"2026-11-18T12:06:40.000+01:00\"").unwrap();
        assert_eq!(back, t);
    }

    #[test]
    fn money_round_trips_through_decimal() {
        let m: Money = serde_json::from_str("12.345678").unwrap();
        assert_eq!(m, Money(12_345_678));
        assert_eq!(serde_json::to_string(&Money(1_500_000)).unwrap(), "1.5");
        assert_eq!(Money::from_decimal(f64::NAN), None);
    }

    #[test]
    fn meta_counts_pages() {
        assert_eq!(PageMeta::new(1, 20, 0).total_pages, 0);
        assert_eq!(PageMeta::new(1, 20, 20).total_pages, 1);
        assert_eq!(PageMeta::new(1, 20, 21).total_pages, 2);
    }
}

pub mod bool_word {
    //! An optional boolean written as the words `true` / `false` (a query parameter the
    //! spec types as those strings); a JSON boolean is read too.
    use serde::{Deserialize, Deserializer, Serializer};

    /// `"true"`, `"false"`, `true` or `false`; absent or null is `None`.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Word {
            Bool(bool),
            Text(String),
        }
        match Option::<Word>::deserialize(d)? {
            None => Ok(None),
            Some(Word::Bool(b)) => Ok(Some(b)),
            Some(Word::Text(t)) => match t.as_str() {
                "true" => Ok(Some(true)),
                "false" => Ok(Some(false)),
                other => Err(serde::de::Error::custom(format!(
                    "expected true or false, got {other}"
                ))),
            },
        }
    }

    /// Writes the word.
    pub fn serialize<S: Serializer>(v: &Option<bool>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(b) => s.serialize_str(if *b { "true" } else { "false" }),
            None => s.serialize_none(),
        }
    }
}

/// Deserialises a field that tells "absent" (`None`, via `#[serde(default)]`), "null"
/// (`Some(None)`) and a value (`Some(Some(v))`) apart, as PATCH bodies need.
pub mod double_option {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    /// Present → `Some(..)`, whatever the value (null included).
    pub fn deserialize<'de, T, D>(d: D) -> Result<Option<Option<T>>, D::Error>
    where
        T: Deserialize<'de>,
        D: Deserializer<'de>,
    {
        Option::<T>::deserialize(d).map(Some)
    }

    /// Writes the inner option (use with `skip_serializing_if = "Option::is_none"`).
    pub fn serialize<T, S>(v: &Option<Option<T>>, s: S) -> Result<S::Ok, S::Error>
    where
        T: Serialize,
        S: Serializer,
    {
        match v {
            Some(inner) => inner.serialize(s),
            None => s.serialize_none(),
        }
    }
}
