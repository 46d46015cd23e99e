//! What a channel is, as data: its window, how a person is known on it, whether templates
//! and campaigns go through it, the media it takes and how long the platform keeps files.
//! Everything above a provider reads the channel's [`Descriptor`] instead of asking which
//! platform it is, so a channel beside WhatsApp is a provider and its descriptor, not a
//! branch in every service.

use wm_types::enums::{ChannelType, ContactSource};
use wm_types::messages::MessageType;

/// A media type a channel takes: its MIME type, the message kind it is sent as, and its
/// largest size in bytes.
pub type MediaRule = (&'static str, MessageType, u64);

/// When free-form messages may be sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    /// At any time (a website chat: nobody but the business and the visitor).
    Always,
    /// For `free_ms` after the person's last message; outside it only templates (WhatsApp)
    /// or, until `tagged_ms`, a person's reply marked as such (Messenger's HUMAN_AGENT tag,
    /// where the channel is approved for it).
    After {
        /// How long after the person's last message anything may be sent.
        free_ms: i64,
        /// How long a tagged human reply may still be sent, if the platform has one.
        tagged_ms: Option<i64>,
    },
}

impl Window {
    /// When the window a person's last message at `last_inbound` opened closes; `None`:
    /// it never closes (or, with no message at all, never opened: see [`Window::open`]).
    pub fn closes_at(&self, last_inbound: Option<i64>) -> Option<i64> {
        match self {
            Window::Always => None,
            Window::After { free_ms, .. } => last_inbound.map(|at| at + free_ms),
        }
    }

    /// Whether a reply marked as a person's (Messenger's `HUMAN_AGENT` tag) may still be
    /// sent at `now`, once the free window has closed.
    pub fn tagged_open(&self, last_inbound: Option<i64>, now: i64) -> bool {
        match self {
            Window::Always => true,
            Window::After { tagged_ms, .. } => match (tagged_ms, last_inbound) {
                (Some(t), Some(at)) => now < at + t,
                _ => false,
            },
        }
    }

    /// Whether a free-form message may be sent at `now`.
    pub fn open(&self, last_inbound: Option<i64>, now: i64) -> bool {
        match self {
            Window::Always => true,
            Window::After { free_ms, .. } => last_inbound.is_some_and(|at| now < at + free_ms),
        }
    }
}

/// How a person is known on a channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Identity {
    /// By phone (WhatsApp, SMS): a new person's contact gets it as their primary phone.
    Phone,
    /// By an id the platform scopes to the business (a Page- or Instagram-scoped id, a
    /// website visitor): a new person's contact has no phone.
    Scoped,
}

/// A channel's data.
#[derive(Debug, Clone, PartialEq)]
pub struct Descriptor {
    /// The provider's name (its intake's path segment, the name stored on its accounts and
    /// its media).
    pub provider: &'static str,
    /// The contract's channel type its conversations are.
    pub channel_type: ChannelType,
    /// When free-form messages may be sent.
    pub window: Window,
    /// How a person is known.
    pub identity: Identity,
    /// Whether template messages (and so campaigns and automations) go through it.
    pub templates: bool,
    /// The media it takes; empty: none.
    pub media: &'static [MediaRule],
    /// How long the platform keeps a file a person sent (wm fetches it before).
    pub inbound_media_ms: i64,
    /// How long a file uploaded to the platform can be sent before it is uploaded again.
    pub upload_ms: i64,
    /// The longest text of one message, in characters (in bytes when [`Self::text_in_bytes`]).
    pub max_text: usize,
    /// Whether the platform counts [`Self::max_text`] in UTF-8 bytes (Instagram).
    pub text_in_bytes: bool,
    /// Whether a file is sent with a caption (Messenger and Instagram send none).
    pub captions: bool,
    /// The calls per second an account may make (Messenger and Instagram: 300 for text;
    /// `None`: the server's pace).
    pub mps: Option<u32>,
    /// The source of a contact made by a person's first message.
    pub new_contact_source: ContactSource,
}

impl Descriptor {
    /// Whether `text` fits one message.
    pub fn text_fits(&self, text: &str) -> bool {
        if self.text_in_bytes {
            text.len() <= self.max_text
        } else {
            text.chars().count() <= self.max_text
        }
    }

    /// The text limit in words: "4096 characters", "1000 bytes".
    pub fn text_limit(&self) -> String {
        let unit = if self.text_in_bytes {
            "bytes"
        } else {
            "characters"
        };
        format!("{} {unit}", self.max_text)
    }

    /// The kind a file of `mime` is sent as and its largest size; `None`: the channel does
    /// not take it.
    pub fn media_limit(&self, mime: &str) -> Option<(MessageType, u64)> {
        media_limit(self.media, mime)
    }
}

/// The rule of `mime` (parameters ignored, case-insensitive) in `rules`.
pub fn media_limit(rules: &[MediaRule], mime: &str) -> Option<(MessageType, u64)> {
    let base = mime.split(';').next().unwrap_or("").trim();
    rules
        .iter()
        .find(|(m, _, _)| m.eq_ignore_ascii_case(base))
        .map(|(_, kind, max)| (*kind, *max))
}

/// One hour, in ms.
pub const HOUR_MS: i64 = 3_600_000;
/// One day, in ms.
pub const DAY_MS: i64 = 24 * HOUR_MS;

/// WhatsApp's Cloud API (MESSAGING_APP_A): the 24-hour window (templates outside it),
/// people known by phone (or business-scoped id), Meta's media types, files kept 7 days
/// for wm to fetch and 30 days after an upload.
pub const WHATSAPP: Descriptor = Descriptor {
    provider: "whatsapp",
    channel_type: ChannelType::MessagingAppA,
    window: Window::After {
        free_ms: DAY_MS,
        tagged_ms: None,
    },
    identity: Identity::Phone,
    templates: true,
    media: crate::whatsapp::MEDIA_TYPES,
    inbound_media_ms: 7 * DAY_MS,
    upload_ms: 29 * DAY_MS,
    max_text: 4096,
    text_in_bytes: false,
    captions: true,
    mps: None,
    new_contact_source: ContactSource::MessagingAppAInbound,
};

const MB: u64 = 1024 * 1024;

/// What Meta's Send API takes on Messenger and Instagram (through a Page): images (8 MB
/// uploaded), video, audio and files (25 MB). Meta's saving-assets and attachment-upload
/// pages; Instagram takes a narrower set, listed in [`INSTAGRAM_MEDIA`].
pub const MESSENGER_MEDIA: &[MediaRule] = {
    use MessageType as T;
    &[
        ("image/jpeg", T::Image, 8 * MB),
        ("image/png", T::Image, 8 * MB),
        ("image/gif", T::Image, 8 * MB),
        ("video/mp4", T::Video, 25 * MB),
        ("audio/mpeg", T::Audio, 25 * MB),
        ("audio/mp4", T::Audio, 25 * MB),
        ("audio/aac", T::Audio, 25 * MB),
        ("audio/wav", T::Audio, 25 * MB),
        ("application/pdf", T::Document, 25 * MB),
        ("text/plain", T::Document, 25 * MB),
        ("application/msword", T::Document, 25 * MB),
        (
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            T::Document,
            25 * MB,
        ),
    ]
};

/// What Instagram messaging takes: png and jpeg images (8 MB); mp4, ogg, avi, mov and webm
/// video, aac, m4a, wav and mp4 audio, and pdf files (25 MB).
pub const INSTAGRAM_MEDIA: &[MediaRule] = {
    use MessageType as T;
    &[
        ("image/jpeg", T::Image, 8 * MB),
        ("image/png", T::Image, 8 * MB),
        ("video/mp4", T::Video, 25 * MB),
        ("video/webm", T::Video, 25 * MB),
        ("video/quicktime", T::Video, 25 * MB),
        ("audio/aac", T::Audio, 25 * MB),
        ("audio/mp4", T::Audio, 25 * MB),
        ("audio/wav", T::Audio, 25 * MB),
        ("application/pdf", T::Document, 25 * MB),
    ]
};

/// What a website chat takes from an agent or a visitor: images and common documents up to
/// 10 MB, kept in wm's own media store.
pub const WEBCHAT_MEDIA: &[MediaRule] = {
    use MessageType as T;
    &[
        ("image/jpeg", T::Image, 10 * MB),
        ("image/png", T::Image, 10 * MB),
        ("image/gif", T::Image, 10 * MB),
        ("image/webp", T::Image, 10 * MB),
        ("application/pdf", T::Document, 10 * MB),
    ]
};

/// Messenger (SOCIAL_MSG_A), a Facebook Page's inbox: 24 hours after the person's last
/// message, and 7 days for a human agent's reply tagged `HUMAN_AGENT` where the Page is
/// approved for it; people known by their Page-scoped id; texts under 2,000 characters;
/// attachment ids kept 90 days.
pub const MESSENGER: Descriptor = Descriptor {
    provider: "messenger",
    channel_type: ChannelType::SocialMsgA,
    window: Window::After {
        free_ms: DAY_MS,
        tagged_ms: Some(7 * DAY_MS),
    },
    identity: Identity::Scoped,
    templates: false,
    media: MESSENGER_MEDIA,
    inbound_media_ms: DAY_MS,
    upload_ms: 89 * DAY_MS,
    max_text: 1999,
    text_in_bytes: false,
    captions: false,
    mps: Some(300),
    new_contact_source: ContactSource::Other,
};

/// Instagram Direct (SOCIAL_APP_A) through the Facebook Page it is linked to: Messenger's
/// window and tag, people known by their Instagram-scoped id (and shown by username), texts
/// of at most 1,000 bytes (the limit counted here in characters is the byte limit: a
/// longer text in bytes is refused where the reply is checked).
pub const INSTAGRAM: Descriptor = Descriptor {
    provider: "instagram",
    channel_type: ChannelType::SocialAppA,
    media: INSTAGRAM_MEDIA,
    max_text: 1000,
    text_in_bytes: true,
    ..MESSENGER
};

/// A website chat (WEBCHAT), wm's own widget: no window (a business answers whenever it
/// likes), visitors known by wm's own id, files kept by wm.
pub const WEBCHAT: Descriptor = Descriptor {
    provider: "webchat",
    channel_type: ChannelType::Webchat,
    window: Window::Always,
    identity: Identity::Scoped,
    templates: false,
    media: WEBCHAT_MEDIA,
    inbound_media_ms: 365 * DAY_MS,
    upload_ms: 365 * DAY_MS,
    max_text: 4096,
    text_in_bytes: false,
    captions: true,
    mps: None,
    new_contact_source: ContactSource::WebsiteForm,
};

/// The descriptors of the channels wm speaks, one per channel type.
pub const CHANNELS: &[&Descriptor] = &[&WHATSAPP, &MESSENGER, &INSTAGRAM, &WEBCHAT];

/// The descriptor of the channel `kind`, for what is read before any provider is asked (the
/// console's reply box, limits shown to people); `None`: wm does not speak it.
pub fn of_channel(kind: ChannelType) -> Option<&'static Descriptor> {
    CHANNELS.iter().copied().find(|d| d.channel_type == kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_is_open_from_the_last_message_for_its_length() {
        let w = WHATSAPP.window;
        assert!(!w.open(None, 0));
        assert!(w.open(Some(0), DAY_MS - 1));
        assert!(!w.open(Some(0), DAY_MS));
        assert_eq!(w.closes_at(Some(5)), Some(DAY_MS + 5));
        assert!(Window::Always.open(None, 0));
        assert_eq!(Window::Always.closes_at(Some(5)), None);
    }

    #[test]
    fn media_rules_read_the_type_without_its_parameters() {
        assert_eq!(
            WHATSAPP
                .media_limit("audio/ogg; codecs=opus")
                .map(|(k, _)| k),
            Some(MessageType::Audio)
        );
        assert_eq!(WHATSAPP.media_limit("application/zip"), None);
    }
}
