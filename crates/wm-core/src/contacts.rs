//! Contact rules: the validation schemas of every contact request and the pure functions that
//! turn a request into the contact's new fields and the names of what changed.

use uuid::Uuid;
use wm_types::Timestamp;
use wm_types::contacts::{
    BulkUpdateContacts, Consent, CreateContact, CreateIdentity, CreateNote, ListContactsQuery,
    TimelineQuery, UpdateContact,
};
use wm_types::enums::{ChannelType, ContactSource};

use crate::phone::Phone;
use crate::tags::normalize_tags;
use crate::validate::validated;

/// The limits of contact requests, declared on the wire types.
pub use wm_types::contacts::{
    MAX_ADD_TAGS, MAX_IDS, MAX_NAME, MAX_NOTE, MAX_PHONE, MAX_SEARCH, MAX_TAGS,
};

validated!(
    CreateContact,
    UpdateContact,
    BulkUpdateContacts,
    CreateIdentity,
    CreateNote,
    ListContactsQuery,
    TimelineQuery,
);

/// The stored fields of a contact, already normalised.
#[derive(Debug, Clone, PartialEq)]
pub struct ContactFields {
    /// Name, trimmed.
    pub full_name: Option<String>,
    /// Normalised phone.
    pub primary_phone: Option<Phone>,
    /// E-mail, trimmed.
    pub primary_email: Option<String>,
    /// Company, trimmed.
    pub company: Option<String>,
    /// Country, upper-case.
    pub country: Option<String>,
    /// Source.
    pub source: ContactSource,
    /// Stage.
    pub lifecycle_stage_id: Option<Uuid>,
    /// Owner.
    pub owner_id: Option<Uuid>,
    /// Withdrawn from messaging.
    pub opted_out: bool,
    /// Consent.
    pub consent: Consent,
    /// Tags, normalised.
    pub tags: Vec<String>,
}

fn clean(s: Option<String>) -> Option<String> {
    s.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty())
}

fn parse_phone(s: Option<String>) -> Result<Option<Phone>, Vec<String>> {
    clean(s)
        .map(|p| Phone::parse(&p))
        .transpose()
        .map_err(|_| vec!["primaryPhone must be a phone number in international format (+ followed by 6 to 15 digits)".to_owned()])
}

fn country(s: Option<String>) -> Option<String> {
    clean(s).map(|c| c.to_uppercase())
}

/// Builds a new contact's fields from a validated create body (the note is handled apart).
pub fn new_contact(body: CreateContact) -> Result<ContactFields, Vec<String>> {
    let tags = normalize_tags("tags", body.tags.as_deref().unwrap_or_default())?;
    Ok(ContactFields {
        full_name: clean(body.full_name),
        primary_phone: parse_phone(body.primary_phone)?,
        primary_email: clean(body.primary_email),
        company: clean(body.company),
        country: country(body.country),
        source: body.source.unwrap_or(ContactSource::Manual),
        lifecycle_stage_id: body.lifecycle_stage_id,
        owner_id: body.owner_id,
        opted_out: body.opted_out.unwrap_or(false),
        consent: body.consent.unwrap_or(Consent {
            given: false,
            at: None,
            how: None,
        }),
        tags,
    })
}

/// Applies a validated PATCH body; returns the new fields and the wire names of the fields
/// whose value really changed (for `contact.updated`'s `changedFields`).
pub fn apply_update(
    current: &ContactFields,
    patch: UpdateContact,
) -> Result<(ContactFields, Vec<&'static str>), Vec<String>> {
    let mut next = current.clone();
    if let Some(v) = patch.full_name {
        next.full_name = clean(v);
    }
    if let Some(v) = patch.primary_phone {
        next.primary_phone = parse_phone(v)?;
    }
    if let Some(v) = patch.primary_email {
        next.primary_email = clean(v);
    }
    if let Some(v) = patch.company {
        next.company = clean(v);
    }
    if let Some(v) = patch.country {
        next.country = country(v);
    }
    if let Some(v) = patch.source {
        next.source = v;
    }
    if let Some(v) = patch.lifecycle_stage_id {
        next.lifecycle_stage_id = v;
    }
    if let Some(v) = patch.owner_id {
        next.owner_id = v;
    }
    if let Some(v) = patch.opted_out {
        next.opted_out = v;
    }
    if let Some(v) = patch.consent {
        next.consent = v;
    }
    if let Some(v) = patch.tags {
        next.tags = normalize_tags("tags", &v)?;
    }
    let changed = changed_fields(current, &next);
    Ok((next, changed))
}

/// The wire names of the fields that differ between two versions of a contact.
pub fn changed_fields(a: &ContactFields, b: &ContactFields) -> Vec<&'static str> {
    let mut out = Vec::new();
    let mut check = |differs: bool, name: &'static str| {
        if differs {
            out.push(name);
        }
    };
    check(a.full_name != b.full_name, "fullName");
    check(a.primary_phone != b.primary_phone, "primaryPhone");
    check(a.primary_email != b.primary_email, "primaryEmail");
    check(a.company != b.company, "company");
    check(a.country != b.country, "country");
    check(a.source != b.source, "source");
    check(
        a.lifecycle_stage_id != b.lifecycle_stage_id,
        "lifecycleStageId",
    );
    check(a.owner_id != b.owner_id, "ownerId");
    check(a.opted_out != b.opted_out, "optedOut");
    check(a.consent != b.consent, "consent");
    check(a.tags != b.tags, "tags");
    out
}

/// The lower-cased text `q`/`search` looks into: name, phone, e-mail and company.
pub fn search_text(f: &ContactFields) -> String {
    [
        f.full_name.as_deref(),
        f.primary_phone.as_ref().map(Phone::as_str),
        f.primary_email.as_deref(),
        f.company.as_deref(),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join("\n")
    .to_lowercase()
}

/// Checks and normalises an identity's external id for its channel type: digits for
/// MESSAGING_APP_A, SMS and VOICE (a leading `+` and separators are dropped), an e-mail
/// address (lower-cased) for EMAIL, a trimmed handle without spaces otherwise.
pub fn normalize_external_id(channel: ChannelType, raw: &str) -> Result<String, String> {
    let raw = raw.trim();
    match channel {
        ChannelType::MessagingAppA | ChannelType::Sms | ChannelType::Voice => {
            let with_plus = if raw.starts_with('+') {
                raw.to_owned()
            } else {
                format!("+{raw}")
            };
            Phone::parse(&with_plus)
                .map(|p| p.digits().to_owned())
                .map_err(|_| format!("externalId must be 6 to 15 digits for {channel}"))
        }
        ChannelType::Email => {
            if crate::validate::is_email(raw) {
                Ok(raw.to_lowercase())
            } else {
                Err("externalId must be an email".to_owned())
            }
        }
        _ => {
            if raw.is_empty() || raw.chars().any(char::is_whitespace) {
                Err(format!(
                    "externalId must be a handle without spaces for {channel}"
                ))
            } else {
                Ok(raw.to_owned())
            }
        }
    }
}

/// When consent was last given, for display: the given time or, when absent, `None`.
pub fn consent_at(c: &Consent) -> Option<Timestamp> {
    c.at
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::Validated;
    use serde_json::json;

    fn create(v: serde_json::Value) -> Result<CreateContact, Vec<String>> {
        crate::validate::parse_value(CreateContact::schema(), v)
    }

    #[test]
    fn create_schema_enforces_the_limits_table() {
        let e = create(json!({
            "fullName": "x".repeat(161), "company": "c".repeat(161), "country": "MEX",
            "primaryPhone": "+52 55 1234 5678 0000000000000000000", "tags": vec!["t"; 51],
            "note": "n".repeat(4001), "source": "FAX", "primaryEmail": "nope", "foo": 1
        }))
        .unwrap_err();
        for m in [
            "property foo should not exist",
            "fullName must be shorter than or equal to 160 characters",
            "company must be shorter than or equal to 160 characters",
            "country must be shorter than or equal to 2 characters",
            "primaryPhone must be shorter than or equal to 32 characters",
            "tags must contain no more than 50 elements",
            "note must be shorter than or equal to 4000 characters",
            "primaryEmail must be an email",
        ] {
            assert!(e.contains(&m.to_owned()), "missing {m:?} in {e:?}");
        }
        assert!(e.iter().any(|m| m.starts_with("source must be one of the following values: OTHER, MANUAL")));
        assert!(
            create(json!({
                "fullName": "x".repeat(160), "country": "MX", "tags": vec!["t"; 50],
                "note": "n".repeat(4000), "primaryPhone": "+52 55 1234 5678"
            }))
            .is_ok()
        );
    }

    #[test]
    fn new_contact_normalises() {
        let body = create(json!({
            "fullName": "  Ana  ", "primaryPhone": "+52 (55) 1234-5678",
            "country": "mx", "tags": ["VIP", "vip", " Lead "]
        }))
        .unwrap();
        let f = new_contact(body).unwrap();
        assert_eq!(f.full_name.as_deref(), Some("Ana"));
        assert_eq!(f.primary_phone.unwrap().as_str(), "+525512345678");
        assert_eq!(f.country.as_deref(), Some("MX"));
        assert_eq!(f.tags, vec!["VIP", "Lead"]);
        assert_eq!(f.source, ContactSource::Manual);
        assert!(!f.consent.given);
    }

    #[test]
    fn update_reports_only_real_changes() {
        let current =
            new_contact(create(json!({"fullName": "Ana", "tags": ["a"]})).unwrap()).unwrap();
        let patch: UpdateContact = crate::validate::parse_value(
            UpdateContact::schema(),
            json!({"fullName": "Ana", "company": "Acme", "tags": ["A"], "ownerId": null}),
        )
        .unwrap();
        let (next, changed) = apply_update(&current, patch).unwrap();
        assert_eq!(changed, vec!["company", "tags"]);
        assert_eq!(next.company.as_deref(), Some("Acme"));
    }

    #[test]
    fn patch_refuses_null_where_null_means_nothing() {
        let e = crate::validate::parse_value::<UpdateContact>(
            UpdateContact::schema(),
            json!({"optedOut": null, "tags": null}),
        )
        .unwrap_err();
        assert_eq!(
            e,
            vec![
                "optedOut must be a boolean value",
                "tags must contain no more than 50 elements",
                "tags must be an array"
            ]
        );
    }

    #[test]
    fn external_ids_are_checked_per_channel() {
        assert_eq!(
            normalize_external_id(ChannelType::MessagingAppA, "+52 55 1234 5678").unwrap(),
            "525512345678"
        );
        assert!(normalize_external_id(ChannelType::Sms, "abc").is_err());
        assert_eq!(
            normalize_external_id(ChannelType::Email, "Ana@Example.com").unwrap(),
            "ana@example.com"
        );
        assert!(normalize_external_id(ChannelType::Email, "ana").is_err());
        assert_eq!(
            normalize_external_id(ChannelType::SocialAppA, " @ana ").unwrap(),
            "@ana"
        );
        assert!(normalize_external_id(ChannelType::SocialAppA, "a b").is_err());
    }

    #[test]
    fn list_query_schema() {
        let s = ListContactsQuery::schema();
        let pairs: Vec<(String, String)> = vec![
            ("ownerId".into(), "none".into()),
            ("days".into(), "30".into()),
            ("ids".into(), "67e55044-10b1-426f-9247-bb680e5fe0c8".into()),
        ];
        let q: ListContactsQuery = crate::validate::parse_value(s, s.query_value(&pairs)).unwrap();
        assert_eq!(q.days, Some(30));
        let pairs: Vec<(String, String)> = vec![
            (
                "ownerId".into(),
                "67E55044-10B1-426F-9247-BB680E5FE0C8".into(),
            ),
            ("days".into(), "31".into()),
            ("tab".into(), "vip".into()),
        ];
        let e = crate::validate::parse_value::<ListContactsQuery>(s, s.query_value(&pairs))
            .unwrap_err();
        assert_eq!(
            e,
            vec![
                "tab must be one of the following values: all, leads, in_progress, customers, inactive, no_consent",
                "ownerId must be the word none or a lowercase UUID",
                "days must be one of the following values: 7, 30, 90",
            ]
        );
    }
}
