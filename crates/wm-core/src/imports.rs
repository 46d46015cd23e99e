//! Contact import rules: the options' schema, how a CSV header maps to contact fields, how
//! a CSV record or an NDJSON line becomes the body `POST /contacts` takes (so every row then
//! runs through that route's validator and rules), and what an `UPDATE` row changes.

use std::collections::BTreeMap;

use serde_json::{Map, Value};
use wm_types::contacts::{CreateContact, UpdateContact};
use wm_types::enums::ContactSource;
use wm_types::imports::{FIELDS, ImportFormat, ImportOptions};

use crate::contacts::{ContactFields, apply_update};
use crate::tags::merge_tags;
use crate::validate::validated;

/// The default separator of the tags in a `tags` cell.
pub const DEFAULT_TAG_SEPARATOR: &str = ";";

/// Longest tag separator (declared with the wire type).
pub use wm_types::imports::MAX_TAG_SEPARATOR;

/// How many refused rows a job keeps (the first ones, in row order).
pub const MAX_KEPT_ERRORS: usize = 100;

validated!(ImportOptions);

/// The format of a file part: the options' choice, else its content type, else its name.
pub fn format_of(
    chosen: Option<ImportFormat>,
    content_type: Option<&str>,
    file_name: Option<&str>,
) -> Option<ImportFormat> {
    if chosen.is_some() {
        return chosen;
    }
    let essence = content_type
        .and_then(|c| c.split(';').next())
        .map(|c| c.trim().to_ascii_lowercase());
    match essence.as_deref() {
        Some("text/csv" | "application/csv") => return Some(ImportFormat::Csv),
        Some("application/x-ndjson" | "application/ndjson" | "application/jsonl") => {
            return Some(ImportFormat::Ndjson);
        }
        _ => {}
    }
    let ext = file_name?.rsplit_once('.')?.1.to_ascii_lowercase();
    match ext.as_str() {
        "csv" => Some(ImportFormat::Csv),
        "ndjson" | "jsonl" => Some(ImportFormat::Ndjson),
        _ => None,
    }
}

/// Which field each CSV column fills (`None`: ignored). With a mapping, every mapped column
/// must be in the header; without one, columns named like a field (ignoring case) map to it.
pub fn plan_columns(
    header: &[String],
    mapping: Option<&BTreeMap<String, String>>,
) -> Result<Vec<Option<&'static str>>, String> {
    let field = |name: &str| {
        FIELDS
            .iter()
            .copied()
            .find(|f| f.eq_ignore_ascii_case(name))
    };
    let plan: Vec<Option<&'static str>> = match mapping {
        Some(m) => {
            if let Some(missing) = m.keys().find(|c| !header.iter().any(|h| h == *c)) {
                return Err(format!(
                    "mapping names the column {missing}, which the file's header does not have"
                ));
            }
            header
                .iter()
                .map(|h| m.get(h).and_then(|f| field(f)))
                .collect()
        }
        None => header.iter().map(|h| field(h.trim())).collect(),
    };
    if plan.iter().all(Option::is_none) {
        return Err(format!(
            "no column of the file's header maps to a contact field ({})",
            FIELDS.join(", ")
        ));
    }
    Ok(plan)
}

/// `true`/`false` as people write them in spreadsheets; anything else stays text, for the
/// validator to refuse in its own words.
fn cell_bool(cell: &str) -> Value {
    match cell.to_ascii_lowercase().as_str() {
        "true" | "yes" | "y" | "1" => Value::Bool(true),
        "false" | "no" | "n" | "0" => Value::Bool(false),
        _ => Value::String(cell.to_owned()),
    }
}

/// The `POST /contacts` body of one CSV record: blank cells are absent, `tags` is split on
/// `separator`, booleans are read leniently, `source` is `IMPORT`.
pub fn csv_row(plan: &[Option<&'static str>], record: &[&str], separator: &str) -> Value {
    let mut body = Map::new();
    let mut consent = Map::new();
    for (field, cell) in plan.iter().zip(record) {
        let (Some(field), cell) = (field, cell.trim()) else {
            continue;
        };
        if cell.is_empty() {
            continue;
        }
        let value = match *field {
            "tags" => Value::Array(
                cell.split(separator)
                    .map(str::trim)
                    .filter(|t| !t.is_empty())
                    .map(|t| Value::String(t.to_owned()))
                    .collect(),
            ),
            "optedOut" | "consent.given" => cell_bool(cell),
            _ => Value::String(cell.to_owned()),
        };
        match field.strip_prefix("consent.") {
            Some(inner) => {
                consent.insert(inner.to_owned(), value);
            }
            None => {
                body.insert((*field).to_owned(), value);
            }
        }
    }
    if !consent.is_empty() {
        body.insert("consent".to_owned(), Value::Object(consent));
    }
    imported(Value::Object(body))
}

/// A row's body with `source` set to `IMPORT` (an NDJSON row's own `source` is replaced:
/// an imported contact's source is the import).
pub fn imported(mut body: Value) -> Value {
    if let Some(obj) = body.as_object_mut() {
        obj.insert(
            "source".to_owned(),
            Value::String(ContactSource::Import.as_str().to_owned()),
        );
    }
    body
}

/// The message of a CSV record whose length differs from the header's.
pub fn width_error(got: usize, header: usize) -> String {
    format!("the row has {got} fields, the header has {header}")
}

/// What an `UPDATE` row does to the contact holding its phone: the fields it gives replace
/// the contact's, its tags are added to the contact's, and its source is left alone. Returns
/// the new fields and the names of those that changed (none: the row is skipped).
pub fn update_from_row(
    current: &ContactFields,
    row: CreateContact,
) -> Result<(ContactFields, Vec<&'static str>), Vec<String>> {
    let patch = UpdateContact {
        full_name: row.full_name.map(Some),
        primary_phone: row.primary_phone.map(Some),
        primary_email: row.primary_email.map(Some),
        company: row.company.map(Some),
        country: row.country.map(Some),
        source: None,
        lifecycle_stage_id: row.lifecycle_stage_id.map(Some),
        owner_id: row.owner_id.map(Some),
        opted_out: row.opted_out,
        consent: row.consent,
        tags: row.tags.map(|t| merge_tags(&current.tags, &t)),
    };
    apply_update(current, patch)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::Validated;
    use crate::validate::parse_value;
    use serde_json::json;

    fn header(cols: &[&str]) -> Vec<String> {
        cols.iter().map(|c| (*c).to_owned()).collect()
    }

    #[test]
    fn a_mapped_record_becomes_a_create_body_with_nested_consent_and_split_tags() {
        let mapping: BTreeMap<String, String> = [
            ("Name", "fullName"),
            ("Phone", "primaryPhone"),
            ("Labels", "tags"),
            ("Agreed", "consent.given"),
            ("Unsubscribed", "optedOut"),
        ]
        .into_iter()
        .map(|(a, b)| (a.to_owned(), b.to_owned()))
        .collect();
        let h = header(&[
            "Name",
            "Phone",
            "Ignored",
            "Labels",
            "Agreed",
            "Unsubscribed",
        ]);
        let plan = plan_columns(&h, Some(&mapping)).unwrap();
        let body = csv_row(
            &plan,
            &[" Ana ", "+52 55 1234 5678", "x", "vip; lead ;;", "yes", ""],
            ";",
        );
        assert_eq!(
            body,
            json!({
                "fullName": "Ana", "primaryPhone": "+52 55 1234 5678",
                "tags": ["vip", "lead"], "consent": {"given": true}, "source": "IMPORT"
            })
        );
        let parsed: CreateContact = parse_value(CreateContact::schema(), body).unwrap();
        assert_eq!(parsed.source, Some(ContactSource::Import));
    }

    #[test]
    fn without_a_mapping_columns_named_like_fields_map_and_others_are_ignored() {
        let plan = plan_columns(&header(&["FullName", "city", "tags"]), None).unwrap();
        assert_eq!(plan, vec![Some("fullName"), None, Some("tags")]);
        let err = plan_columns(&header(&["a", "b"]), None).unwrap_err();
        assert!(err.starts_with("no column"), "{err}");
    }

    #[test]
    fn a_mapping_naming_a_missing_column_is_refused() {
        let mapping = BTreeMap::from([("Phone".to_owned(), "primaryPhone".to_owned())]);
        let err = plan_columns(&header(&["Name"]), Some(&mapping)).unwrap_err();
        assert_eq!(
            err,
            "mapping names the column Phone, which the file's header does not have"
        );
    }

    #[test]
    fn a_cell_that_is_no_boolean_reaches_the_validator_as_text() {
        let plan = plan_columns(&header(&["optedOut"]), None).unwrap();
        let body = csv_row(&plan, &["maybe"], ";");
        let errors = parse_value::<CreateContact>(CreateContact::schema(), body).unwrap_err();
        assert_eq!(errors, vec!["optedOut must be a boolean value".to_owned()]);
    }

    #[test]
    fn options_are_validated_in_class_validator_words() {
        let errors = parse_value::<ImportOptions>(
            ImportOptions::schema(),
            json!({"dedupe": "MERGE", "mapping": {"A": "name"}, "tagSeparator": "", "x": 1}),
        )
        .unwrap_err();
        assert!(
            errors.contains(&"property x should not exist".to_owned()),
            "{errors:?}"
        );
        assert!(
            errors
                .iter()
                .any(|e| e.starts_with("dedupe must be one of")),
            "{errors:?}"
        );
        assert!(
            errors
                .iter()
                .any(|e| e.starts_with("mapping value of column A must be one of")),
            "{errors:?}"
        );
        assert!(
            errors.iter().any(|e| e.starts_with("tagSeparator must be")),
            "{errors:?}"
        );
    }

    #[test]
    fn the_format_comes_from_the_options_then_the_content_type_then_the_name() {
        let f = |c, n| format_of(None, c, n);
        assert_eq!(
            f(Some("text/csv; charset=utf-8"), None),
            Some(ImportFormat::Csv)
        );
        assert_eq!(
            f(Some("application/x-ndjson"), None),
            Some(ImportFormat::Ndjson)
        );
        assert_eq!(
            f(Some("application/octet-stream"), Some("a.JSONL")),
            Some(ImportFormat::Ndjson)
        );
        assert_eq!(f(None, Some("contacts.txt")), None);
        assert_eq!(
            format_of(Some(ImportFormat::Csv), Some("application/x-ndjson"), None),
            Some(ImportFormat::Csv)
        );
    }

    #[test]
    fn an_update_row_replaces_given_fields_adds_tags_and_keeps_the_source() {
        let current = crate::contacts::new_contact(CreateContact {
            full_name: Some("Ana".into()),
            company: Some("Acme".into()),
            tags: Some(vec!["vip".into()]),
            source: Some(ContactSource::Manual),
            ..CreateContact::default()
        })
        .unwrap();
        let row = CreateContact {
            company: Some("Globex".into()),
            tags: Some(vec!["lead".into(), "VIP".into()]),
            source: Some(ContactSource::Import),
            ..CreateContact::default()
        };
        let (next, changed) = update_from_row(&current, row).unwrap();
        assert_eq!(next.full_name.as_deref(), Some("Ana"));
        assert_eq!(next.company.as_deref(), Some("Globex"));
        assert_eq!(next.tags, vec!["vip".to_owned(), "lead".to_owned()]);
        assert_eq!(next.source, ContactSource::Manual);
        assert_eq!(changed, vec!["company", "tags"]);
        let (_, unchanged) = update_from_row(&next, CreateContact::default()).unwrap();
        assert!(unchanged.is_empty());
    }
}
