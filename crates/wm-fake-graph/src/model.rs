//! Public data types: what tests register, inject and read back.
//!
//! All of them are serde types because the `/_fake/...` control API takes and
//! returns exactly these, so scripts and Rust tests drive one implementation.

use std::net::SocketAddr;

use serde::{Deserialize, Serialize};

pub use crate::errors::Delivery;
pub use crate::records::{AcceptedMessage, Attempt, AttemptOutcome, ReadMark};
pub use crate::users::UserSpec;

/// Options for [`crate::FakeGraph::start`].
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct FakeGraphOptions {
    /// Where to listen; port 0 picks a free port.
    pub addr: SocketAddr,
    /// Base URL put into `paging.next` links; defaults to `http://<bound addr>`.
    pub public_base_url: Option<String>,
    /// Status-webhook target configured from the start (can be set later too).
    pub webhook: Option<WebhookConfig>,
    /// How many webhook records to keep in the log (oldest dropped first).
    pub webhook_log_cap: usize,
    /// Lifetime of media download URLs (Meta: 5 minutes), in milliseconds.
    pub media_url_ttl_ms: u64,
}

impl Default for FakeGraphOptions {
    fn default() -> Self {
        Self {
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            public_base_url: None,
            webhook: None,
            webhook_log_cap: 100_000,
            media_url_ttl_ms: 300_000,
        }
    }
}

/// A business phone number registered on the fake.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NumberSpec {
    /// The Graph object id used in `/{phone_number_id}/messages`.
    pub phone_number_id: String,
    /// The WhatsApp Business Account that owns the number (and its templates).
    pub waba_id: String,
    /// The `display_phone_number` put in webhook `metadata`.
    pub display_phone_number: String,
    /// The bearer token accepted for this number (and its WABA).
    pub access_token: String,
}

/// Template review status, as the platform spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TemplateStatus {
    /// Usable for sends.
    Approved,
    /// Under review: sends get 132001.
    Pending,
    /// Rejected: sends get 132001.
    Rejected,
    /// Paused for low quality: sends get 132015.
    Paused,
    /// Permanently disabled: sends get 132016.
    Disabled,
    /// Rejection under appeal: sends get 132001.
    InAppeal,
    /// Archived: sends get 132001.
    Archived,
}

impl TemplateStatus {
    /// The wire spelling (`"APPROVED"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Approved => "APPROVED",
            Self::Pending => "PENDING",
            Self::Rejected => "REJECTED",
            Self::Paused => "PAUSED",
            Self::Disabled => "DISABLED",
            Self::InAppeal => "IN_APPEAL",
            Self::Archived => "ARCHIVED",
        }
    }
}

/// A message template to register under a WABA.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TemplateSpec {
    /// Owning WABA.
    pub waba_id: String,
    /// Template name.
    pub name: String,
    /// Language and locale code, e.g. `en_US`.
    pub language: String,
    /// `MARKETING`, `UTILITY` or `AUTHENTICATION`.
    pub category: String,
    /// Review status.
    pub status: TemplateStatus,
    /// BODY text with positional `{{n}}` placeholders.
    pub body_text: String,
}

/// A registered template, as the fake stores it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TemplateInfo {
    /// The numeric template id (a string, as Graph returns it).
    pub id: String,
    /// The registered spec.
    #[serde(flatten)]
    pub spec: TemplateSpec,
    /// Number of distinct `{{n}}` placeholders in the body.
    pub param_count: usize,
}

/// An error to inject for sends to one recipient.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Injection {
    /// The recipient: a phone (any spelling), a BSUID or a parent BSUID, matching sends
    /// to that user whether addressed by `to` or `recipient`; `"*"` matches any recipient.
    pub to: String,
    /// The error code to report.
    pub code: i64,
    /// Sync (the send answers the error) or async (wamid, then `failed`
    /// webhook); `None` uses the code's documented default.
    #[serde(default)]
    pub mode: Option<Delivery>,
    /// Override the documented HTTP status (sync mode), e.g. 500 with code 1.
    #[serde(default)]
    pub http_status: Option<u16>,
    /// Override the documented `details` text.
    #[serde(default)]
    pub details: Option<String>,
    /// How many sends it applies to; `None` = every matching send.
    #[serde(default)]
    pub times: Option<u32>,
    /// Only sends from this business number; `None` = any.
    #[serde(default)]
    pub phone_number_id: Option<String>,
}

impl Injection {
    /// An injection of `code` for every send to `to`, in the code's default mode.
    pub fn new(to: impl Into<String>, code: i64) -> Self {
        Self {
            to: to.into(),
            code,
            mode: None,
            http_status: None,
            details: None,
            times: None,
            phone_number_id: None,
        }
    }

    /// Forces the reporting mode.
    pub fn mode(mut self, mode: Delivery) -> Self {
        self.mode = Some(mode);
        self
    }

    /// Limits the injection to the next `n` matching sends.
    pub fn times(mut self, n: u32) -> Self {
        self.times = Some(n);
        self
    }

    /// Overrides the HTTP status of a synchronous answer.
    pub fn http_status(mut self, status: u16) -> Self {
        self.http_status = Some(status);
        self
    }

    /// Restricts the injection to sends from one business number.
    pub fn from_number(mut self, phone_number_id: impl Into<String>) -> Self {
        self.phone_number_id = Some(phone_number_id.into());
        self
    }
}

/// What happens to the HTTP exchange of an accepted send whose outcome the
/// caller must not be able to learn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AmbiguityKind {
    /// The connection is closed without any response bytes.
    DropConnection,
    /// The response is sent only after this many seconds.
    Delay {
        /// Seconds to wait before answering.
        secs: f64,
    },
    /// No answer until the fake shuts down (then the connection is dropped).
    Hang,
}

/// An ambiguous outcome for the next send(s) to one recipient.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ambiguity {
    /// The recipient (phone, BSUID or parent BSUID, as for [`Injection::to`]); `"*"`
    /// matches any recipient.
    pub to: String,
    /// What happens to the HTTP exchange.
    #[serde(flatten)]
    pub kind: AmbiguityKind,
    /// How many sends (default 1).
    #[serde(default = "one")]
    pub times: u32,
}

fn one() -> u32 {
    1
}

/// Where and how status webhooks are posted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WebhookConfig {
    /// The app's callback URL.
    pub url: String,
    /// The app secret used for `X-Hub-Signature-256`.
    pub app_secret: String,
    /// Status webhook behaviour.
    #[serde(default)]
    pub statuses: StatusOptions,
    /// Redelivery behaviour.
    #[serde(default)]
    pub retry: RetryPolicy,
}

/// Knobs for the status webhooks that follow an accepted send.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StatusOptions {
    /// Post statuses at all.
    pub enabled: bool,
    /// Also post `read` after `delivered`.
    pub read: bool,
    /// Wait this long after acceptance before the first status.
    pub delay_ms: u64,
    /// Gap between consecutive statuses of one message.
    pub step_ms: u64,
    /// Post the statuses of a message in random order.
    pub shuffle: bool,
    /// Post every status twice.
    pub duplicate: bool,
    /// Deliver the first status before the send's HTTP response is returned.
    pub before_response: bool,
    /// Include the `conversation` object (the docs omit it from v24.0 on).
    pub include_conversation: bool,
    /// `pricing.pricing_model`: `PMP` (per-message, current) or `CBP`.
    pub pricing_model: String,
    /// Up to this many statuses of one business number share a webhook
    /// (`statuses[]` holds several). 1 = one status per webhook (default).
    pub max_batch: usize,
    /// How long a partial batch waits for more statuses.
    pub batch_window_ms: u64,
}

impl Default for StatusOptions {
    fn default() -> Self {
        Self {
            enabled: true,
            read: false,
            delay_ms: 0,
            step_ms: 0,
            shuffle: false,
            duplicate: false,
            before_response: false,
            include_conversation: true,
            pricing_model: "PMP".to_owned(),
            max_batch: 1,
            batch_window_ms: 20,
        }
    }
}

/// How undelivered webhooks are retried (the platform retries non-2xx).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct RetryPolicy {
    /// Total tries per webhook, including the first.
    pub max_attempts: u32,
    /// Backoff before the second try; doubles after each failure.
    pub initial_backoff_ms: u64,
    /// Per-try HTTP timeout.
    pub timeout_ms: u64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 4,
            initial_backoff_ms: 100,
            timeout_ms: 5_000,
        }
    }
}

/// Counters, cheap to read at any time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stats {
    /// Sends POSTed to `/messages` (mark-as-read requests are not counted).
    pub attempts: u64,
    /// Sends that got a wamid.
    pub accepted: u64,
    /// Sends answered with an error.
    pub refused: u64,
    /// Logical webhooks the fake wanted to deliver.
    pub webhooks: u64,
    /// HTTP POSTs made to the webhook URL (including retries).
    pub webhook_posts: u64,
    /// Webhooks acknowledged with a 2xx.
    pub webhook_acked: u64,
    /// Webhooks given up on after the last retry.
    pub webhook_failed: u64,
}

/// One webhook the fake posted (or tried to).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Posted {
    /// The `field` of the change (`messages`, `message_template_status_update`, ...).
    pub field: String,
    /// The exact raw body bytes posted (UTF-8 JSON).
    pub body: String,
    /// The `X-Hub-Signature-256` header value sent (if any).
    pub signature: Option<String>,
    /// The id of the inbound message, for `messages` webhooks carrying one.
    pub wamid: Option<String>,
    /// HTTP POSTs made.
    pub attempts: u32,
    /// The last HTTP status received, if any.
    pub last_status: Option<u16>,
    /// Whether a 2xx was received.
    pub acked: bool,
}

/// Context of an inbound reply: which business message it answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplyContext {
    /// The wamid of the earlier business message.
    pub id: String,
    /// Sender of that message; defaults to the business display number.
    #[serde(default)]
    pub from: Option<String>,
}

/// The content of an inbound user message (no `Eq`: a location carries `f64`s).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum InboundKind {
    /// A text message.
    Text {
        /// The text.
        body: String,
    },
    /// A tap on a template quick-reply button (`type: "button"`).
    Button {
        /// The button payload set by the business.
        payload: String,
        /// The button label.
        text: String,
    },
    /// A tap on an interactive reply button.
    ButtonReply {
        /// The button id.
        id: String,
        /// The button title.
        title: String,
    },
    /// A choice from an interactive list.
    ListReply {
        /// The row id.
        id: String,
        /// The row title.
        title: String,
        /// The row description.
        #[serde(default)]
        description: Option<String>,
    },
    /// A message type the Cloud API does not support (`type: "unsupported"`, with error
    /// 131051 "Message type unknown"): a poll, a view-once message, an edited one…
    Unsupported,
    /// A photo (`image: {caption?, mime_type, sha256, id}`); see [`crate::MediaInfo`].
    Image {
        /// Media id to retrieve it with.
        media_id: String,
        /// Its MIME type.
        mime_type: String,
        /// Base64 SHA-256 of the file, as webhooks carry it.
        sha256: String,
        /// The caption typed with it.
        #[serde(default)]
        caption: Option<String>,
    },
    /// A file (`document: {caption?, filename, mime_type, sha256, id}`).
    Document {
        /// Media id to retrieve it with.
        media_id: String,
        /// Its MIME type.
        mime_type: String,
        /// Base64 SHA-256 of the file.
        sha256: String,
        /// The file name shown to the user.
        #[serde(default)]
        filename: Option<String>,
        /// The caption typed with it.
        #[serde(default)]
        caption: Option<String>,
    },
    /// A sound file or voice note (`audio: {mime_type, sha256, id, voice}`).
    Audio {
        /// Media id to retrieve it with.
        media_id: String,
        /// Its MIME type (voice notes: `audio/ogg; codecs=opus`).
        mime_type: String,
        /// Base64 SHA-256 of the file.
        sha256: String,
        /// Recorded in WhatsApp as a voice note.
        #[serde(default)]
        voice: bool,
    },
    /// A video (`video: {caption?, mime_type, sha256, id}`).
    Video {
        /// Media id to retrieve it with.
        media_id: String,
        /// Its MIME type.
        mime_type: String,
        /// Base64 SHA-256 of the file.
        sha256: String,
        /// The caption typed with it.
        #[serde(default)]
        caption: Option<String>,
    },
    /// A sticker (`sticker: {mime_type, sha256, id, animated}`).
    Sticker {
        /// Media id to retrieve it with.
        media_id: String,
        /// Its MIME type (`image/webp`).
        mime_type: String,
        /// Base64 SHA-256 of the file.
        sha256: String,
        /// An animated sticker.
        #[serde(default)]
        animated: bool,
    },
    /// A shared location (`location: {latitude, longitude, name?, address?}`).
    Location {
        /// Degrees north.
        latitude: f64,
        /// Degrees east.
        longitude: f64,
        /// The place's name.
        #[serde(default)]
        name: Option<String>,
        /// The place's address.
        #[serde(default)]
        address: Option<String>,
    },
    /// A reaction to a business message (`reaction: {message_id, emoji?}`).
    Reaction {
        /// The wamid reacted to.
        message_id: String,
        /// The emoji; `None` when the user removed their reaction (Meta omits `emoji`).
        #[serde(default)]
        emoji: Option<String>,
    },
}

/// An inbound user message to post to the app.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InboundMessage {
    /// The business number receiving it.
    pub phone_number_id: String,
    /// The user: their phone's digits (`wa_id`) or their BSUID. The fake resolves it
    /// through the user registry ([`crate::FakeGraph::register_user`]); an unregistered
    /// phone gets its generated BSUID and is shared, an unknown BSUID becomes a user
    /// without a phone.
    pub from: String,
    /// The user's profile name.
    #[serde(default)]
    pub profile_name: Option<String>,
    /// The content.
    #[serde(flatten)]
    pub kind: InboundKind,
    /// The business message it replies to.
    #[serde(default)]
    pub context: Option<ReplyContext>,
}

/// A `message_template_status_update` to post.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TemplateStatusUpdate {
    /// WABA that owns the template (also `entry[].id`).
    pub waba_id: String,
    /// Template name.
    pub name: String,
    /// Template language.
    pub language: String,
    /// `APPROVED`, `REJECTED`, `PAUSED`, `DISABLED`, ...
    pub event: String,
    /// `reason` (`NONE` when absent).
    #[serde(default)]
    pub reason: Option<String>,
    /// Also set the stored template's status to `event` when it is a status.
    #[serde(default)]
    pub apply: bool,
}

/// A `phone_number_quality_update` to post.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QualityUpdate {
    /// The business number (its WABA is `entry[].id`).
    pub phone_number_id: String,
    /// `FLAGGED`, `UNFLAGGED`, `UPGRADE`, `DOWNGRADE`, ...
    pub event: String,
    /// `current_limit`, e.g. `TIER_1K`.
    pub current_limit: String,
    /// `old_limit` (only for messaging limit changes).
    #[serde(default)]
    pub old_limit: Option<String>,
    /// `max_daily_conversations_per_business` (the replacement of `current_limit`).
    #[serde(default)]
    pub max_daily_conversations_per_business: Option<String>,
}
