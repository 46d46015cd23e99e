//! The messaging platform, as the sending pipeline sees it.
//!
//! The pipeline is **at most once, reconciled**: the platform (WhatsApp's Cloud API) has no
//! idempotency key, so each attempt is recorded before the call with a correlation id that
//! travels as `biz_opaque_callback_data`, and an attempt whose outcome is unknown (a timeout,
//! a connection lost after the request went out, a crash) is never sent again: a status
//! webhook carrying its correlation id settles it, or it fails as "outcome unknown" after a
//! reconciliation window and is refunded.

use wm_types::enums::RecipientStatus;

/// The platform account a message is sent through (WhatsApp: a number's phone number id and
/// its access token; a Page's id and token). `None` for platforms that need none (the
/// simulated one).
#[derive(Clone, PartialEq, Eq)]
pub struct PlatformAccount {
    /// The platform's id of the account (WhatsApp: `platformPhoneNumberId`).
    pub id: String,
    /// The bearer token (decrypted just for the call; never logged).
    pub access_token: String,
}

impl std::fmt::Debug for PlatformAccount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlatformAccount")
            .field("id", &self.id)
            .field("access_token", &"<redacted>")
            .finish()
    }
}

/// One message to one recipient.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboundMessage {
    /// Stable per attempt target (a campaign recipient's id, a reply's message id): sent to
    /// the platform as `biz_opaque_callback_data` and echoed in its status webhooks, so a
    /// status can be matched even before the send's answer was recorded.
    pub correlation_id: String,
    /// Sender number (`+…`).
    pub from: String,
    /// The sender's platform account, when the platform needs one.
    pub account: Option<PlatformAccount>,
    /// The recipient: their phone, or the platform's id of them where they have no phone
    /// wm knows (WhatsApp sends to a business-scoped user id with `recipient`).
    pub to: crate::address::Address,
    /// What is sent.
    pub content: OutboundContent,
    /// The platform's id of the message it quotes (a reply's `context`).
    pub reply_to: Option<String>,
    /// The text the recipient reads (a rendered template, the text, a caption).
    pub body: String,
    /// A person's reply sent after the free window closed, marked as such where the
    /// platform allows it (Messenger's and Instagram's `HUMAN_AGENT` tag).
    pub human_agent: bool,
}

/// What a message sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutboundContent {
    /// A template (the only kind a platform with a service window takes outside it).
    Template {
        /// Template name.
        name: String,
        /// Template language code (`es_MX`).
        language: String,
        /// The values of the template's body variables, in position order.
        parameters: Vec<String>,
    },
    /// Free-form text.
    Text,
    /// A media file the platform already holds (uploaded with
    /// [`MessagingProvider::upload_media`]).
    Media {
        /// Image, video, audio, document or sticker.
        kind: wm_types::messages::MessageType,
        /// The platform's media id.
        media_id: String,
        /// Caption (image, video, document).
        caption: Option<String>,
        /// File name (document).
        filename: Option<String>,
    },
    /// A text with reply buttons `(id, title)`.
    Interactive {
        /// The buttons.
        buttons: Vec<(String, String)>,
    },
}

impl OutboundContent {
    /// Whether a platform with a customer-service window takes it outside the window.
    pub fn is_template(&self) -> bool {
        matches!(self, OutboundContent::Template { .. })
    }
}

/// A file to upload to the platform before it is sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MediaUpload {
    /// The bytes.
    pub bytes: Vec<u8>,
    /// MIME type.
    pub mime_type: String,
    /// File name.
    pub filename: Option<String>,
}

/// A message the platform took.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Accepted {
    /// The platform's message id.
    pub message_id: String,
    /// The person's id on the platform when it says, which may be another spelling of the
    /// number sent to (WhatsApp's `contacts[].wa_id`: see [`crate::wa_id`]); kept as the
    /// contact's identity so their answers find them.
    pub recipient: Option<String>,
    /// The platform's scoped id of the person, when it says (WhatsApp's
    /// `contacts[].user_id` of a send to a business-scoped user id).
    pub recipient_user_id: Option<String>,
}

impl Accepted {
    /// A message id and nothing more.
    pub fn id(message_id: impl Into<String>) -> Accepted {
        Accepted {
            message_id: message_id.into(),
            recipient: None,
            recipient_user_id: None,
        }
    }
}

/// Why a message was not accepted, and what the pipeline does about it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    /// Refused for good (the recipient cannot receive it): the recipient fails and is
    /// refunded; `opt_out` also marks the contact opted out (the person stopped marketing
    /// messages).
    #[error("rejected: {reason}")]
    Rejected {
        /// For the recipient's `errorMessage`.
        reason: String,
        /// Whether the contact asked to receive no more (WhatsApp 131050).
        opt_out: bool,
    },
    /// Not sent, the platform could not take it now (rate limit, outage, refused
    /// connection): the message stays charged and queued and is tried again later.
    #[error("retry later: {0}")]
    RetryLater(String),
    /// Not sent, and no message of this sender will go through until someone acts (expired
    /// token, locked account, template paused): the campaign pauses with `stop_reason`.
    #[error("campaign paused ({stop_reason}): {reason}")]
    Paused {
        /// The campaign's `stopReason`.
        stop_reason: String,
        /// What the platform said.
        reason: String,
    },
    /// The request may have reached the platform (a timeout or a connection lost after it
    /// was written): never re-sent; settled by a status webhook or the reconciliation window.
    #[error("outcome unknown: {0}")]
    Ambiguous(String),
}

/// A status change of a sent message (a delivery receipt).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusUpdate {
    /// The platform's message id.
    pub provider_message_id: String,
    /// The correlation id the message was sent with, when the platform echoes it.
    pub correlation_id: Option<String>,
    /// SENT, DELIVERED, READ or FAILED.
    pub status: RecipientStatus,
    /// When the platform says it happened (ms since epoch), if it says.
    pub at_ms: Option<i64>,
    /// Why it failed.
    pub error: Option<String>,
    /// Whether the failure means the contact opted out (WhatsApp 131050).
    pub opt_out: bool,
    /// The person's id on the platform (WhatsApp's `recipient_id`, their number's digits),
    /// when it says.
    pub recipient: Option<String>,
    /// The platform's scoped id of the person (WhatsApp's `recipient_user_id`, the
    /// business-scoped user id), when it says: found, it is remembered as their identity.
    pub recipient_user_id: Option<String>,
}

/// A messaging platform.
#[async_trait::async_trait]
pub trait MessagingProvider: Send + Sync + 'static {
    /// A short fixed name (`simulated`, `whatsapp`) for metric labels and logs.
    fn name(&self) -> &'static str {
        "custom"
    }

    /// Sends one message; `Ok` is what the platform accepted it as.
    async fn send(&self, message: &OutboundMessage) -> Result<Accepted, SendError>;

    /// Uploads a file for `account`'s number to send; the platform's media id.
    async fn upload_media(
        &self,
        account: Option<&PlatformAccount>,
        file: &MediaUpload,
    ) -> Result<String, SendError> {
        let _ = (account, file);
        Err(SendError::Rejected {
            reason: format!("the {} platform takes no media", self.name()),
            opt_out: false,
        })
    }

    /// Tells the platform the business read the customer's message `message_id` (the
    /// customer sees blue ticks).
    async fn mark_read(
        &self,
        account: Option<&PlatformAccount>,
        message_id: &str,
    ) -> Result<(), SendError> {
        let _ = (account, message_id);
        Ok(())
    }

    /// Receipts the platform has for us that were not [acknowledged](Self::acknowledge)
    /// yet. Platforms that push callbacks (webhooks) return none.
    async fn receipts(&self) -> Result<Vec<StatusUpdate>, SendError> {
        Ok(Vec::new())
    }

    /// Receipts from [`receipts`](Self::receipts) that the caller has applied and
    /// committed: not handed over again. Acknowledging after applying means a crash in
    /// between hands them over once more (applying a receipt twice changes nothing) instead
    /// of losing them.
    async fn acknowledge(&self, receipts: &[StatusUpdate]) -> Result<(), SendError> {
        let _ = receipts;
        Ok(())
    }
}
