//! The receiving half of a messaging platform, provider-neutral: what a platform can tell
//! wm ([`PlatformEvent`]) and how its webhooks are checked and read ([`PlatformIntake`]);
//! and what a channel is, as data ([`descriptor`]).
//!
//! The sending half is [`crate::provider::MessagingProvider`]. A provider implements both in
//! its own module of the server (`provider/<name>/`); everything after the parse (contacts,
//! conversations, messages, receipts) sees only these types.

use wm_types::messages::{MessageInteractive, MessageLocation, MessageType};

use crate::provider::StatusUpdate;

pub mod descriptor;

pub use descriptor::{Descriptor, Identity, Window};

/// A platform's text with U+0000 replaced: PostgreSQL refuses it in text columns, and no
/// person means it.
pub fn no_nul(s: &str) -> String {
    s.replace('\0', "\u{FFFD}")
}

/// One thing the platform told us.
#[derive(Debug, Clone, PartialEq)]
pub enum PlatformEvent {
    /// A sent message's status changed (`sent`, `delivered`, `read`, `failed`).
    Status {
        /// The business account it was sent from (WhatsApp: the phone number id).
        account: String,
        /// The status, with the correlation id the message was sent with.
        update: StatusUpdate,
        /// The platform's error code of a failure.
        code: Option<i64>,
    },
    /// A person wrote to a business account (every kind, unknown kinds included: whoever
    /// writes is never lost). Boxed: a message's content is far larger than the others.
    Inbound(Box<InboundMessage>),
    /// A person moved their account to a new number.
    NumberChanged {
        /// The business account told.
        account: String,
        /// The platform's id of the notice (for de-duplicating redeliveries).
        message_id: String,
        /// The person, as they were known before.
        from: Person,
        /// Their new number's digits.
        to: String,
        /// Their new scoped id, when the platform gives one (WhatsApp makes a new
        /// business-scoped user id with a new number).
        user_id: Option<String>,
    },
    /// A person's scoped id changed (WhatsApp: `user_id_update`, or a
    /// `user_changed_user_id` system message).
    UserIdChanged {
        /// The business account told.
        account: String,
        /// The person (their phone when the platform shares it).
        person: Person,
        /// The id they had.
        previous: String,
        /// The id they have now.
        current: String,
        /// Their new parent id, when the platform gives one.
        parent: Option<String>,
    },
    /// A person stopped or resumed a business's marketing messages from the chat.
    Preference {
        /// The business account concerned.
        account: String,
        /// Who.
        person: Person,
        /// `true` for stop, `false` for resume.
        stop: bool,
    },
    /// A template's review status changed.
    TemplateStatus {
        /// The business account that owns it (WhatsApp: the WABA id).
        business_account: String,
        /// Template name.
        name: String,
        /// Language code.
        language: String,
        /// The platform's event (`APPROVED`, `PAUSED`, `REJECTED`, …).
        status: String,
        /// Why, when the platform says.
        reason: Option<String>,
        /// The status wm stores for it (`None`: the event changes no status, e.g. a quality
        /// warning).
        new_status: Option<String>,
        /// The `stopReason` of campaigns sending it, when it can no longer be sent.
        stop_reason: Option<&'static str>,
    },
    /// A business number's quality or messaging limit changed.
    Quality {
        /// The business account that owns the number (WhatsApp: the WABA id).
        business_account: String,
        /// The number as the platform displays it (digits).
        display_phone_number: String,
        /// The event (`FLAGGED`, `UNFLAGGED`, `UPGRADE`, …).
        event: String,
        /// The rating the event implies.
        rating: Option<&'static str>,
    },
    /// The business sent a message from somewhere other than wm (Meta's own inbox, another
    /// app on the Page), or wm's own send came back (an echo): shown in the thread as the
    /// business's, never as the person's.
    Echo(Box<EchoMessage>),
    /// The person's app got (`Delivered`) or showed (`Read`) every message sent before a
    /// moment, or up to a message (Instagram's seen names one).
    Watermark {
        /// The business account.
        account: String,
        /// Who.
        person: Person,
        /// DELIVERED or READ.
        status: wm_types::enums::RecipientStatus,
        /// Every message sent at or before this instant (ms since epoch).
        upto_ms: Option<i64>,
        /// Messages named one by one (Messenger's `delivery.mids`, Instagram's `read.mid`:
        /// that one and every earlier one).
        message_ids: Vec<String>,
    },
    /// A part of the webhook wm cannot apply (a message without a sender, a status or field
    /// it does not know): never dropped in silence, it is logged, counted and kept for an
    /// operator to see.
    Unapplied(Unapplied),
}

/// A webhook part wm cannot apply, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unapplied {
    /// The business account it names, when it names one.
    pub account: Option<String>,
    /// Why, in a few fixed words (a metric label).
    pub reason: &'static str,
    /// The part as the platform sent it (JSON, cut at 4 KiB).
    pub part: String,
}

impl Unapplied {
    /// The most of a part kept.
    pub const MAX_PART: usize = 4096;

    /// `part` kept for `reason`, cut to [`Self::MAX_PART`] bytes at a character boundary.
    pub fn new(account: Option<&str>, reason: &'static str, part: &str) -> Unapplied {
        let mut end = part.len().min(Self::MAX_PART);
        while !part.is_char_boundary(end) {
            end -= 1;
        }
        Unapplied {
            account: account.map(str::to_owned),
            reason,
            part: part[..end].replace('\0', "\u{FFFD}"),
        }
    }
}

impl PlatformEvent {
    /// The business account (WhatsApp: phone number) the event is about; `None` for the
    /// ones about a whole business (a template's status, a number's quality), and for an
    /// unapplied part that names none.
    pub fn account(&self) -> Option<&str> {
        match self {
            PlatformEvent::Status { account, .. }
            | PlatformEvent::NumberChanged { account, .. }
            | PlatformEvent::UserIdChanged { account, .. }
            | PlatformEvent::Preference { account, .. }
            | PlatformEvent::Watermark { account, .. } => Some(account),
            PlatformEvent::Inbound(m) => Some(&m.account),
            PlatformEvent::Echo(m) => Some(&m.account),
            PlatformEvent::Unapplied(u) => u.account.as_deref(),
            PlatformEvent::TemplateStatus { .. } | PlatformEvent::Quality { .. } => None,
        }
    }
}

/// A person as the platform names them: by phone where it shares one, by its own scoped id
/// (WhatsApp's business-scoped user id), or both.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Person {
    /// Their phone's digits (WhatsApp: `wa_id`, `from`), when the platform shares it.
    pub phone: Option<String>,
    /// The platform's id of them (WhatsApp: the business-scoped user id).
    pub user_id: Option<String>,
    /// A parent id shared across a managed business's portfolios (WhatsApp).
    pub parent_user_id: Option<String>,
    /// The username they show instead of a phone.
    pub username: Option<String>,
    /// Their profile name.
    pub name: Option<String>,
}

impl Person {
    /// Someone known only by phone.
    pub fn by_phone(digits: impl Into<String>) -> Person {
        Person {
            phone: Some(digits.into()),
            ..Person::default()
        }
    }

    /// Whether the platform named them at all.
    pub fn is_named(&self) -> bool {
        self.phone.is_some() || self.user_id.is_some()
    }
}

/// A message a person sent to a business account.
#[derive(Debug, Clone, PartialEq)]
pub struct InboundMessage {
    /// The business account written to (WhatsApp: the phone number id).
    pub account: String,
    /// The platform's id of the message (for de-duplicating redeliveries).
    pub message_id: String,
    /// Who wrote.
    pub from: Person,
    /// When they sent it (ms since epoch).
    pub at_ms: Option<i64>,
    /// What they sent.
    pub content: Content,
    /// The platform's id of the message it quotes or replies to.
    pub context_id: Option<String>,
}

/// A message the business sent outside wm, as the platform echoed it.
#[derive(Debug, Clone, PartialEq)]
pub struct EchoMessage {
    /// The business account that sent it.
    pub account: String,
    /// The platform's id of the message.
    pub message_id: String,
    /// Who it was sent to.
    pub to: Person,
    /// When (ms since epoch).
    pub at_ms: Option<i64>,
    /// What it held.
    pub content: Content,
    /// The app that sent it, when the platform says (Meta's own inbox is 263902037430900).
    pub app_id: Option<String>,
}

/// A story of the person a message answers or mentions (Instagram).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Story {
    /// `REPLY` (the message answers their story) or `MENTION` (their story mentions the
    /// business).
    pub kind: &'static str,
    /// The story's link, while the platform keeps it (never its media: Meta forbids
    /// storing it).
    pub url: Option<String>,
    /// The platform's id of the story.
    pub id: Option<String>,
}

/// What a message holds, as the platform gave it.
#[derive(Debug, Clone, PartialEq)]
pub struct Content {
    /// The kind.
    pub kind: MessageType,
    /// The platform's own name of the kind (`text`, `unsupported`, a kind added later), kept
    /// so an UNSUPPORTED message still says what it was.
    pub platform_type: String,
    /// Text, caption, or a button's or reply's title.
    pub text: Option<String>,
    /// A media file to fetch from the platform.
    pub media: Option<InboundMedia>,
    /// A shared location.
    pub location: Option<MessageLocation>,
    /// A button or list reply.
    pub interactive: Option<MessageInteractive>,
    /// Shared contact cards, as the platform sent them.
    pub contacts: Option<Vec<serde_json::Value>>,
    /// A reaction: the platform's id of the message reacted to, and the emoji (`None` when
    /// removed).
    pub reaction: Option<(String, Option<String>)>,
    /// An order, as the platform sent it.
    pub order: Option<serde_json::Value>,
    /// The story it answers or that mentions the business.
    pub story: Option<Story>,
}

impl Content {
    /// A message of `kind` with nothing filled in yet.
    pub fn of(kind: MessageType, platform_type: impl Into<String>) -> Content {
        Content {
            kind,
            platform_type: platform_type.into(),
            text: None,
            media: None,
            location: None,
            interactive: None,
            contacts: None,
            reaction: None,
            order: None,
            story: None,
        }
    }
}

/// A media file the platform holds for a while (WhatsApp: 7 days) under its own id.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InboundMedia {
    /// The platform's media id.
    pub platform_id: String,
    /// MIME type.
    pub mime_type: Option<String>,
    /// SHA-256 of the file as the platform reports it (hex or base64, as given).
    pub sha256: Option<String>,
    /// File name (documents).
    pub filename: Option<String>,
}

/// The answer to a subscription handshake.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Handshake {
    /// Subscribed: answer with this body (`text/plain`).
    Accept(String),
    /// Not ours: 403.
    Refuse,
}

/// The receiving half of a platform: its webhook handshake, the check that a body came from
/// it, and the reading of a body into events. Pure and synchronous: the server keeps the
/// body first and parses it later (a crash between the two loses nothing).
pub trait PlatformIntake: Send + Sync + 'static {
    /// The provider's path segment and stored name (`/platform/{name}/webhook`).
    fn name(&self) -> &'static str;

    /// Answers a `GET` on the webhook URL (the subscription handshake), given its query
    /// parameters.
    fn handshake(&self, query: &[(String, String)]) -> Handshake;

    /// Whether a delivered body is really the platform's, given a header lookup
    /// (case-insensitive names) and the raw body.
    fn verify(&self, header: &dyn Fn(&str) -> Option<String>, body: &[u8]) -> bool;

    /// Reads a body into events; `Err` only when it is not the platform's envelope at all
    /// (unknown parts inside it are skipped).
    fn parse(&self, body: &[u8]) -> Result<Vec<PlatformEvent>, String>;
}

/// A media file fetched from the platform.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// The bytes.
    pub bytes: Vec<u8>,
    /// Its MIME type as the platform says.
    pub mime_type: Option<String>,
}

/// Why a media file was not fetched.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    /// The platform no longer has it, or will never give it to us (unknown id, expired,
    /// too large): not tried again.
    #[error("gone: {0}")]
    Gone(String),
    /// Not now (an outage, a timeout, a rate limit): tried again later.
    #[error("retry later: {0}")]
    RetryLater(String),
}

/// Where inbound media is fetched from: the platform that received it, with the business
/// number's account (its media id lives a limited time there, WhatsApp: 7 days).
#[async_trait::async_trait]
pub trait MediaSource: Send + Sync + 'static {
    /// The provider's name, as its [`PlatformIntake::name`].
    fn name(&self) -> &'static str;

    /// Fetches the file the platform knows as `media_id`, at most `max_bytes` long.
    async fn fetch(
        &self,
        media_id: &str,
        account: &crate::provider::PlatformAccount,
        max_bytes: u64,
    ) -> Result<Fetched, FetchError>;
}

/// What the platform says of a person, once they wrote (Meta refuses before).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Profile {
    /// Their name as they show it.
    pub name: Option<String>,
    /// Their username (Instagram).
    pub username: Option<String>,
}

/// Where a person's profile is read (Meta's User Profile API), with the account they
/// wrote to.
#[async_trait::async_trait]
pub trait ProfileSource: Send + Sync + 'static {
    /// The profile of the person the platform knows as `scoped_id`.
    async fn profile(
        &self,
        scoped_id: &str,
        account: &crate::provider::PlatformAccount,
    ) -> Result<Profile, FetchError>;
}

/// A message template as the platform lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlatformTemplate {
    /// Template name.
    pub name: String,
    /// Language and locale code (`es_MX`).
    pub language: String,
    /// Review status (`APPROVED`, `PAUSED`, …).
    pub status: String,
    /// `MARKETING`, `UTILITY` or `AUTHENTICATION`.
    pub category: String,
    /// The BODY component's text, with its `{{n}}` placeholders.
    pub body_text: Option<String>,
}

/// Where a business account's templates are listed (WhatsApp: a WABA's
/// `message_templates`), for the operator's template sync.
#[async_trait::async_trait]
pub trait TemplateCatalog: Send + Sync + 'static {
    /// Every template of the business account `account_id`, read with `access_token`.
    async fn list_templates(
        &self,
        account_id: &str,
        access_token: &str,
    ) -> Result<Vec<PlatformTemplate>, String>;
}
