//! Public data types of the Messenger / Instagram fake: what tests register, write and
//! read back. All are serde types because the `/_fake/messenger/...` control API takes
//! and returns exactly these.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::model::Posted;

/// A Facebook Page registered on the fake, optionally linked to an Instagram
/// professional account (IG-FB: Instagram sends go through the Page with the Page token).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageSpec {
    /// The Page id (`/{page_id}/messages`, webhook `entry[].id` for `object: "page"`).
    pub page_id: String,
    /// The Page access token (query `access_token` or `Authorization: Bearer`).
    pub access_token: String,
    /// The Page name (`GET /{page_id}?fields=name`).
    pub name: String,
    /// The linked Instagram professional account id (webhook `entry[].id` for
    /// `object: "instagram"`), if any.
    #[serde(default)]
    pub instagram_id: Option<String>,
    /// Whether the Page's app was granted the Human Agent feature (App Review); without
    /// it a `MESSAGE_TAG` + `HUMAN_AGENT` send is refused.
    #[serde(default)]
    pub human_agent: bool,
}

/// A person known to a Page (by PSID) or to an Instagram account (by IGSID).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PersonSpec {
    /// The Page id (Messenger) or the Instagram account id (Instagram).
    pub account_id: String,
    /// The PSID or IGSID.
    pub scoped_id: String,
    /// Messenger profile `first_name`.
    #[serde(default)]
    pub first_name: String,
    /// Messenger profile `last_name`.
    #[serde(default)]
    pub last_name: String,
    /// Profile `name` (Instagram: an empty name reads as `null`, which Meta allows).
    #[serde(default)]
    pub name: String,
    /// Instagram `username`.
    #[serde(default)]
    pub username: Option<String>,
    /// Profile picture URL.
    #[serde(default)]
    pub profile_pic: Option<String>,
}

/// Which product a Page-token call or webhook belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Platform {
    /// Messenger Platform (`object: "page"`, PSIDs).
    Messenger,
    /// Instagram Messaging through a Facebook Page (`object: "instagram"`, IGSIDs).
    Instagram,
}

impl Platform {
    /// The webhook `object` value (`page` or `instagram`).
    pub fn object(self) -> &'static str {
        match self {
            Self::Messenger => "page",
            Self::Instagram => "instagram",
        }
    }
}

/// A message send the fake accepted (`POST /{page_id|me}/messages`), or a reply typed in
/// Meta's own inbox ([`crate::FakeGraph::inbox_reply`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessengerSend {
    /// The Page id (Messenger) or the Instagram account id (Instagram).
    pub account_id: String,
    /// The Page the call went through.
    pub page_id: String,
    /// Messenger or Instagram.
    pub platform: Platform,
    /// The recipient's PSID or IGSID.
    pub recipient: String,
    /// `RESPONSE`, `UPDATE` or `MESSAGE_TAG` (`RESPONSE` when the request had none).
    pub messaging_type: String,
    /// The `tag` of a `MESSAGE_TAG` send.
    pub tag: Option<String>,
    /// The request's `message` object as posted.
    pub message: Value,
    /// The top-level `reply_to.mid`.
    pub reply_to: Option<String>,
    /// The `message_id` answered.
    pub message_id: String,
    /// Acceptance time.
    pub at: DateTime<Utc>,
    /// Typed in Meta's inbox (Business Suite), not sent through the API.
    #[serde(default)]
    pub via_inbox: bool,
}

/// A `sender_action` the fake accepted (`typing_on`, `typing_off`, `mark_seen`,
/// `react`, `unreact`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessengerSenderAction {
    /// The Page id (Messenger) or the Instagram account id (Instagram).
    pub account_id: String,
    /// The Page the call went through.
    pub page_id: String,
    /// The recipient's PSID or IGSID.
    pub recipient: String,
    /// The action.
    pub action: String,
    /// The `payload` (reactions: `{message_id, reaction}`).
    pub payload: Option<Value>,
    /// Acceptance time.
    pub at: DateTime<Utc>,
}

/// An attachment held by the fake (Attachment Upload API or a reusable send).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessengerAttachment {
    /// The `attachment_id`.
    pub attachment_id: String,
    /// The Page that uploaded it (the only one that may send it).
    pub page_id: String,
    /// Uploaded for Messenger or (`"platform":"instagram"`) Instagram.
    pub platform: Platform,
    /// `image`, `video`, `audio` or `file`.
    pub kind: String,
    /// The file's MIME type.
    pub mime: String,
    /// The URL it was uploaded from, for a URL upload.
    pub url: Option<String>,
    /// Size in bytes (0 for a URL the fake did not fetch).
    pub size: usize,
}

/// `react` or `unreact`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReactionAction {
    /// A reaction added.
    React,
    /// A reaction removed.
    Unreact,
}

/// What a person does in a [`Write`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", content = "value", rename_all = "snake_case")]
pub enum WriteKind {
    /// A text message.
    Text(String),
    /// A tapped quick reply: its title as `text` and `quick_reply.payload`.
    QuickReply {
        /// The button title.
        text: String,
        /// The developer-defined payload.
        payload: String,
    },
    /// A file: the fake serves the bytes at a CDN-like URL on itself (`payload.url`).
    Attachment {
        /// `image`, `video`, `audio` or `file`.
        kind: String,
        /// The file's MIME type (served as `Content-Type`).
        mime: String,
        /// The file (base64 in the control API).
        #[serde(with = "b64")]
        bytes: Vec<u8>,
    },
    /// A tapped button / icebreaker (`messaging_postbacks`).
    Postback {
        /// The button title.
        title: String,
        /// The developer-defined payload.
        payload: String,
    },
    /// A reaction to a message (`message_reactions`).
    Reaction {
        /// The reacted-to message.
        mid: String,
        /// The emoji (omitted on `unreact`).
        emoji: Option<String>,
        /// `react` or `unreact`.
        action: ReactionAction,
    },
    /// A text quoting an earlier message (`reply_to.mid`).
    ReplyTo {
        /// The text.
        text: String,
        /// The quoted message.
        mid: String,
    },
    /// Instagram only: a reply to the business's story (`reply_to.story`).
    StoryReply {
        /// The text.
        text: String,
        /// The story's CDN URL.
        story_url: String,
        /// The story id.
        story_id: String,
    },
    /// Instagram only: a mention of the business in the person's story.
    StoryMention {
        /// The story's CDN URL.
        url: String,
    },
    /// Instagram only: media Meta does not pass on (`is_unsupported: true`).
    Unsupported,
    /// Instagram only: the person unsent one of their messages (`is_deleted: true`).
    Deleted {
        /// The unsent message.
        mid: String,
    },
}

/// Something a person does, posted by [`crate::FakeGraph::messenger_write`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Write {
    /// The Page id (Messenger) or the Instagram account id (Instagram).
    pub account_id: String,
    /// The person's PSID or IGSID (an unknown one is registered on the fly).
    pub scoped_id: String,
    /// The message id to use; generated when `None`.
    #[serde(default)]
    pub mid: Option<String>,
    /// The event time in ms since the epoch; now when `None`. The person's window
    /// opens at this time, so an old timestamp writes "in the past".
    #[serde(default)]
    pub timestamp_ms: Option<i64>,
    /// What they do.
    pub kind: WriteKind,
}

impl Write {
    /// A text message written now with a generated mid.
    pub fn text(account_id: &str, scoped_id: &str, text: &str) -> Self {
        Self {
            account_id: account_id.to_owned(),
            scoped_id: scoped_id.to_owned(),
            mid: None,
            timestamp_ms: None,
            kind: WriteKind::Text(text.to_owned()),
        }
    }
}

/// What a Messenger/Instagram webhook post carried: the mids it names and the delivery
/// record (as in [`crate::FakeGraph::webhook_log`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessengerPosted {
    /// The message ids of the posted events, in entry order.
    pub mids: Vec<String>,
    /// The delivery record (body, signature, attempts, acknowledgement).
    pub posted: Posted,
}

impl MessengerPosted {
    /// The first (for a single write: the only) mid.
    pub fn mid(&self) -> Option<&str> {
        self.mids.first().map(String::as_str)
    }
}

/// How [`crate::FakeGraph::post_raw_messenger`] signs the bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum RawSignature {
    /// `X-Hub-Signature-256` computed with the configured app secret.
    Sign,
    /// This exact header value.
    Given(String),
    /// No header at all.
    Unsigned,
}

/// `bytes` as a base64 string in JSON.
mod b64 {
    use base64::Engine;
    use base64::engine::general_purpose::STANDARD;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&STANDARD.encode(bytes))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(d)?;
        STANDARD
            .decode(text.trim())
            .map_err(serde::de::Error::custom)
    }
}
