//! What the fake logs about the requests it answered: accepted messages, send attempts
//! and mark-as-read requests.
//!
//! Why a module of its own: tests assert on these records, and free-form sends made
//! them grow (message kind, the whole request body, the quoted message); keeping them
//! apart keeps [`crate::model`] small. Every type is re-exported from [`crate::model`].

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A send the fake accepted (a wamid was assigned).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AcceptedMessage {
    /// Order of acceptance, from 1.
    pub seq: u64,
    /// The assigned message id.
    pub wamid: String,
    /// Sending business number.
    pub phone_number_id: String,
    /// Its WABA.
    pub waba_id: String,
    /// The recipient exactly as sent: `to`, or `recipient` (a BSUID or parent BSUID) when
    /// the send had no `to`.
    pub to: String,
    /// The recipient's `wa_id` (digits of `to`, or its registered other spelling); for a
    /// send by BSUID, the user's phone if the platform knows one, else empty.
    pub wa_id: String,
    /// The recipient's BSUID when the send was accepted.
    #[serde(default)]
    pub user_id: String,
    /// Sent by `recipient` (a BSUID or parent BSUID) rather than `to`.
    #[serde(default)]
    pub by_user_id: bool,
    /// The request's `type`: `template`, `text`, `image`, `video`, `audio`, `document`,
    /// `sticker`, `interactive` or `reaction`.
    pub message_type: String,
    /// Template name (template sends).
    pub template_name: Option<String>,
    /// Template language code (template sends).
    pub language: Option<String>,
    /// Body parameter texts in order (template sends).
    pub body_params: Vec<String>,
    /// Text body (text sends).
    pub text_body: Option<String>,
    /// `biz_opaque_callback_data` if the send had it.
    pub biz_opaque_callback_data: Option<String>,
    /// Wall-clock acceptance time.
    pub at: DateTime<Utc>,
    /// Milliseconds since the fake started (monotonic; for rate measurements).
    pub elapsed_ms: f64,
    /// Error reported later by a `failed` webhook instead of `sent`/`delivered`: an
    /// injected async code, or 131047 for a free-form send outside the
    /// customer-service window.
    pub async_error: Option<i64>,
    /// `context.message_id`: the message this one quotes (accepted whether or not the
    /// fake knows it; see [`crate::FakeGraph::knows_message`]).
    #[serde(default)]
    pub context_message_id: Option<String>,
    /// The whole request object as posted, so tests can inspect any field of it.
    #[serde(default)]
    pub body: Value,
}

/// The outcome of one send attempt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum AttemptOutcome {
    /// A wamid was assigned.
    Accepted {
        /// The wamid.
        wamid: String,
    },
    /// The send was answered with an error.
    Refused {
        /// The error code.
        code: i64,
        /// The HTTP status.
        http_status: u16,
    },
}

/// One send POSTed to `/messages`, accepted or refused (mark-as-read requests are
/// logged as [`ReadMark`]s instead).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attempt {
    /// Order of arrival, from 1.
    pub seq: u64,
    /// The number in the path.
    pub phone_number_id: String,
    /// `to`, when the body had one.
    pub to: Option<String>,
    /// `recipient` (a BSUID or parent BSUID), when the body had one.
    #[serde(default)]
    pub recipient: Option<String>,
    /// Template name, when the body had one.
    pub template_name: Option<String>,
    /// Arrival time.
    pub at: DateTime<Utc>,
    /// What the fake answered.
    #[serde(flatten)]
    pub outcome: AttemptOutcome,
}

/// An accepted mark-as-read request (`{"status":"read","message_id":…}`), so tests can
/// assert that the app acknowledged what it received.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadMark {
    /// The business number in the path.
    pub phone_number_id: String,
    /// The inbound wamid marked as read.
    pub message_id: String,
    /// Whether a typing indicator (`typing_indicator: {type: "text"}`) was asked for.
    pub typing: bool,
    /// When the request was answered.
    pub at: DateTime<Utc>,
}
