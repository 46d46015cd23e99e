//! The checks behind [`Schema::check`]: one function per concern, each answering in
//! class-validator's words.

use serde_json::Value;

use super::schema::{Kind, is_email, is_uuid};

/// One message per field whose string value (or any string inside it) holds U+0000, and per
/// property name that does.
pub(super) fn nul_messages(value: &Value, path: &str, errors: &mut Vec<String>) {
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
            // In key order, so the messages read the same whatever order the keys came in.
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            for (k, v) in entries {
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

pub(super) fn coerce_query(kind: Option<&Kind>, raw: &str) -> Value {
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
pub(super) fn all_messages(kind: &Kind, path: &str) -> Vec<String> {
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
        Kind::OneOf(values) | Kind::OneOfAliased { values, .. } => format!(
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
        Kind::Date => format!("{path} must be a date (YYYY-MM-DD)"),
        Kind::Phone { .. } => format!(
            "{path} must be a phone number in international format (+ followed by 6 to 15 digits)"
        ),
        Kind::Array { .. } => format!("{path} must be an array"),
        Kind::Object(_) | Kind::Map => format!("{path} must be an object"),
        Kind::Any => format!("{path} should not be empty"),
        Kind::Custom(check) => {
            let suffix = check(&Value::Null).unwrap_or_else(|| "is invalid".to_owned());
            format!("{path} {suffix}")
        }
    }
}

pub(super) fn check_value(kind: &Kind, value: &mut Value, path: &str, errors: &mut Vec<String>) {
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
        Kind::OneOfAliased { values, aliases } => {
            if let Some((_, canonical)) = aliases.iter().find(|(a, _)| value.as_str() == Some(a)) {
                *value = Value::String(canonical.clone());
            }
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
        Kind::Date => {
            let date = value
                .as_str()
                .map(|s| chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d"));
            if !matches!(date, Some(Ok(_))) {
                errors.push(type_message(kind, path));
            }
        }
        Kind::Phone { max } => match (value.as_str(), max) {
            (Some(s), Some(n)) if s.chars().count() > *n => errors.push(format!(
                "{path} must be shorter than or equal to {n} characters"
            )),
            (Some(s), _) if crate::phone::Phone::parse(s).is_ok() => {}
            _ => errors.push(type_message(kind, path)),
        },
        Kind::Map => {
            if !value.is_object() {
                errors.push(type_message(kind, path));
            }
        }
        Kind::Any => {
            if value.is_null() {
                errors.push(type_message(kind, path));
            }
        }
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
