//! The messaging platform, as the sending pipeline sees it.

use wm_types::enums::RecipientStatus;

/// One templated message to one recipient.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboundMessage {
    /// Stable per recipient: sending twice with one key must send once (a restarted worker
    /// re-sends what it cannot prove was sent).
    pub idempotency_key: String,
    /// Sender number (`+…`).
    pub from: String,
    /// Recipient number (`+…`).
    pub to: String,
    /// Template name.
    pub template: String,
    /// Template language.
    pub language: String,
    /// The rendered text.
    pub body: String,
}

/// Why a message was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    /// Refused for good (the recipient cannot receive it): the message fails and is refunded.
    #[error("rejected: {0}")]
    Rejected(String),
    /// The platform could not take it now: the message stays queued and is tried again.
    #[error("unavailable: {0}")]
    Unavailable(String),
}

/// A status change of a sent message (a delivery receipt).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusUpdate {
    /// The platform's message id.
    pub provider_message_id: String,
    /// DELIVERED, READ or FAILED.
    pub status: RecipientStatus,
    /// Why it failed.
    pub error: Option<String>,
}

/// A messaging platform.
#[async_trait::async_trait]
pub trait MessagingProvider: Send + Sync + 'static {
    /// A short fixed name (`simulated`, `whatsapp`) for metric labels and logs.
    fn name(&self) -> &'static str {
        "custom"
    }

    /// Sends one message; `Ok` is the platform's message id.
    async fn send(&self, message: &OutboundMessage) -> Result<String, SendError>;

    /// Receipts the platform has for us since the last call. Platforms that push callbacks
    /// (to the operator `provider-events` route) return none.
    async fn receipts(&self) -> Result<Vec<StatusUpdate>, SendError> {
        Ok(Vec::new())
    }
}
