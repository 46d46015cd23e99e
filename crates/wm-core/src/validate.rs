//! A small declarative validator that answers in class-validator's words.
//!
//! Bodies and queries are checked as JSON values against a [`Schema`] *before* they are
//! deserialised into wm-types, so every failed constraint gets its own message naming the
//! field (`fullName must be shorter than or equal to 160 characters`, `property foo should
//! not exist`), exactly as NestJS integrators expect, instead of serde's first-error-only text.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// What a field must hold.
#[derive(Debug, Clone)]
pub enum Kind {
    /// A string with optional length bounds (in characters).
    Str {
        /// Minimum length.
        min: Option<usize>,
        /// Maximum length.
        max: Option<usize>,
        /// Must contain a non-blank character.
        not_blank: bool,
    },
    /// An e-mail address.
    Email,
    /// A UUID in its hyphenated form.
    Uuid,
    /// `true` or `false`.
    Bool,
    /// An integer with optional bounds.
    Int {
        /// Minimum.
        min: Option<i64>,
        /// Maximum.
        max: Option<i64>,
    },
    /// A number with optional bounds.
    Number {
        /// Minimum.
        min: Option<f64>,
        /// Maximum.
        max: Option<f64>,
    },
    /// One of a fixed set of strings.
    OneOf(Vec<String>),
    /// One of a fixed set of integers.
    IntOneOf(Vec<i64>),
    /// An ISO 8601 date or date-time; normalised to RFC 3339 with milliseconds.
    DateTime,
    /// A phone number in international format (`+` and 6–15 digits after removing
    /// spaces, dashes, dots and parentheses).
    Phone,
    /// An array.
    Array {
        /// Kind of each item.
        item: Box<Kind>,
        /// Minimum size.
        min: Option<usize>,
        /// Maximum size.
        max: Option<usize>,
    },
    /// A nested object with its own schema.
    Object(Box<Schema>),
    /// A custom check: returns the failure message suffix (after the field name).
    Custom(fn(&Value) -> Option<String>),
}

/// One field of a schema.
#[derive(Debug, Clone)]
pub struct Field {
    name: &'static str,
    kind: Kind,
    required: bool,
    nullable: bool,
}

/// The fields an object may hold; any other property is rejected.
#[derive(Debug, Clone, Default)]
pub struct Schema {
    fields: Vec<Field>,
    /// Fields given in a query that may repeat or hold comma-separated lists.
    list_fields: Vec<&'static str>,
}

impl Schema {
    /// An empty schema (accepts only `{}`).
    pub fn new() -> Self {
        Schema::default()
    }

    /// An optional field; `null` counts as absent.
    pub fn optional(mut self, name: &'static str, kind: Kind) -> Self {
        self.fields.push(Field {
            name,
            kind,
            required: false,
            nullable: true,
        });
        self
    }

    /// An optional field that may not be `null` (a PATCH field with no "clear" meaning).
    pub fn optional_not_null(mut self, name: &'static str, kind: Kind) -> Self {
        self.fields.push(Field {
            name,
            kind,
            required: false,
            nullable: false,
        });
        self
    }

    /// A required field.
    pub fn required(mut self, name: &'static str, kind: Kind) -> Self {
        self.fields.push(Field {
            name,
            kind,
            required: true,
            nullable: false,
        });
        self
    }

    /// Marks a query field as a list (`ids=a,b` and repeated `ids=`).
    pub fn list_param(mut self, name: &'static str) -> Self {
        self.list_fields.push(name);
        self
    }

    fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// Validates (and normalises in place) a JSON value; returns every failure message.
    /// A string anywhere in it that holds U+0000 is refused, naming its field: no database
    /// stores it alike (PostgreSQL refuses it, SQLite keeps it), so neither takes it.
    pub fn check(&self, value: &mut Value) -> Result<(), Vec<String>> {
        let mut errors = Vec::new();
        nul_messages(value, "", &mut errors);
        match value {
            Value::Object(map) => self.check_object(map, "", &mut errors),
            _ => errors.push("request body must be a JSON object".to_owned()),
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }

    fn check_object(&self, map: &mut Map<String, Value>, prefix: &str, errors: &mut Vec<String>) {
        for key in map.keys() {
            if self.field(key).is_none() {
                errors.push(format!("property {prefix}{key} should not exist"));
            }
        }
        for field in &self.fields {
            let path = format!("{prefix}{}", field.name);
            match map.get_mut(field.name) {
                None => {
                    if field.required {
                        errors.extend(all_messages(&field.kind, &path));
                    }
                }
                Some(Value::Null) if !field.required && field.nullable => {}
                Some(v) => check_value(&field.kind, v, &path, errors),
            }
        }
    }

    /// Turns query pairs into a JSON object shaped for this schema: numbers and booleans are
    /// converted where the field wants them, list fields collect repeated and comma-separated
    /// values, and a scalar field given twice becomes an array (and fails its type check).
    pub fn query_value(&self, pairs: &[(String, String)]) -> Value {
        let mut map = Map::new();
        for (key, raw) in pairs {
            let kind = self.field(key).map(|f| &f.kind);
            if self.list_fields.contains(&key.as_str()) {
                let entry = map
                    .entry(key.clone())
                    .or_insert_with(|| Value::Array(Vec::new()));
                if let Value::Array(items) = entry {
                    let item_kind = match kind {
                        Some(Kind::Array { item, .. }) => Some(item.as_ref()),
                        _ => None,
                    };
                    items.extend(
                        raw.split(',')
                            .filter(|s| !s.is_empty())
                            .map(|s| coerce_query(item_kind, s)),
                    );
                }
                continue;
            }
            let v = coerce_query(kind, raw);
            match map.get_mut(key) {
                Some(Value::Array(items)) => items.push(v),
                Some(existing) => {
                    let first = existing.take();
                    *existing = Value::Array(vec![first, v]);
                }
                None => {
                    map.insert(key.clone(), v);
                }
            }
        }
        Value::Object(map)
    }
}

/// One message per field whose string value (or any string inside it) holds U+0000, and per
/// property name that does.
fn nul_messages(value: &Value, path: &str, errors: &mut Vec<String>) {
    let nul = |s: &str| s.contains('\0');
    match value {
        Value::String(s) if nul(s) => {
            let field = if path.is_empty() {
                "request body"
            } else {
                path
            };
            let m = format!("{field} must not contain a NUL character");
            if !errors.contains(&m) {
                errors.push(m);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| nul_messages(v, path, errors)),
        Value::Object(map) => {
            for (k, v) in map {
                let child = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                if nul(k) {
                    errors.push(format!(
                        "property {} must not contain a NUL character",
                        child.escape_debug()
                    ));
                    continue;
                }
                nul_messages(v, &child, errors);
            }
        }
        _ => {}
    }
}

fn coerce_query(kind: Option<&Kind>, raw: &str) -> Value {
    match kind {
        Some(Kind::Int { .. } | Kind::IntOneOf(_)) => raw
            .parse::<i64>()
            .map(Value::from)
            .unwrap_or_else(|_| Value::from(raw)),
        Some(Kind::Number { .. }) => raw
            .parse::<f64>()
            .ok()
            .and_then(|n| serde_json::Number::from_f64(n).map(Value::Number))
            .unwrap_or_else(|| Value::from(raw)),
        Some(Kind::Bool) => match raw {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            other => Value::from(other),
        },
        _ => Value::from(raw),
    }
}

/// The messages of every constraint of `kind`, used when the value is missing or of the
/// wrong type (class-validator reports them all in that case).
fn all_messages(kind: &Kind, path: &str) -> Vec<String> {
    match kind {
        Kind::Str {
            min,
            max,
            not_blank,
        } => {
            let mut m = Vec::new();
            if *not_blank {
                m.push(format!("{path} should not be empty"));
            }
            if let Some(n) = min {
                m.push(format!(
                    "{path} must be longer than or equal to {n} characters"
                ));
            }
            if let Some(n) = max {
                m.push(format!(
                    "{path} must be shorter than or equal to {n} characters"
                ));
            }
            m.push(format!("{path} must be a string"));
            m
        }
        Kind::Int { min, max } => {
            let mut m = Vec::new();
            if let Some(n) = min {
                m.push(format!("{path} must not be less than {n}"));
            }
            if let Some(n) = max {
                m.push(format!("{path} must not be greater than {n}"));
            }
            m.push(format!("{path} must be an integer number"));
            m
        }
        Kind::Number { min, max } => {
            let mut m = Vec::new();
            if let Some(n) = min {
                m.push(format!("{path} must not be less than {n}"));
            }
            if let Some(n) = max {
                m.push(format!("{path} must not be greater than {n}"));
            }
            m.push(format!(
                "{path} must be a number conforming to the specified constraints"
            ));
            m
        }
        Kind::Array { min, max, .. } => {
            let mut m = Vec::new();
            if let Some(n) = min {
                m.push(format!("{path} must contain at least {n} elements"));
            }
            if let Some(n) = max {
                m.push(format!("{path} must contain no more than {n} elements"));
            }
            m.push(format!("{path} must be an array"));
            m
        }
        other => vec![type_message(other, path)],
    }
}

fn type_message(kind: &Kind, path: &str) -> String {
    match kind {
        Kind::Str { .. } => format!("{path} must be a string"),
        Kind::Email => format!("{path} must be an email"),
        Kind::Uuid => format!("{path} must be a UUID"),
        Kind::Bool => format!("{path} must be a boolean value"),
        Kind::Int { .. } => format!("{path} must be an integer number"),
        Kind::Number { .. } => {
            format!("{path} must be a number conforming to the specified constraints")
        }
        Kind::OneOf(values) => format!(
            "{path} must be one of the following values: {}",
            values.join(", ")
        ),
        Kind::IntOneOf(values) => format!(
            "{path} must be one of the following values: {}",
            values
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Kind::DateTime => format!("{path} must be a valid ISO 8601 date string"),
        Kind::Phone => format!(
            "{path} must be a phone number in international format (+ followed by 6 to 15 digits)"
        ),
        Kind::Array { .. } => format!("{path} must be an array"),
        Kind::Object(_) => format!("{path} must be an object"),
        Kind::Custom(check) => {
            let suffix = check(&Value::Null).unwrap_or_else(|| "is invalid".to_owned());
            format!("{path} {suffix}")
        }
    }
}

fn check_value(kind: &Kind, value: &mut Value, path: &str, errors: &mut Vec<String>) {
    match kind {
        Kind::Str {
            min,
            max,
            not_blank,
        } => {
            let Value::String(s) = value else {
                errors.extend(all_messages(kind, path));
                return;
            };
            let len = s.chars().count();
            if *not_blank && s.trim().is_empty() {
                errors.push(format!("{path} should not be empty"));
            }
            if let Some(n) = min
                && len < *n
            {
                errors.push(format!(
                    "{path} must be longer than or equal to {n} characters"
                ));
            }
            if let Some(n) = max
                && len > *n
            {
                errors.push(format!(
                    "{path} must be shorter than or equal to {n} characters"
                ));
            }
        }
        Kind::Email => {
            if !value.as_str().is_some_and(is_email) {
                errors.push(type_message(kind, path));
            }
        }
        Kind::Uuid => {
            if !value.as_str().is_some_and(is_uuid) {
                errors.push(type_message(kind, path));
            }
        }
        Kind::Bool => {
            if !value.is_boolean() {
                errors.push(type_message(kind, path));
            }
        }
        Kind::Int { min, max } => {
            let Some(n) = value.as_i64() else {
                errors.extend(all_messages(kind, path));
                return;
            };
            if let Some(lo) = min
                && n < *lo
            {
                errors.push(format!("{path} must not be less than {lo}"));
            }
            if let Some(hi) = max
                && n > *hi
            {
                errors.push(format!("{path} must not be greater than {hi}"));
            }
        }
        Kind::Number { min, max } => {
            let Some(n) = value.as_f64() else {
                errors.extend(all_messages(kind, path));
                return;
            };
            if let Some(lo) = min
                && n < *lo
            {
                errors.push(format!("{path} must not be less than {lo}"));
            }
            if let Some(hi) = max
                && n > *hi
            {
                errors.push(format!("{path} must not be greater than {hi}"));
            }
        }
        Kind::OneOf(values) => {
            if !value
                .as_str()
                .is_some_and(|s| values.iter().any(|v| v == s))
            {
                errors.push(type_message(kind, path));
            }
        }
        Kind::IntOneOf(values) => {
            if !value.as_i64().is_some_and(|n| values.contains(&n)) {
                errors.push(type_message(kind, path));
            }
        }
        Kind::DateTime => match value.as_str().and_then(crate::time::parse_iso8601) {
            Some(t) => *value = Value::String(t.to_string()),
            None => errors.push(type_message(kind, path)),
        },
        Kind::Phone => match value.as_str().map(crate::phone::Phone::parse) {
            Some(Ok(_)) => {}
            _ => errors.push(type_message(kind, path)),
        },
        Kind::Array { item, min, max } => {
            let Value::Array(items) = value else {
                errors.extend(all_messages(kind, path));
                return;
            };
            if let Some(n) = min
                && items.len() < *n
            {
                errors.push(format!("{path} must contain at least {n} elements"));
            }
            if let Some(n) = max
                && items.len() > *n
            {
                errors.push(format!("{path} must contain no more than {n} elements"));
            }
            if let Kind::Object(_) = item.as_ref() {
                // Objects are named by index, as class-validator does (`markets.0.price`).
                for (i, v) in items.iter_mut().enumerate() {
                    check_value(item, v, &format!("{path}.{i}"), errors);
                }
                return;
            }
            let mut item_errors: Vec<String> = Vec::new();
            for v in items.iter_mut() {
                let mut errs = Vec::new();
                check_value(item, v, path, &mut errs);
                for e in errs {
                    let e = format!("each value in {e}");
                    if !item_errors.contains(&e) {
                        item_errors.push(e);
                    }
                }
            }
            errors.extend(item_errors);
        }
        Kind::Object(schema) => match value {
            Value::Object(map) => schema.check_object(map, &format!("{path}."), errors),
            _ => errors.push(type_message(kind, path)),
        },
        Kind::Custom(check) => {
            if let Some(suffix) = check(value) {
                errors.push(format!("{path} {suffix}"));
            }
        }
    }
}

/// An e-mail address as class-validator's `IsEmail` accepts it: a valid address whose
/// domain has a dot and an alphabetic top-level part of two or more letters.
pub fn is_email(s: &str) -> bool {
    if s.len() > 254 || !email_address::EmailAddress::is_valid(s) {
        return false;
    }
    let Some((_, domain)) = s.rsplit_once('@') else {
        return false;
    };
    let Some((_, tld)) = domain.rsplit_once('.') else {
        return false;
    };
    tld.len() >= 2 && tld.chars().all(|c| c.is_ascii_alphabetic())
}

/// A UUID in the hyphenated 8-4-4-4-12 form (braced, URN and bare forms are refused).
pub fn is_uuid(s: &str) -> bool {
    s.len() == 36 && uuid::Uuid::try_parse(s).is_ok()
}

/// Validates a JSON value and deserialises it into `T`.
pub fn parse_value<T: DeserializeOwned>(
    schema: &Schema,
    mut value: Value,
) -> Result<T, Vec<String>> {
    schema.check(&mut value)?;
    serde_json::from_value(value).map_err(|e| vec![e.to_string()])
}

/// Shorthands for building schemas.
pub mod kinds {
    use super::Kind;

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

/// The highest `page` any list accepts (see [`wm_types::common::MAX_PAGE`]).
pub const MAX_PAGE: i64 = wm_types::common::MAX_PAGE as i64;

/// The `page` and `pageSize` fields every paginated query has.
pub fn with_paging(schema: Schema) -> Schema {
    schema
        .optional("page", kinds::int(Some(1), Some(MAX_PAGE)))
        .optional("pageSize", kinds::int(Some(1), Some(100)))
}

/// A request type with a validation schema: the server's `ValidatedJson` and
/// `ValidatedQuery` extractors accept any `T: Validated`.
pub trait Validated: DeserializeOwned {
    /// The schema the raw JSON must satisfy before deserialisation.
    fn schema() -> &'static Schema;
}

static PAGING: std::sync::LazyLock<Schema> =
    std::sync::LazyLock::new(|| with_paging(Schema::new()));

impl Validated for wm_types::PageQuery {
    fn schema() -> &'static Schema {
        &PAGING
    }
}

#[cfg(test)]
mod tests {
    use super::kinds::*;
    use super::*;
    use serde_json::json;

    fn schema() -> Schema {
        Schema::new()
            .optional("fullName", string_max(160))
            .required("name", string_len(2, 50))
            .optional("email", Kind::Email)
            .optional("stageId", Kind::Uuid)
            .optional("tags", array(string_max(3), Some(2)))
            .optional("when", Kind::DateTime)
            .optional(
                "consent",
                object(Schema::new().required("given", Kind::Bool)),
            )
    }

    fn errors(v: Value) -> Vec<String> {
        let mut v = v;
        schema().check(&mut v).err().unwrap_or_default()
    }

    #[test]
    fn accepts_a_valid_body_and_normalises_dates() {
        let mut v = json!({"name": "ok", "when": "2026-11-21", "consent": {"given": true}});
        schema().check(&mut v).unwrap();
        assert_eq!(v["when"], "2026-11-21T00:00:00.000Z");
    }

    #[test]
    fn reports_every_failed_constraint_in_class_validator_words() {
        let e = errors(json!({
            "fullName": "x".repeat(161), "email": "nope", "stageId": "123",
            "tags": ["a", "long", 5], "foo": 1, "consent": {"given": "yes", "bar": 1}
        }));
        assert!(
            e.contains(&"property foo should not exist".to_owned()),
            "{e:?}"
        );
        assert!(e.contains(&"fullName must be shorter than or equal to 160 characters".to_owned()));
        assert!(e.contains(&"name must be longer than or equal to 2 characters".to_owned()));
        assert!(e.contains(&"name must be a string".to_owned()));
        assert!(e.contains(&"email must be an email".to_owned()));
        assert!(e.contains(&"stageId must be a UUID".to_owned()));
        assert!(e.contains(&"tags must contain no more than 2 elements".to_owned()));
        assert!(e.contains(
            &"each value in tags must be shorter than or equal to 3 characters".to_owned()
        ));
        assert!(e.contains(&"each value in tags must be a string".to_owned()));
        assert!(e.contains(&"consent.given must be a boolean value".to_owned()));
        assert!(e.contains(&"property consent.bar should not exist".to_owned()));
    }

    #[test]
    fn null_is_absent_for_optional_fields_but_not_for_required_ones() {
        assert!(errors(json!({"name": "ok", "email": null})).is_empty());
        assert_eq!(errors(json!({"name": null})).len(), 3);
    }

    #[test]
    fn query_values_are_coerced_and_lists_collected() {
        let s = with_paging(Schema::new())
            .optional("ids", array(Kind::Uuid, Some(500)))
            .list_param("ids")
            .optional("q", string_max(5));
        let pairs = |v: &[(&str, &str)]| -> Vec<(String, String)> {
            v.iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        let v = s.query_value(&pairs(&[("page", "2"), ("ids", "a,b"), ("ids", "c")]));
        assert_eq!(v, json!({"page": 2, "ids": ["a", "b", "c"]}));
        let mut v = s.query_value(&pairs(&[("pageSize", "101"), ("page", "x")]));
        let e = s.check(&mut v).unwrap_err();
        assert_eq!(
            e,
            vec![
                "page must not be less than 1",
                "page must not be greater than 1000000",
                "page must be an integer number",
                "pageSize must not be greater than 100"
            ]
        );
        let mut v = s.query_value(&pairs(&[("page", "92233720368547760")]));
        assert_eq!(
            s.check(&mut v).unwrap_err(),
            vec!["page must not be greater than 1000000"]
        );
        let mut v = s.query_value(&pairs(&[("q", "a"), ("q", "b")]));
        assert!(
            s.check(&mut v)
                .unwrap_err()
                .contains(&"q must be a string".to_owned())
        );
    }

    #[test]
    fn nul_characters_are_refused_wherever_they_are() {
        let e = errors(json!({
            "name": "o\u{0}k", "tags": ["a", "b\u{0}"], "consent": {"given": true, "x\u{0}": 1}
        }));
        assert!(
            e.contains(&"name must not contain a NUL character".to_owned()),
            "{e:?}"
        );
        assert!(
            e.contains(&"tags must not contain a NUL character".to_owned()),
            "{e:?}"
        );
        assert!(
            e.contains(&"property consent.x\\0 must not contain a NUL character".to_owned()),
            "{e:?}"
        );
        assert!(
            errors(json!({"name": "ok", "fullName": "a\u{0}b"}))
                .contains(&"fullName must not contain a NUL character".to_owned())
        );
    }

    #[test]
    fn email_needs_a_top_level_domain() {
        assert!(is_email("ana@example.com"));
        assert!(!is_email("ana@localhost"));
        assert!(!is_email("ana.example.com"));
        assert!(!is_email("ana@example.c0m"));
    }

    #[test]
    fn uuid_must_be_hyphenated() {
        assert!(is_uuid("67e55044-10b1-426f-9247-bb680e5fe0c8"));
        assert!(!is_uuid("67e5504410b1426f9247bb680e5fe0c8"));
        assert!(!is_uuid("{67e55044-10b1-426f-9247-bb680e5fe0c8}"));
    }
}
