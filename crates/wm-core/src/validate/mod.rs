//! A small declarative validator that answers in class-validator's words.
//!
//! Bodies and queries are checked as JSON values against a [`Schema`] *before* they are
//! deserialised into wm-types, so every failed constraint gets its own message naming the
//! field (`fullName must be shorter than or equal to 160 characters`, `property foo should
//! not exist`), exactly as NestJS integrators expect, instead of serde's first-error-only text.

use std::borrow::Cow;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

mod check;
pub mod derive;
mod formats;

use check::{all_messages, check_value, coerce_query, nul_messages};

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
    /// One of a fixed set of strings, or an older spelling of one (`(alias, value)`), which
    /// is rewritten to the value it stands for.
    OneOfAliased {
        /// The spellings of today.
        values: Vec<String>,
        /// Older spellings and the value each stands for.
        aliases: Vec<(String, String)>,
    },
    /// One of a fixed set of integers.
    IntOneOf(Vec<i64>),
    /// An ISO 8601 date or date-time; normalised to RFC 3339 with milliseconds.
    DateTime,
    /// A calendar date, `YYYY-MM-DD`.
    Date,
    /// A phone number in international format (`+` and 6–15 digits after removing
    /// spaces, dashes, dots and parentheses), optionally no longer than `max` as typed.
    Phone {
        /// Longest text accepted, checked before the number itself.
        max: Option<usize>,
    },
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
    /// Any object (free-form settings such as campaign `variables`).
    Map,
    /// Any value but `null` (class-validator's `IsNotEmpty` on an untyped field).
    Any,
    /// A custom check: returns the failure message suffix (after the field name).
    Custom(fn(&Value) -> Option<String>),
}

/// One field of a schema.
#[derive(Debug, Clone)]
pub struct Field {
    name: Cow<'static, str>,
    kind: Kind,
    required: bool,
    nullable: bool,
}

/// The fields an object may hold; any other property is rejected.
#[derive(Debug, Clone, Default)]
pub struct Schema {
    fields: Vec<Field>,
    /// Fields given in a query that may repeat or hold comma-separated lists.
    list_fields: Vec<Cow<'static, str>>,
}

impl Schema {
    /// An empty schema (accepts only `{}`).
    pub fn new() -> Self {
        Schema::default()
    }

    /// The schema of a request type, read from its JSON Schema (the bounds and formats its
    /// `schemars` attributes declare), so the published document and the validator come from
    /// one declaration. See [`derive`](mod@derive) for the vocabulary understood.
    ///
    /// # Panics
    /// When the type's schema uses a construct the validator has no rule for; every
    /// [`Validated`] type is derived once by the tests, so this cannot reach a request.
    pub fn of<T: JsonSchema>() -> Self {
        derive::schema_of(&derive::request_schema::<T>())
            .unwrap_or_else(|e| panic!("no validator for {}: {e}", T::schema_name()))
    }

    fn push(
        mut self,
        name: impl Into<Cow<'static, str>>,
        kind: Kind,
        required: bool,
        nullable: bool,
    ) -> Self {
        let name = name.into();
        if matches!(kind, Kind::Array { .. }) {
            // An array in a query is a list (`ids=a,b` or repeated `ids=`).
            self.list_fields.push(name.clone());
        }
        self.fields.push(Field {
            name,
            kind,
            required,
            nullable,
        });
        self
    }

    /// An optional field; `null` counts as absent.
    pub fn optional(self, name: impl Into<Cow<'static, str>>, kind: Kind) -> Self {
        self.push(name, kind, false, true)
    }

    /// An optional field that may not be `null` (a PATCH field with no "clear" meaning).
    pub fn optional_not_null(self, name: impl Into<Cow<'static, str>>, kind: Kind) -> Self {
        self.push(name, kind, false, false)
    }

    /// A required field.
    pub fn required(self, name: impl Into<Cow<'static, str>>, kind: Kind) -> Self {
        self.push(name, kind, true, false)
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
        // Unknown properties are named in alphabetical order, whatever order they came in.
        let mut unknown: Vec<&String> = map.keys().filter(|k| self.field(k).is_none()).collect();
        unknown.sort();
        for key in unknown {
            errors.push(format!("property {prefix}{key} should not exist"));
        }
        for field in &self.fields {
            let path = format!("{prefix}{}", field.name);
            match map.get_mut(field.name.as_ref()) {
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
            if self.list_fields.iter().any(|f| f == key) {
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
    /// A string with at least one non-blank character and at most `max` characters.
    pub fn text(max: Option<usize>) -> Kind {
        Kind::Str {
            min: None,
            max,
            not_blank: true,
        }
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
    /// A nested object.
    pub fn object(schema: super::Schema) -> Kind {
        Kind::Object(Box::new(schema))
    }
}

/// A request type with a validation schema: the server's `ValidatedJson` and
/// `ValidatedQuery` extractors accept any `T: Validated`.
pub trait Validated: DeserializeOwned + JsonSchema {
    /// The schema the raw JSON must satisfy before deserialisation.
    fn schema() -> &'static Schema;
}

/// Implements [`Validated`] for request types: each schema is derived once, on first use,
/// from the type's JSON Schema ([`Schema::of`]). Also writes a test deriving every one of
/// them, so a bound the validator cannot read fails the build's tests, not a request.
macro_rules! validated {
    ($($ty:ty),+ $(,)?) => {
        $(
            impl $crate::validate::Validated for $ty {
                fn schema() -> &'static $crate::validate::Schema {
                    static SCHEMA: std::sync::LazyLock<$crate::validate::Schema> =
                        std::sync::LazyLock::new($crate::validate::Schema::of::<$ty>);
                    &SCHEMA
                }
            }
        )+

        #[cfg(test)]
        #[test]
        fn every_request_schema_derives() {
            $(
                let _ = <$ty as $crate::validate::Validated>::schema();
            )+
        }
    };
}
pub(crate) use validated;

validated!(wm_types::PageQuery);

#[cfg(test)]
mod tests;
