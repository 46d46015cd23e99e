//! A contact's history and channels: identities, internal notes and the timeline.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::common::Timestamp;
use crate::enums::{ChannelType, ContactSource, ConversationStatus, RecipientStatus};

/// `POST /contacts/{id}/identities`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateIdentity {
    /// An active channel type of the organisation.
    pub channel_type: ChannelType,
    /// The id on that channel (not blank).
    #[schemars(length(max = 255), regex(pattern = r"\S"))]
    pub external_id: String,
}

/// `{id, type}` of a channel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ChannelRef {
    /// Channel id.
    pub id: Uuid,
    /// Channel type.
    #[serde(rename = "type")]
    pub channel_type: ChannelType,
}

/// A channel identity as returned on creation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Identity {
    /// Identity id.
    pub id: Uuid,
    /// The contact it points to.
    pub contact_id: Uuid,
    /// The channel.
    pub channel_id: Uuid,
    /// The channel.
    pub channel: ChannelRef,
    /// The id on that channel.
    pub external_id: String,
}

/// `POST /contacts/{id}/notes`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateNote {
    /// The text, at least 1 character and not blank.
    #[schemars(length(min = 1), regex(pattern = r"\S"))]
    pub body: String,
}

/// `{id, fullName}` of a note's author.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuthorRef {
    /// User id.
    pub id: Uuid,
    /// Display name.
    pub full_name: String,
}

/// An internal note on a contact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Note {
    /// Note id.
    pub id: Uuid,
    /// The contact.
    pub contact_id: Uuid,
    /// The user who wrote it (the API key's user).
    pub author_id: Uuid,
    /// The author.
    pub author: AuthorRef,
    /// The text.
    pub body: String,
    /// Creation time.
    pub created_at: Timestamp,
}

/// `{id, name}` of a campaign in a timeline entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CampaignRef {
    /// Campaign id.
    pub id: Uuid,
    /// Campaign name.
    pub name: String,
}

/// `{id, channelType, status}` of a conversation in a timeline entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConversationRef {
    /// Conversation id.
    pub id: Uuid,
    /// Its channel's type.
    pub channel_type: ChannelType,
    /// Its status.
    pub status: ConversationStatus,
}

/// What happened, with the fields of its kind. Kinds are added over time (`consent` and
/// `phone` came after the spec's five), so a match needs a wildcard arm.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
#[non_exhaustive]
pub enum TimelineKind {
    /// The contact was created.
    Created {
        /// Its source.
        source: ContactSource,
    },
    /// The contact moved between lifecycle stages.
    Stage {
        /// Who moved it.
        by: String,
        /// Previous stage name.
        from: Option<String>,
        /// New stage name.
        to: Option<String>,
        /// True when done by `/contacts/bulk`.
        bulk: bool,
    },
    /// A note was written.
    Note {
        /// The author's name.
        author: String,
        /// The text.
        body: String,
    },
    /// The contact was a campaign recipient.
    #[serde(rename_all = "camelCase")]
    Campaign {
        /// The campaign.
        campaign: CampaignRef,
        /// The recipient's status.
        status: RecipientStatus,
        /// When sent.
        sent_at: Option<Timestamp>,
        /// When delivered.
        delivered_at: Option<Timestamp>,
        /// When read.
        read_at: Option<Timestamp>,
        /// When it failed.
        failed_at: Option<Timestamp>,
        /// Why it failed.
        error_message: Option<String>,
    },
    /// A conversation with the contact.
    Conversation {
        /// The conversation.
        conversation: ConversationRef,
    },
    /// The person changed their marketing consent on the messaging platform (WhatsApp's
    /// "stop" / "resume" in the chat, or a message refused because they stopped marketing
    /// messages). The spec leaves consent entries unshown; this is wm's.
    #[serde(rename_all = "camelCase")]
    Consent {
        /// Who changed it (the platform, on the person's behalf).
        by: String,
        /// Whether the contact is now opted out.
        opted_out: bool,
        /// What the platform reported.
        reason: String,
    },
    /// The contact's WhatsApp number changed (the person moved their account to a new
    /// number).
    Phone {
        /// Who changed it.
        by: String,
        /// The previous primary phone.
        from: Option<String>,
        /// The new one.
        to: String,
    },
    /// A kind this version does not know (a newer server's): the entry still reads, with
    /// its id and time, instead of failing the whole timeline page.
    #[serde(other)]
    #[schemars(skip)]
    Unknown,
}

/// One entry of a contact's timeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(transform = common_fields_in_each_kind)]
pub struct TimelineEntry {
    /// Entry id.
    pub id: Uuid,
    /// When it happened.
    pub at: Timestamp,
    /// The kind and its fields (`type` on the wire).
    #[serde(flatten)]
    pub kind: TimelineKind,
}

/// Timeline filter.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TimelineFilter {
    /// Every entry.
    #[default]
    All,
    /// Conversation entries.
    Conversations,
    /// Campaign entries.
    Campaigns,
    /// Note entries.
    Notes,
}

/// `GET /contacts/{id}/timeline` query.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TimelineQuery {
    /// Page, default 1.
    #[serde(default)]
    #[schemars(range(min = 1, max = crate::common::MAX_PAGE))]
    pub page: Option<u64>,
    /// Page size, 1–100, default 20.
    #[serde(default)]
    #[schemars(range(min = 1, max = 100))]
    pub page_size: Option<u64>,
    /// Entry type filter.
    #[serde(default, rename = "type")]
    pub entry_type: Option<TimelineFilter>,
}

/// The schema of an entry as one union of its kinds, each with `id` and `at` beside its
/// `type`: what `serde(flatten)` writes, in the form generators read (fields beside a
/// `oneOf` end up in their "additional properties").
fn common_fields_in_each_kind(schema: &mut schemars::Schema) {
    let Some(top) = schema.as_object_mut() else {
        return;
    };
    let common = top.remove("properties");
    let required = top.remove("required");
    top.remove("type");
    let Some(serde_json::Value::Array(kinds)) = top.get_mut("oneOf") else {
        return;
    };
    for kind in kinds
        .iter_mut()
        .filter_map(serde_json::Value::as_object_mut)
    {
        if let (Some(serde_json::Value::Object(fields)), Some(serde_json::Value::Object(own))) =
            (&common, kind.get_mut("properties"))
        {
            let mut all = fields.clone();
            all.extend(std::mem::take(own));
            *own = all;
        }
        if let (Some(serde_json::Value::Array(names)), Some(serde_json::Value::Array(own))) =
            (&required, kind.get_mut("required"))
        {
            let mut all = names.clone();
            all.extend(std::mem::take(own));
            *own = all;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timeline_kind_added_later_reads_as_unknown() {
        let entry: TimelineEntry = serde_json::from_str(
            r#"{"id":"01a22141-b5cc-7084-abed-f4ad889ef18b","at":"2026-11-28T08:00:00.000Z",
                "type":"dealWon","deal":{"id":"x","value":12}}"#,
        )
        .expect("an unknown kind still reads");
        assert_eq!(entry.kind, TimelineKind::Unknown);
        let known: TimelineEntry = serde_json::from_str(
            r#"{"id":"01a22141-b5cc-7084-abed-f4ad889ef18b","at":"2026-11-28T08:00:00.000Z",
                "type":"note","author":"Ana","body":"hola"}"#,
        )
        .expect("a note");
        assert_eq!(
            known.kind,
            TimelineKind::Note {
                author: "Ana".into(),
                body: "hola".into()
            }
        );
    }
}
