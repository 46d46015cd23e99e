//! The receiving half of a messaging platform, provider-neutral: what a platform can tell
//! wm ([`PlatformEvent`]) and how its webhooks are checked and read ([`PlatformIntake`]).
//!
//! The sending half is [`crate::provider::MessagingProvider`]. A provider implements both in
//! its own module of the server (`provider/<name>/`); everything after the parse (contacts,
//! conversations, messages, receipts) sees only these types.

use wm_types::messages::{MessageInteractive, MessageLocation, MessageType};

use crate::provider::StatusUpdate;

/// One thing the platform told us.
#[derive(Debug, Clone, PartialEq)]
pub enum PlatformEvent {
    /// A sent message's status changed (`sent`, `delivered`, `read`, `failed`).
    Status {
        /// The business number it was sent from (the platform's id of it).
        phone_number_id: String,
        /// The status, with the correlation id the message was sent with.
        update: StatusUpdate,
        /// The platform's error code of a failure.
        code: Option<i64>,
    },
    /// A person wrote to a business number (every kind, unknown kinds included: whoever
    /// writes is never lost). Boxed: a message's content is far larger than the others.
    Inbound(Box<InboundMessage>),
    /// A person moved their account to a new number.
    NumberChanged {
        /// The business number told.
        phone_number_id: String,
        /// The platform's id of the notice (for de-duplicating redeliveries).
        message_id: String,
        /// The old platform id of the person.
        from: String,
        /// The new one.
        to: String,
    },
    /// A person stopped or resumed a business's marketing messages from the chat.
    Preference {
        /// The business number concerned.
        phone_number_id: String,
        /// The person's platform id.
        wa_id: String,
        /// `true` for stop, `false` for resume.
        stop: bool,
    },
    /// A template's review status changed.
    TemplateStatus {
        /// The business account that owns it.
        waba_id: String,
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
        /// The business account that owns the number.
        waba_id: String,
        /// The number as the platform displays it (digits).
        display_phone_number: String,
        /// The event (`FLAGGED`, `UNFLAGGED`, `UPGRADE`, …).
        event: String,
        /// The rating the event implies.
        rating: Option<&'static str>,
    },
}

impl PlatformEvent {
    /// The business number the event is about; `None` for the account-level ones (a
    /// template's status, a number's quality), which name the business account.
    pub fn phone_number_id(&self) -> Option<&str> {
        match self {
            PlatformEvent::Status {
                phone_number_id, ..
            }
            | PlatformEvent::NumberChanged {
                phone_number_id, ..
            }
            | PlatformEvent::Preference {
                phone_number_id, ..
            } => Some(phone_number_id),
            PlatformEvent::Inbound(m) => Some(&m.phone_number_id),
            PlatformEvent::TemplateStatus { .. } | PlatformEvent::Quality { .. } => None,
        }
    }
}

/// A message a person sent to a business number.
#[derive(Debug, Clone, PartialEq)]
pub struct InboundMessage {
    /// The business number written to.
    pub phone_number_id: String,
    /// The platform's id of the message (for de-duplicating redeliveries).
    pub message_id: String,
    /// The person's platform id (WhatsApp: their number's digits).
    pub from: String,
    /// Their profile name.
    pub name: Option<String>,
    /// When they sent it (ms since epoch).
    pub at_ms: Option<i64>,
    /// What they sent.
    pub content: Content,
    /// The platform's id of the message it quotes or replies to.
    pub context_id: Option<String>,
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
