//! Messages of a conversation: what a customer wrote and what the business sent, kept as
//! one thread per conversation (v1 addition; reading through `GET /conversations/{id}/messages`).
//!
//! One model serves both directions so a thread reads the same whoever wrote: the content is
//! a `type` plus the part that type fills (`text`, `media`, `location`, `interactive`,
//! `template`, `contacts`, `reaction`); a kind the platform adds later arrives as
//! `UNSUPPORTED` and is still a message of its thread.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::common::{Money, Timestamp};

wire_enum!(
    /// Who wrote a message.
    MessageDirection {
        Inbound = "INBOUND",
        Outbound = "OUTBOUND",
    }
);

wire_enum!(
    /// What a message holds.
    MessageType {
        Text = "TEXT",
        Image = "IMAGE",
        Video = "VIDEO",
        Audio = "AUDIO",
        Document = "DOCUMENT",
        Sticker = "STICKER",
        Location = "LOCATION",
        Contacts = "CONTACTS",
        Interactive = "INTERACTIVE",
        Button = "BUTTON",
        Reaction = "REACTION",
        Order = "ORDER",
        Template = "TEMPLATE",
        Story = "STORY",
        Unsupported = "UNSUPPORTED",
    }
);

impl MessageType {
    /// Whether the message carries a media file (`media` is set).
    pub fn is_media(&self) -> bool {
        matches!(
            self,
            MessageType::Image
                | MessageType::Video
                | MessageType::Audio
                | MessageType::Document
                | MessageType::Sticker
        )
    }
}

wire_enum!(
    /// Where a message stands. Outbound: PENDING → SENT → DELIVERED → READ, or FAILED; it
    /// never moves backwards. Inbound: RECEIVED, then READ once the business marked it read.
    MessageStatus {
        Pending = "PENDING",
        Sent = "SENT",
        Delivered = "DELIVERED",
        Read = "READ",
        Failed = "FAILED",
        Received = "RECEIVED",
    }
);

wire_enum!(
    /// Who sent an outbound message.
    SenderKind {
        User = "USER",
        Automation = "AUTOMATION",
        Campaign = "CAMPAIGN",
    }
);

/// A media file of a message. Inbound media is downloaded from the platform soon after it
/// arrives and served by `GET /media/{id}` (`id` here) while `stored` is true.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MessageMedia {
    /// wm's media id, for `GET /media/{id}`.
    pub id: Uuid,
    /// MIME type as the platform gave it (`image/jpeg`).
    pub mime_type: Option<String>,
    /// Size in bytes, once known.
    pub size: Option<u64>,
    /// File name (documents).
    pub filename: Option<String>,
    /// Caption.
    pub caption: Option<String>,
    /// Whether wm holds the bytes (false while the download is pending or after it failed).
    pub stored: bool,
}

/// A shared location.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MessageLocation {
    /// Latitude.
    pub latitude: f64,
    /// Longitude.
    pub longitude: f64,
    /// Place name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
}

/// A reply to buttons or a list (inbound), or the buttons sent (outbound).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MessageInteractive {
    /// `button_reply`, `list_reply`, `nfm_reply`, `button` (a template's quick reply) or
    /// `buttons` (sent reply buttons).
    pub kind: String,
    /// The chosen option's id or payload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_id: Option<String>,
    /// The chosen option's title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The buttons sent (`buttons`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub buttons: Vec<SendButton>,
}

/// The template of an outbound template message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MessageTemplate {
    /// Template id in wm.
    pub template_id: Option<Uuid>,
    /// Name.
    pub name: String,
    /// Language code.
    pub language: String,
    /// Body variables in position order.
    pub variables: Vec<String>,
}

/// A reaction to another message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MessageReaction {
    /// The message reacted to, when wm has it.
    pub message_id: Option<Uuid>,
    /// The emoji; null when the reaction was removed.
    pub emoji: Option<String>,
}

/// A story of the person's a message answers, or that mentions the business (Instagram).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MessageStory {
    /// `REPLY` (the message answers the story) or `MENTION` (a STORY message: the story
    /// mentions the business).
    pub kind: String,
    /// The story's link while the platform keeps it (stories last 24 hours; wm keeps no
    /// copy of their media, as Meta requires).
    pub url: Option<String>,
    /// The platform's id of the story.
    pub id: Option<String>,
}

/// Who sent an outbound message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SentBy {
    /// A user, an automation or a campaign.
    pub kind: SenderKind,
    /// Its id.
    pub id: Uuid,
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    /// Message id.
    pub id: Uuid,
    /// Conversation; null while a campaign message sent to a contact with no open
    /// conversation waits for the conversation their next message opens.
    pub conversation_id: Option<Uuid>,
    /// Contact.
    pub contact_id: Uuid,
    /// INBOUND (the customer) or OUTBOUND (the business).
    pub direction: MessageDirection,
    /// What it holds.
    #[serde(rename = "type")]
    pub message_type: MessageType,
    /// Text, a caption, a button's or a reply's title.
    pub text: Option<String>,
    /// Media (media types).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media: Option<MessageMedia>,
    /// Template (TEMPLATE).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<MessageTemplate>,
    /// Interactive reply or buttons (INTERACTIVE, BUTTON).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interactive: Option<MessageInteractive>,
    /// Location (LOCATION).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<MessageLocation>,
    /// Shared contact cards as the platform sent them (CONTACTS).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Vec<serde_json::Map<String, serde_json::Value>>>")]
    pub contacts: Option<Vec<serde_json::Value>>,
    /// Reaction (REACTION).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reaction: Option<MessageReaction>,
    /// The order as the platform sent it (ORDER).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<serde_json::Value>,
    /// The story it answers, or the story of a STORY mention (Instagram).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub story: Option<MessageStory>,
    /// The message it quotes, when wm has it.
    pub reply_to_message_id: Option<Uuid>,
    /// Where it stands.
    pub status: MessageStatus,
    /// Why it failed (FAILED).
    pub error_message: Option<String>,
    /// What it cost (outbound), in the organisation's currency.
    pub cost: Option<Money>,
    /// Who sent it (outbound).
    pub sent_by: Option<SentBy>,
    /// When wm recorded it (inbound: when it arrived; outbound: when the platform took it);
    /// a thread is in this order.
    pub created_at: Timestamp,
}

/// `GET /conversations/{id}/messages` query.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListMessagesQuery {
    /// Page size (default 50).
    #[serde(default)]
    #[schemars(range(min = 1, max = 100))]
    pub page_size: Option<u64>,
    /// Only messages older than this one (its id, from a previous page).
    #[serde(default)]
    pub before: Option<Uuid>,
}

/// Keyset page metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CursorMeta {
    /// Page size used.
    pub page_size: u64,
    /// Whether older messages remain (pass the last id as `before`).
    pub has_more: bool,
}

/// `GET /conversations/{id}/messages` response: newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MessageList {
    /// Messages, newest first.
    pub data: Vec<Message>,
    /// Paging.
    pub meta: CursorMeta,
}

/// Payload of `message.received` and `message.sent` (and its later statuses, delivered
/// again with the new `status`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MessageEventData {
    /// Organisation.
    pub organization_id: Uuid,
    /// The message as `GET /conversations/{id}/messages` shows it.
    pub message: Message,
}

wire_enum!(
    /// What a reply sends: the spellings of [`MessageType`], so a type read from a message
    /// can be sent back as it was read (the lower-case spellings of earlier versions are
    /// still taken).
    SendType {
        Text = "TEXT" | "text",
        Image = "IMAGE" | "image",
        Video = "VIDEO" | "video",
        Audio = "AUDIO" | "audio",
        Document = "DOCUMENT" | "document",
        Sticker = "STICKER" | "sticker",
        Interactive = "INTERACTIVE" | "interactive",
        Template = "TEMPLATE" | "template",
    }
);

/// The text of a text reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SendText {
    /// 1 to 4,096 characters.
    #[schemars(length(min = 1, max = 4096))]
    pub body: String,
}

/// The file of a media reply: one uploaded with `POST /media`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SendMedia {
    /// The id `POST /media` answered.
    pub id: Uuid,
    /// Caption (image, video, document), up to 1,024 characters.
    #[serde(default)]
    #[schemars(length(max = 1024))]
    pub caption: Option<String>,
    /// The file name the customer sees (document).
    #[serde(default)]
    #[schemars(length(max = 240))]
    pub filename: Option<String>,
}

/// A reply button.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SendButton {
    /// What comes back when it is tapped (`interactive.replyId` of the answer).
    #[schemars(length(min = 1, max = 256))]
    pub id: String,
    /// Its label, up to 20 characters.
    #[schemars(length(min = 1, max = 20))]
    pub title: String,
}

/// An interactive reply: a text with up to three reply buttons.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SendInteractive {
    /// The text above the buttons, up to 1,024 characters.
    #[schemars(length(min = 1, max = 1024))]
    pub body: String,
    /// One to three buttons, ids unique.
    #[schemars(length(min = 1, max = 3))]
    pub buttons: Vec<SendButton>,
}

/// A template reply (the only kind the platform takes outside the window).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SendTemplate {
    /// An APPROVED template of the organisation.
    pub template_id: Uuid,
    /// Values of its variables by position (`{"1": "Ana"}`), as for campaigns; a value may
    /// be a contact field (`{{firstName}}`).
    #[serde(default)]
    #[schemars(with = "Option<std::collections::BTreeMap<String, String>>")]
    pub variables: Option<serde_json::Map<String, serde_json::Value>>,
}

/// `POST /conversations/{id}/messages`: exactly the part its `type` names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SendMessage {
    /// What to send.
    #[serde(rename = "type")]
    pub message_type: SendType,
    /// For `TEXT`.
    #[serde(default)]
    pub text: Option<SendText>,
    /// For `IMAGE`, `VIDEO`, `AUDIO`, `DOCUMENT`, `STICKER`.
    #[serde(default)]
    pub media: Option<SendMedia>,
    /// For `INTERACTIVE`.
    #[serde(default)]
    pub interactive: Option<SendInteractive>,
    /// For `TEMPLATE`.
    #[serde(default)]
    pub template: Option<SendTemplate>,
    /// A message of this conversation the reply quotes.
    #[serde(default)]
    pub reply_to_message_id: Option<Uuid>,
}

/// `POST /media` answer: a file to send in a reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UploadedMedia {
    /// Its id, for `media.id` of a reply (and `GET /media/{id}`).
    pub id: Uuid,
    /// MIME type.
    pub mime_type: String,
    /// Size in bytes.
    pub size: u64,
    /// SHA-256 of the bytes, hex.
    pub sha256: String,
    /// File name, when the upload had one.
    pub filename: Option<String>,
}

/// `POST /conversations/{id}/read` answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MarkedRead {
    /// The customer's latest message, marked read at the platform (null: they never wrote).
    pub message_id: Option<Uuid>,
    /// How many of their messages moved from RECEIVED to READ.
    pub marked: u64,
}
