//! WhatsApp users as the platform knows them for the business: phone number (`wa_id`),
//! business-scoped user id (BSUID), parent BSUID, username, and whether webhooks may
//! carry the phone.
//!
//! Why a registry: since April 2026 every webhook carries the user's BSUID
//! (`user_id`, `from_user_id`, `recipient_user_id`: "Always included"), a send may
//! address the user by BSUID (`recipient`) instead of phone (`to`), and a user with a
//! username has their phone withheld from webhooks unless the business "messaged or
//! called the user's phone number within the last 30 days", received a message or call
//! from it, or has them in its contact book
//! (<https://developers.facebook.com/documentation/business-messaging/whatsapp/business-scoped-user-ids/>).
//! Every per-user feature of the fake (the customer-service window, injections,
//! ambiguous outcomes) is keyed by the user found here, so it works whichever way the
//! app addresses them.
//!
//! Behaviour chosen, and why:
//! * A phone never registered gets a generated BSUID the first time the fake needs one:
//!   `<ISO2>.<19 digits>`, the ISO 3166 alpha-2 code from the phone's country calling
//!   code ([`country_of`]; unknown codes give `US`) and the digits from a SHA-256 of the
//!   phone, so the same phone always gets the same BSUID. Such users have no username
//!   and their phone is shared (Meta: for a user without a username `wa_id` is "Always
//!   included").
//! * A send *to the phone* (`to`) marks the phone as shareable from then on: the business
//!   has messaged that phone number, and the contact book records a user "after any
//!   message or call with their phone number". Inbound messages do not: a username
//!   user's message arrives without the phone (Meta's example (b)).
//! * A BSUID change (a phone change regenerates the BSUID) replaces the old id: the old
//!   one no longer resolves, as Meta says BSUIDs are "regenerated".

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::FakeGraph;
use crate::state::Inner;
use crate::validate::wa_id;

/// A WhatsApp user as the platform knows them for the business.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserSpec {
    /// Their phone as a `wa_id` (digits, no `+`); `None` when the platform has none to
    /// give the business.
    #[serde(default)]
    pub phone: Option<String>,
    /// The business-scoped user id (BSUID), e.g. `US.13491208655302741918`.
    pub user_id: String,
    /// The parent BSUID (managed businesses only), e.g. `US.ENT.11815799212886844830`.
    #[serde(default)]
    pub parent_user_id: Option<String>,
    /// The username they adopted, if any (shown in `contacts[].profile.username`).
    #[serde(default)]
    pub username: Option<String>,
    /// Whether webhooks may carry the phone (`false`: a username user the business has
    /// not talked to in 30 days and who is not in its contact book).
    #[serde(default = "yes")]
    pub phone_shared: bool,
}

fn yes() -> bool {
    true
}

/// One user plus what the fake learnt about them.
#[derive(Debug, Clone)]
pub(crate) struct User {
    pub spec: UserSpec,
    /// The last profile name an inbound message carried.
    pub name: Option<String>,
}

/// The users, with indexes by BSUID, parent BSUID and phone. A user's index never
/// changes, so per-user state keyed by it survives BSUID and phone changes.
#[derive(Debug, Default)]
pub(crate) struct Registry {
    users: Vec<User>,
    by_user_id: HashMap<String, usize>,
    by_parent: HashMap<String, usize>,
    by_phone: HashMap<String, usize>,
}

/// What webhooks need to know about a user, copied out of the lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Snapshot {
    pub user_id: String,
    pub parent_user_id: Option<String>,
    pub username: Option<String>,
    /// The phone, only when webhooks may carry it.
    pub shared_phone: Option<String>,
    /// The profile name (`Test User` until an inbound message tells another).
    pub name: String,
}

impl Snapshot {
    /// `{"profile":{"name","username"?},"wa_id"?,"user_id","parent_user_id"?}`, the
    /// `contacts[]` entry of messages, statuses and `user_preferences` webhooks.
    pub(crate) fn contact(&self, with_username: bool) -> Value {
        let mut profile = json!({ "name": self.name });
        if with_username && let Some(u) = &self.username {
            profile["username"] = json!(u);
        }
        let mut c = json!({ "profile": profile });
        if let Some(p) = &self.shared_phone {
            c["wa_id"] = json!(p);
        }
        c["user_id"] = json!(self.user_id);
        if let Some(p) = &self.parent_user_id {
            c["parent_user_id"] = json!(p);
        }
        c
    }
}

/// Whether `s` is written like a BSUID or parent BSUID: an ISO 3166 alpha-2 code, a
/// period, then alphanumerics (a parent BSUID has `ENT.` after the country).
pub fn is_user_id(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() > 3
        && b[0].is_ascii_uppercase()
        && b[1].is_ascii_uppercase()
        && b[2] == b'.'
        && b[3..]
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || *c == b'.')
        && !s.ends_with('.')
}

/// Country calling codes → ISO 3166 alpha-2, longest prefix first.
const COUNTRIES: &[(&str, &str)] = &[
    ("351", "PT"),
    ("353", "IE"),
    ("502", "GT"),
    ("503", "SV"),
    ("504", "HN"),
    ("505", "NI"),
    ("506", "CR"),
    ("507", "PA"),
    ("591", "BO"),
    ("593", "EC"),
    ("595", "PY"),
    ("598", "UY"),
    ("971", "AE"),
    ("966", "SA"),
    ("234", "NG"),
    ("20", "EG"),
    ("27", "ZA"),
    ("31", "NL"),
    ("32", "BE"),
    ("33", "FR"),
    ("34", "ES"),
    ("39", "IT"),
    ("41", "CH"),
    ("43", "AT"),
    ("44", "GB"),
    ("49", "DE"),
    ("51", "PE"),
    ("52", "MX"),
    ("53", "CU"),
    ("54", "AR"),
    ("55", "BR"),
    ("56", "CL"),
    ("57", "CO"),
    ("58", "VE"),
    ("61", "AU"),
    ("62", "ID"),
    ("63", "PH"),
    ("81", "JP"),
    ("86", "CN"),
    ("90", "TR"),
    ("91", "IN"),
    ("92", "PK"),
    ("1", "US"),
    ("7", "RU"),
];

/// The ISO 3166 alpha-2 code of a phone's country calling code (`US` when unknown).
pub fn country_of(phone: &str) -> &'static str {
    let digits = wa_id(phone);
    for len in [3, 2, 1] {
        if let Some(&(_, iso)) = COUNTRIES
            .iter()
            .find(|(cc, _)| cc.len() == len && digits.starts_with(cc))
        {
            return iso;
        }
    }
    "US"
}

/// The BSUID the fake generates for a phone it was not told about: `<ISO2>.` and a
/// 19-digit number from a SHA-256 of the digits (`salt` > 0 only on a collision).
pub fn generated_user_id(phone: &str, salt: u32) -> String {
    let digits = wa_id(phone);
    let mut h = Sha256::new();
    h.update(digits.as_bytes());
    if salt > 0 {
        h.update(salt.to_be_bytes());
    }
    let hash = h.finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&hash[..8]);
    let n = 1_000_000_000_000_000_000 + u64::from_be_bytes(first) % 9_000_000_000_000_000_000;
    format!("{}.{n}", country_of(&digits))
}

impl Registry {
    pub(crate) fn get(&self, i: usize) -> Option<&User> {
        self.users.get(i)
    }

    pub(crate) fn get_mut(&mut self, i: usize) -> Option<&mut User> {
        self.users.get_mut(i)
    }

    fn unindex(&mut self, i: usize) {
        let Some(u) = self.users.get(i) else { return };
        let spec = u.spec.clone();
        if self.by_user_id.get(&spec.user_id) == Some(&i) {
            self.by_user_id.remove(&spec.user_id);
        }
        if let Some(p) = &spec.parent_user_id
            && self.by_parent.get(p) == Some(&i)
        {
            self.by_parent.remove(p);
        }
        if let Some(p) = &spec.phone
            && self.by_phone.get(p) == Some(&i)
        {
            self.by_phone.remove(p);
        }
    }

    fn index(&mut self, i: usize) {
        let Some(u) = self.users.get(i) else { return };
        let spec = u.spec.clone();
        self.by_user_id.insert(spec.user_id, i);
        if let Some(p) = spec.parent_user_id {
            self.by_parent.insert(p, i);
        }
        if let Some(p) = spec.phone {
            self.by_phone.insert(p, i);
        }
    }

    /// Replaces user `i`'s spec, keeping the indexes right.
    pub(crate) fn set_spec(&mut self, i: usize, spec: UserSpec) {
        self.unindex(i);
        if let Some(u) = self.users.get_mut(i) {
            u.spec = spec;
        }
        self.index(i);
    }

    /// Registers `spec`, updating the user with the same BSUID (else the same phone).
    pub(crate) fn upsert(&mut self, mut spec: UserSpec) -> usize {
        spec.phone = spec.phone.as_deref().map(wa_id).filter(|p| !p.is_empty());
        let existing = self.by_user_id.get(&spec.user_id).copied().or_else(|| {
            spec.phone
                .as_ref()
                .and_then(|p| self.by_phone.get(p).copied())
        });
        match existing {
            Some(i) => {
                self.set_spec(i, spec);
                i
            }
            None => {
                self.users.push(User { spec, name: None });
                let i = self.users.len() - 1;
                self.index(i);
                i
            }
        }
    }

    /// A BSUID not yet used by another user for `phone`.
    pub(crate) fn fresh_user_id(&self, phone: &str, owner: Option<usize>) -> String {
        let mut salt = 0;
        loop {
            let id = generated_user_id(phone, salt);
            match self.by_user_id.get(&id) {
                Some(i) if Some(*i) != owner => salt += 1,
                _ => return id,
            }
        }
    }

    pub(crate) fn snapshot(&self, i: usize) -> Option<Snapshot> {
        let u = self.users.get(i)?;
        Some(Snapshot {
            user_id: u.spec.user_id.clone(),
            parent_user_id: u.spec.parent_user_id.clone(),
            username: u.spec.username.clone(),
            shared_phone: u.spec.phone.clone().filter(|_| u.spec.phone_shared),
            name: u.name.clone().unwrap_or_else(|| "Test User".to_owned()),
        })
    }
}

/// The user `s` names (a BSUID, a parent BSUID or a phone in any spelling), if known.
pub(crate) fn find(inner: &Inner, s: &str) -> Option<usize> {
    if is_user_id(s) {
        let r = &inner.users;
        return r.by_user_id.get(s).or_else(|| r.by_parent.get(s)).copied();
    }
    let digits = wa_id(s);
    let phone = inner.wa_ids.get(&digits).unwrap_or(&digits);
    inner.users.by_phone.get(phone).copied()
}

/// Like [`find`], but a phone never registered becomes a user with a generated BSUID.
pub(crate) fn resolve(inner: &mut Inner, s: &str) -> Option<usize> {
    if let Some(i) = find(inner, s) {
        return Some(i);
    }
    if is_user_id(s) {
        return None;
    }
    let digits = wa_id(s);
    if digits.is_empty() {
        return None;
    }
    let phone = inner.wa_ids.get(&digits).cloned().unwrap_or(digits);
    let user_id = inner.users.fresh_user_id(&phone, None);
    Some(inner.users.upsert(UserSpec {
        phone: Some(phone),
        user_id,
        parent_user_id: None,
        username: None,
        phone_shared: true,
    }))
}

/// The key per-user state is stored under: the user's index when `s` names a user (or
/// a phone), else `s` itself.
pub(crate) fn key(inner: &mut Inner, s: &str) -> String {
    match resolve(inner, s) {
        Some(i) => key_of(i),
        None => s.to_owned(),
    }
}

/// The key of user `i` (see [`key`]).
pub(crate) fn key_of(i: usize) -> String {
    format!("user#{i}")
}

/// Gives user `i` a new BSUID; returns the old one.
pub(crate) fn change_id(inner: &mut Inner, i: usize, new_user_id: &str) -> Option<String> {
    let mut spec = inner.users.get(i)?.spec.clone();
    let old = std::mem::replace(&mut spec.user_id, new_user_id.to_owned());
    inner.users.set_spec(i, spec);
    Some(old)
}

impl FakeGraph {
    /// Registers (or updates) a WhatsApp user: the user with the same BSUID, else the
    /// same phone, takes this spec (keeping its window and other per-user state).
    pub fn register_user(&self, spec: UserSpec) {
        self.shared.lock().users.upsert(spec);
    }

    /// The user a phone (any spelling), BSUID or parent BSUID names. A phone never
    /// registered gets its generated BSUID here (see [`generated_user_id`]); an unknown
    /// BSUID is `None`.
    pub fn user(&self, phone_or_user_id: &str) -> Option<UserSpec> {
        let mut inner = self.shared.lock();
        let i = resolve(&mut inner, phone_or_user_id)?;
        inner.users.get(i).map(|u| u.spec.clone())
    }

    /// Simulates a BSUID change (without posting a webhook): the user `old` names (a
    /// phone or BSUID) now has `new_user_id`, and `old`'s BSUID no longer resolves.
    /// Returns false if `old` names no user.
    pub fn change_user_id(&self, old: &str, new_user_id: &str) -> bool {
        let mut inner = self.shared.lock();
        match resolve(&mut inner, old) {
            Some(i) => change_id(&mut inner, i, new_user_id).is_some(),
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_ids_are_stable_19_digit_with_the_country() {
        let a = generated_user_id("+52 1 55 1234 5678", 0);
        assert_eq!(a, generated_user_id("5215512345678", 0));
        let (cc, n) = a.split_once('.').unwrap_or_default();
        assert_eq!(cc, "MX");
        assert_eq!(n.len(), 19);
        assert!(n.bytes().all(|b| b.is_ascii_digit()));
        assert_ne!(a, generated_user_id("5215512345678", 1));
        assert!(generated_user_id("16505551234", 0).starts_with("US."));
        assert!(generated_user_id("4915112345678", 0).starts_with("DE."));
        assert!(generated_user_id("99912345", 0).starts_with("US."));
        assert!(generated_user_id("351912345678", 0).starts_with("PT."));
    }

    #[test]
    fn user_ids_are_told_from_phones() {
        assert!(is_user_id("US.13491208655302741918"));
        assert!(is_user_id("US.ENT.11815799212886844830"));
        assert!(!is_user_id("16505551234"));
        assert!(!is_user_id("+1 650 555 1234"));
        assert!(!is_user_id("us.123"));
        assert!(!is_user_id("US."));
    }
}
