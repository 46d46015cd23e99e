//! The Messenger / Instagram state: Pages, people, windows, rate buckets, uploaded
//! attachments, CDN files, logs and knobs. It has its own lock (see
//! [`crate::FakeGraph::msgr`]); like the registry's, it is only held for short
//! synchronous sections, never across an `.await`.

use std::collections::{HashMap, HashSet, VecDeque};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use rand::Rng;

use super::model::{MessengerSend, MessengerSenderAction, PageSpec, PersonSpec, Platform};
use crate::model::WebhookConfig;

/// The standard messaging window: 24 hours after the person's last message.
pub const STANDARD_WINDOW: Duration = Duration::from_secs(24 * 3600);
/// How long after the person's last message a `HUMAN_AGENT` tagged send is allowed.
pub const HUMAN_AGENT_WINDOW: Duration = Duration::from_secs(7 * 24 * 3600);
/// Send API calls per second per Page / IG account for text, links, reactions, stickers.
pub const TEXT_CALLS_PER_SEC: usize = 300;
/// Send API calls per second per Page / IG account for audio or video.
pub const MEDIA_CALLS_PER_SEC: usize = 10;
/// `app_id` in echoes of sends made through the API (Meta's example value).
pub const DEFAULT_APP_ID: u64 = 1_517_776_481_860_111;
/// `app_id` in echoes of replies typed in Meta's Page inbox (Business Suite).
pub const PAGE_INBOX_APP_ID: u64 = 263_902_037_430_900;

/// A registered Page and whether its token expired.
#[derive(Debug, Clone)]
pub(crate) struct Page {
    pub spec: PageSpec,
    pub token_expired_at: Option<DateTime<Utc>>,
}

/// A registered person, their window and consent.
#[derive(Debug, Clone)]
pub(crate) struct Person {
    pub spec: PersonSpec,
    /// When they last wrote (opens the window).
    pub last_write: Option<DateTime<Utc>>,
    /// Profile readable: they wrote at least once.
    pub consented: bool,
    /// `set_profile_failure`: the profile API answers this code.
    pub profile_failure: Option<i64>,
}

/// Send API calls in the last second, per bucket, and the forced-throttle counter.
#[derive(Debug, Default)]
pub(crate) struct Limits {
    pub text: VecDeque<Instant>,
    pub media: VecDeque<Instant>,
    pub forced: u32,
}

/// An attachment uploaded (Attachment Upload API, or a reusable send).
#[derive(Debug, Clone)]
pub(crate) struct Attachment {
    pub page_id: String,
    pub platform: Platform,
    pub kind: String,
    pub mime: String,
    pub bytes: Vec<u8>,
    /// The URL it was taken from, for a URL upload.
    pub url: Option<String>,
}

/// A file served on the fake's CDN-like paths.
#[derive(Debug, Clone)]
pub(crate) struct CdnFile {
    pub signature: String,
    pub mime: String,
    pub bytes: Vec<u8>,
    pub expires: DateTime<Utc>,
}

/// Everything behind the Messenger lock.
#[derive(Debug)]
pub(crate) struct Store {
    pub pages: HashMap<String, Page>,
    /// Page token → Page id.
    pub tokens: HashMap<String, String>,
    /// IG account id → Page id.
    pub ig_pages: HashMap<String, String>,
    /// (account id, scoped id) → person.
    pub people: HashMap<(String, String), Person>,
    pub limits: HashMap<String, Limits>,
    pub attachments: HashMap<String, Attachment>,
    pub cdn: HashMap<String, CdnFile>,
    pub sends: Vec<MessengerSend>,
    /// Scoped ids whose next accepted message is never answered (the exchange hangs).
    pub hang_next: HashSet<String>,
    pub sender_actions: Vec<MessengerSenderAction>,
    /// Accounts whose sends are echoed.
    pub echoes: HashSet<String>,
    pub page_webhook: Option<WebhookConfig>,
    pub instagram_webhook: Option<WebhookConfig>,
    pub app_id: u64,
    pub cdn_ttl: Duration,
}

impl Default for Store {
    fn default() -> Self {
        Self {
            pages: HashMap::new(),
            tokens: HashMap::new(),
            ig_pages: HashMap::new(),
            people: HashMap::new(),
            limits: HashMap::new(),
            attachments: HashMap::new(),
            cdn: HashMap::new(),
            sends: Vec::new(),
            hang_next: HashSet::new(),
            sender_actions: Vec::new(),
            echoes: HashSet::new(),
            page_webhook: None,
            instagram_webhook: None,
            app_id: DEFAULT_APP_ID,
            cdn_ttl: Duration::from_secs(3600),
        }
    }
}

/// A numeric id of `len` digits, not starting with 0 (Graph ids are decimal strings).
pub(crate) fn numeric_id(len: usize) -> String {
    let mut rng = rand::rng();
    let mut s = String::with_capacity(len);
    s.push(char::from(b'1' + rng.random_range(0..9u8)));
    for _ in 1..len {
        s.push(char::from(b'0' + rng.random_range(0..10u8)));
    }
    s
}

impl Store {
    /// The platform of an account id: a Page (Messenger) or a linked IG account.
    pub fn platform_of(&self, account_id: &str) -> Option<Platform> {
        if self.pages.contains_key(account_id) {
            Some(Platform::Messenger)
        } else if self.ig_pages.contains_key(account_id) {
            Some(Platform::Instagram)
        } else {
            None
        }
    }

    /// The Page an account (Page or linked IG account) belongs to.
    pub fn page_of(&self, account_id: &str) -> Option<&Page> {
        match self.platform_of(account_id)? {
            Platform::Messenger => self.pages.get(account_id),
            Platform::Instagram => self.pages.get(self.ig_pages.get(account_id)?),
        }
    }

    /// The person `scoped_id` of `account_id`.
    pub fn person(&self, account_id: &str, scoped_id: &str) -> Option<&Person> {
        self.people
            .get(&(account_id.to_owned(), scoped_id.to_owned()))
    }

    /// The person, registered on the fly (names `Test User`) when unknown.
    pub fn person_mut(&mut self, account_id: &str, scoped_id: &str) -> &mut Person {
        self.people
            .entry((account_id.to_owned(), scoped_id.to_owned()))
            .or_insert_with(|| Person {
                spec: PersonSpec {
                    account_id: account_id.to_owned(),
                    scoped_id: scoped_id.to_owned(),
                    first_name: "Test".to_owned(),
                    last_name: "User".to_owned(),
                    name: "Test User".to_owned(),
                    username: None,
                    profile_pic: None,
                },
                last_write: None,
                consented: false,
                profile_failure: None,
            })
    }

    /// Whether `scoped_id` is a person of some account other than `except`, or an IG
    /// account id: an "Instagram user id" that cannot be a recipient through this Page.
    pub fn is_foreign_instagram_id(&self, scoped_id: &str, except: Option<&str>) -> bool {
        self.ig_pages.contains_key(scoped_id)
            || self.people.keys().any(|(account, id)| {
                id == scoped_id
                    && Some(account.as_str()) != except
                    && self.ig_pages.contains_key(account)
            })
    }

    /// Whether the `scoped_id` names a person of any account.
    pub fn knows_scoped_id(&self, scoped_id: &str) -> bool {
        self.people.keys().any(|(_, id)| id == scoped_id)
    }

    /// Whether a send of `messaging_type` (+ `human_agent` tag) to this person is inside
    /// their window now.
    pub fn window_allows(&self, account_id: &str, scoped_id: &str, human_agent: bool) -> bool {
        let Some(last) = self
            .person(account_id, scoped_id)
            .and_then(|p| p.last_write)
        else {
            return false;
        };
        let window = if human_agent {
            HUMAN_AGENT_WINDOW
        } else {
            STANDARD_WINDOW
        };
        let window =
            chrono::Duration::from_std(window).unwrap_or_else(|_| chrono::Duration::days(1));
        Utc::now() <= last + window
    }

    /// Records that the person wrote at `at`: the window (re)opens and the profile
    /// becomes readable.
    pub fn touch(&mut self, account_id: &str, scoped_id: &str, at: DateTime<Utc>) {
        let person = self.person_mut(account_id, scoped_id);
        if person.last_write.is_none_or(|l| l < at) {
            person.last_write = Some(at);
        }
        person.consented = true;
    }
}
