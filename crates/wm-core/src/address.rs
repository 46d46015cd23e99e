//! Where a message goes: a phone, or the platform's own id of the person where the platform
//! hides or has no phone (WhatsApp's business-scoped user id, `US.13491208655302741918`,
//! for a person who adopted a username).
//!
//! It is stored as one text (a recipient's address, the identity it came from): a phone in
//! its normalised `+…` form, any other id as the platform wrote it. A business-scoped user
//! id starts with the person's ISO 3166 country code and a period, which is the market it
//! is priced in (Meta: "prefixed with the user's ISO 3166 alpha-2 two-letter country code",
//! <https://developers.facebook.com/documentation/business-messaging/whatsapp/business-scoped-user-ids/>).

use crate::phone::Phone;

/// A message's destination.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Address {
    /// A phone number.
    Phone(Phone),
    /// The platform's id of the person (WhatsApp: a business-scoped user id).
    UserId(String),
}

impl Address {
    /// An address as stored: `+…` is a phone, anything else a platform id.
    pub fn from_stored(stored: &str) -> Address {
        if stored.starts_with('+') {
            Address::Phone(Phone::from_stored(stored.to_owned()))
        } else {
            Address::UserId(stored.to_owned())
        }
    }

    /// The stored form.
    pub fn stored(&self) -> &str {
        match self {
            Address::Phone(p) => p.as_str(),
            Address::UserId(id) => id,
        }
    }

    /// The ISO 3166 country a platform id names in its prefix (`US.…` → `US`); `None` for
    /// a phone (its calling code says it) and for an id without one.
    pub fn country(&self) -> Option<&str> {
        match self {
            Address::Phone(_) => None,
            Address::UserId(id) => user_id_country(id),
        }
    }
}

/// Whether `s` has the form of a WhatsApp business-scoped user id: a two-letter country
/// code, a period, optionally `ENT.` (a parent id), then 1–128 letters and digits.
pub fn is_user_id(s: &str) -> bool {
    let Some(rest) = user_id_country(s).map(|_| &s[3..]) else {
        return false;
    };
    let rest = rest.strip_prefix("ENT.").unwrap_or(rest);
    (1..=128).contains(&rest.len()) && rest.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// The country code a business-scoped user id starts with.
fn user_id_country(id: &str) -> Option<&str> {
    let b = id.as_bytes();
    (b.len() > 3 && b[0].is_ascii_uppercase() && b[1].is_ascii_uppercase() && b[2] == b'.')
        .then(|| &id[..2])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_address_reads_back_as_what_it_was() {
        let phone = Address::from_stored("+525512345678");
        assert!(matches!(phone, Address::Phone(_)));
        assert_eq!(phone.stored(), "+525512345678");
        assert_eq!(phone.country(), None);
        let id = Address::from_stored("US.13491208655302741918");
        assert_eq!(id, Address::UserId("US.13491208655302741918".into()));
        assert_eq!(id.country(), Some("US"));
        assert_eq!(
            Address::from_stored("BR.1502576394655843").country(),
            Some("BR")
        );
    }

    #[test]
    fn business_scoped_ids_have_their_documented_form() {
        assert!(is_user_id("US.13491208655302741918"));
        assert!(is_user_id("US.ENT.11815799212886844830"));
        assert!(is_user_id("BR.1502576394655843"));
        assert!(!is_user_id("5215512345678"));
        assert!(!is_user_id("us.1349"));
        assert!(!is_user_id("US."));
        assert!(!is_user_id("US.12-34"));
        assert!(!is_user_id(&format!("US.{}", "1".repeat(129))));
    }
}
