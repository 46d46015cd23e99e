//! Registering Pages and people, the knobs, and the read-back API of the Messenger side.

use std::sync::MutexGuard;
use std::time::Duration;

use chrono::{DateTime, Utc};

use super::model::{
    MessengerAttachment, MessengerSend, MessengerSenderAction, PageSpec, PersonSpec,
};
use super::store::{Page, Store};
use crate::FakeGraph;

impl FakeGraph {
    /// Locks the Messenger state (never while holding the registry's or media's lock).
    pub(crate) fn msgr(&self) -> MutexGuard<'_, Store> {
        self.shared
            .messenger
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Registers (or replaces) a Page, its token and its linked Instagram account.
    pub fn register_page(&self, spec: PageSpec) {
        let mut store = self.msgr();
        if let Some(old) = store.pages.get(&spec.page_id).map(|p| p.spec.clone()) {
            store.tokens.remove(&old.access_token);
            if let Some(ig) = &old.instagram_id {
                store.ig_pages.remove(ig);
            }
        }
        store
            .tokens
            .insert(spec.access_token.clone(), spec.page_id.clone());
        if let Some(ig) = &spec.instagram_id {
            store.ig_pages.insert(ig.clone(), spec.page_id.clone());
        }
        store.pages.insert(
            spec.page_id.clone(),
            Page {
                spec,
                token_expired_at: None,
            },
        );
    }

    /// Registers (or updates) a person of a Page (PSID) or Instagram account (IGSID).
    /// Their window and consent are kept on update; a new person has neither until they
    /// write ([`FakeGraph::messenger_write`]).
    pub fn register_person(&self, spec: PersonSpec) {
        let mut store = self.msgr();
        let person = store.person_mut(&spec.account_id, &spec.scoped_id);
        person.spec = spec;
    }

    /// A registered person.
    pub fn messenger_person(&self, account_id: &str, scoped_id: &str) -> Option<PersonSpec> {
        self.msgr()
            .person(account_id, scoped_id)
            .map(|p| p.spec.clone())
    }

    /// Whether the person's profile is readable (they wrote at least once).
    pub fn messenger_consented(&self, account_id: &str, scoped_id: &str) -> bool {
        self.msgr()
            .person(account_id, scoped_id)
            .is_some_and(|p| p.consented)
    }

    /// Makes the Page's token expired: later calls with it get 190 subcode 463.
    pub fn expire_page_token(&self, page_id: &str) -> bool {
        match self.msgr().pages.get_mut(page_id) {
            Some(p) => {
                p.token_expired_at = Some(Utc::now());
                true
            }
            None => false,
        }
    }

    /// The next `count` Send API calls for the account (a Page id, or an IG account id
    /// for Instagram recipients) answer 613/2534040; 0 clears it.
    pub fn throttle_messenger_next(&self, account_id: &str, count: u32) -> bool {
        let mut store = self.msgr();
        if store.platform_of(account_id).is_none() {
            return false;
        }
        store
            .limits
            .entry(account_id.to_owned())
            .or_default()
            .forced = count;
        true
    }

    /// The next message sent to this PSID/IGSID is accepted (recorded, echoed when echoes
    /// are on) and never answered: the HTTP exchange hangs until the fake shuts down, as a
    /// call whose outcome the sender cannot know.
    pub fn hang_next_messenger_response(&self, scoped_id: &str) {
        self.msgr().hang_next.insert(scoped_id.to_owned());
    }

    /// Makes profile reads of this PSID/IGSID fail with `code` (e.g. 2 transient, 1,
    /// 4, 613, 230, or the subcodes 2018218 / 2018247, answered under code 100); `None`
    /// clears it. Returns whether such a person is registered.
    pub fn set_profile_failure(&self, scoped_id: &str, code: Option<i64>) -> bool {
        let mut store = self.msgr();
        let mut found = false;
        for ((_, id), person) in store.people.iter_mut() {
            if id == scoped_id {
                person.profile_failure = code;
                found = true;
            }
        }
        found
    }

    /// Turns echoes of the account's accepted sends on or off (a Page id for Messenger
    /// `message_echoes`, an IG account id for Instagram `is_echo` messages).
    pub fn set_echoes(&self, account_id: &str, on: bool) {
        let mut store = self.msgr();
        if on {
            store.echoes.insert(account_id.to_owned());
        } else {
            store.echoes.remove(account_id);
        }
    }

    /// The `app_id` put in echoes of API sends (default Meta's example 1517776481860111).
    pub fn set_messenger_app_id(&self, app_id: u64) {
        self.msgr().app_id = app_id;
    }

    /// How long new CDN URLs of written attachments stay valid (default one hour).
    pub fn set_messenger_cdn_ttl(&self, ttl: Duration) {
        self.msgr().cdn_ttl = ttl;
    }

    /// Sets when the person last wrote (`None`: never), moving their window without a
    /// webhook; e.g. `Some(Utc::now() - chrono::Duration::hours(25))` closes the standard
    /// window but leaves the Human Agent one open. Consent is not changed; an unknown
    /// person is registered (names `Test User`).
    pub fn set_last_write(&self, account_id: &str, scoped_id: &str, at: Option<DateTime<Utc>>) {
        self.msgr().person_mut(account_id, scoped_id).last_write = at;
    }

    /// When the person last wrote.
    pub fn last_write(&self, account_id: &str, scoped_id: &str) -> Option<DateTime<Utc>> {
        self.msgr()
            .person(account_id, scoped_id)
            .and_then(|p| p.last_write)
    }

    /// Whether a `RESPONSE`/`UPDATE` send to the person is allowed now (24-hour window).
    pub fn messenger_window_open(&self, account_id: &str, scoped_id: &str) -> bool {
        self.msgr().window_allows(account_id, scoped_id, false)
    }

    /// Every accepted message send (and inbox reply), in acceptance order.
    pub fn messenger_sends(&self) -> Vec<MessengerSend> {
        self.msgr().sends.clone()
    }

    /// Every accepted sender action, in acceptance order.
    pub fn messenger_sender_actions(&self) -> Vec<MessengerSenderAction> {
        self.msgr().sender_actions.clone()
    }

    /// An uploaded attachment: `(mime, bytes)` (bytes empty for a URL the fake did not
    /// fetch).
    pub fn messenger_attachment(&self, attachment_id: &str) -> Option<(String, Vec<u8>)> {
        self.msgr()
            .attachments
            .get(attachment_id)
            .map(|a| (a.mime.clone(), a.bytes.clone()))
    }

    /// What the fake holds about an uploaded attachment.
    pub fn messenger_attachment_info(&self, attachment_id: &str) -> Option<MessengerAttachment> {
        self.msgr()
            .attachments
            .get(attachment_id)
            .map(|a| MessengerAttachment {
                attachment_id: attachment_id.to_owned(),
                page_id: a.page_id.clone(),
                platform: a.platform,
                kind: a.kind.clone(),
                mime: a.mime.clone(),
                url: a.url.clone(),
                size: a.bytes.len(),
            })
    }

    /// Clears the Messenger send and sender-action logs (registrations stay).
    pub fn reset_messenger_logs(&self) {
        let mut store = self.msgr();
        store.sends.clear();
        store.sender_actions.clear();
    }
}
