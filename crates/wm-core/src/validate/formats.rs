//! The named formats a wire type may declare (`#[schemars(extend("format" = …))]`) for a
//! check JSON Schema has no keyword for, each with its class-validator-style message.

use serde_json::Value;

use super::schema::{Kind, is_uuid};

/// The kind of a named format, or `None` when the name is not one of ours (JSON Schema's
/// own numeric formats such as `int64` are annotations and handled by the caller).
pub(super) fn kind(format: &str, max_length: Option<usize>) -> Option<Kind> {
    Some(match format {
        "email" => Kind::Email,
        "uuid" => Kind::Uuid,
        "date-time" => Kind::DateTime,
        "date" => Kind::Date,
        "phone" => Kind::Phone { max: max_length },
        "iso4217" => Kind::Custom(currency),
        "timezone" => Kind::Custom(timezone),
        "uuid-or-none" => Kind::Custom(uuid_or_none),
        "digits" => Kind::Custom(digits),
        "hex-color" => Kind::Custom(hex_color),
        "import-mapping" => Kind::Custom(import_mapping),
        _ => return None,
    })
}

fn currency(v: &Value) -> Option<String> {
    match v.as_str() {
        Some(s) if s.len() == 3 && s.bytes().all(|b| b.is_ascii_uppercase()) => None,
        _ => Some("must be a 3-letter ISO 4217 code".to_owned()),
    }
}

fn timezone(v: &Value) -> Option<String> {
    match v.as_str() {
        Some(s) if crate::time::is_timezone(s) => None,
        _ => Some("must be an IANA time zone such as UTC or America/Mexico_City".to_owned()),
    }
}

fn digits(v: &Value) -> Option<String> {
    match v.as_str() {
        Some(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => None,
        _ => Some("must be a numeric id".to_owned()),
    }
}

fn hex_color(v: &Value) -> Option<String> {
    match v.as_str() {
        Some(s)
            if s.len() == 7
                && s.starts_with('#')
                && s[1..].bytes().all(|b| b.is_ascii_hexdigit()) =>
        {
            None
        }
        _ => Some("must be a colour such as #0a7cff".to_owned()),
    }
}

fn uuid_or_none(v: &Value) -> Option<String> {
    match v.as_str() {
        Some("none") => None,
        Some(s) if is_uuid(s) && s == s.to_lowercase() => None,
        _ => Some("must be the word none or a lowercase UUID".to_owned()),
    }
}

/// The check of an import's `mapping` (the `import-mapping` format): an object whose values
/// each name a different one of the import fields. Columns are checked in name order.
fn import_mapping(v: &Value) -> Option<String> {
    let Some(map) = v.as_object() else {
        return Some("must be an object".to_owned());
    };
    let mut columns: Vec<(&String, &Value)> = map.iter().collect();
    columns.sort_by(|a, b| a.0.cmp(b.0));
    let mut seen = Vec::new();
    for (column, field) in columns {
        match field.as_str() {
            Some(f) if wm_types::imports::FIELDS.contains(&f) => {
                if seen.contains(&f) {
                    return Some(format!("maps more than one column to {f}"));
                }
                seen.push(f);
            }
            _ => {
                return Some(format!(
                    "value of column {column} must be one of the following values: {}",
                    wm_types::imports::FIELDS.join(", ")
                ));
            }
        }
    }
    None
}
