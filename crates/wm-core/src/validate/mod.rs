//! A small declarative validator that answers in class-validator's words.
//!
//! Bodies and queries are checked as JSON values against a [`Schema`] *before* they are
//! deserialised into wm-types, so every failed constraint gets its own message naming the
//! field (`fullName must be shorter than or equal to 160 characters`, `property foo should
//! not exist`), exactly as NestJS integrators expect, instead of serde's first-error-only text.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

mod check;
pub mod derive;
mod formats;
mod schema;

pub use schema::{Field, Kind, Schema, is_email, is_uuid};

use check::{all_messages, check_value, coerce_query, nul_messages};

impl Schema {
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
