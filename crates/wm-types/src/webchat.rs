//! The website chat widget's API (`/webchat/v1/{websiteToken}/…`): what a visitor's browser
//! sends and reads. Public (no API key): a visitor is known by a signed visitor token.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::common::Timestamp;
use crate::messages::{MessageDirection, MessageStatus, MessageType};

/// `GET /config`: how the widget presents the business.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WidgetConfig {
    /// The chat's name (its title).
    pub name: String,
    /// The first words visitors read.
    pub greeting: Option<String>,
    /// The widget's colour.
    pub color: Option<String>,
    /// Languages the widget speaks.
    pub locales: Vec<String>,
    /// Minutes without an answer after which the widget offers to leave an e-mail (none:
    /// it offers it at once).
    pub email_after_minutes: Option<u32>,
}

/// `POST /visitors` and `POST /identify`: the visitor's token, kept by the widget.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VisitorToken {
    /// Sent as `Authorization: Bearer` (and `?token=` on the event stream).
    pub visitor_token: String,
    /// The visitor.
    pub visitor_id: String,
}

/// `POST /messages`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VisitorText {
    /// What they wrote.
    #[schemars(length(min = 1, max = 4096))]
    pub text: String,
    /// The widget's id of the message: a retry with it answers the first message.
    #[serde(default)]
    #[schemars(length(min = 1, max = 64))]
    pub client_id: Option<String>,
}

/// `POST /buttons`: the visitor tapped a reply button of a business message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TapButton {
    /// The business message.
    pub message_id: Uuid,
    /// The button's id.
    #[schemars(length(min = 1, max = 256))]
    pub button_id: String,
}

/// `POST /identify`: the site's signed-in user, vouched for by its backend.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Identify {
    /// The site's id of its user.
    #[schemars(length(min = 1, max = 256))]
    pub identifier: String,
    /// HMAC-SHA256 of `identifier` with the chat's identity secret, hex.
    #[schemars(length(min = 64, max = 64))]
    pub identifier_hash: String,
    /// Their e-mail.
    #[serde(default)]
    #[schemars(extend("format" = "email"))]
    pub email: Option<String>,
    /// Their name.
    #[serde(default)]
    #[schemars(length(min = 1, max = 160))]
    pub name: Option<String>,
}

/// `POST /email`: an address for when nobody answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LeaveEmail {
    /// The address.
    #[schemars(extend("format" = "email"))]
    pub email: String,
}

/// A file of a message, read at `url` with the visitor's token.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WidgetMedia {
    /// Where it is read.
    pub url: String,
    /// Its type.
    pub mime_type: Option<String>,
    /// Its name.
    pub filename: Option<String>,
}

/// A reply button of a business message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WidgetButton {
    /// Its id.
    pub id: String,
    /// Its title.
    pub title: String,
}

/// A message as the widget shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WidgetMessage {
    /// Its id.
    pub id: Uuid,
    /// INBOUND: the visitor's; OUTBOUND: the business's.
    pub direction: MessageDirection,
    /// Its kind.
    #[serde(rename = "type")]
    pub message_type: MessageType,
    /// Its text (plain text: never HTML).
    pub text: Option<String>,
    /// Its file.
    pub media: Option<WidgetMedia>,
    /// A business message's reply buttons.
    pub buttons: Option<Vec<WidgetButton>>,
    /// The agent who wrote a business message.
    pub author: Option<String>,
    /// Its status.
    pub status: MessageStatus,
    /// The widget's id of a visitor's message.
    pub client_id: Option<String>,
    /// When it was written.
    pub created_at: Timestamp,
}

/// `GET /messages`: oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WidgetMessages {
    /// The messages.
    pub data: Vec<WidgetMessage>,
    /// Whether earlier ones exist.
    pub has_more: bool,
}
