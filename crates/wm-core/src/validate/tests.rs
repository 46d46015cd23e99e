//! The validator's own tests.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use uuid::Uuid;

use super::*;

/// A request type declaring its bounds as the wire types do.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[allow(dead_code)]
struct Probe {
    #[schemars(length(max = 160))]
    full_name: Option<String>,
    #[schemars(length(min = 2, max = 50))]
    name: String,
    #[schemars(email)]
    email: Option<String>,
    stage_id: Option<Uuid>,
    #[schemars(length(max = 2), inner(length(max = 3)))]
    tags: Option<Vec<String>>,
    when: Option<wm_types::Timestamp>,
    consent: Option<ProbeConsent>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct ProbeConsent {
    given: bool,
}

/// A paginated query with a list parameter.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[allow(dead_code)]
struct ProbeQuery {
    #[schemars(range(min = 1, max = wm_types::common::MAX_PAGE))]
    page: Option<u64>,
    #[schemars(range(min = 1, max = 100))]
    page_size: Option<u64>,
    #[schemars(length(max = 500))]
    ids: Option<Vec<Uuid>>,
    #[schemars(length(max = 5))]
    q: Option<String>,
}

fn schema() -> Schema {
    Schema::of::<Probe>()
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
    assert!(
        e.contains(&"each value in tags must be shorter than or equal to 3 characters".to_owned())
    );
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
    let s = Schema::of::<ProbeQuery>();
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
