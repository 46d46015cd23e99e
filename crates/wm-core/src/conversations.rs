//! Conversation schemas.

use std::sync::LazyLock;

use wm_types::conversations::{ListConversationsQuery, UpdateConversation};
use wm_types::enums::{ChannelType, ConversationStatus};

use crate::validate::kinds::*;
use crate::validate::{Kind, Schema, Validated, with_paging};

static LIST: LazyLock<Schema> = LazyLock::new(|| {
    with_paging(Schema::new())
        .optional("filter", one_of(&["all", "unassigned", "mine", "resolved"]))
        .optional("status", one_of(&ConversationStatus::wire_values()))
        .optional("channelId", Kind::Uuid)
        .optional("channelType", one_of(&ChannelType::wire_values()))
        .optional("contactId", Kind::Uuid)
        .optional("assignedToUserId", Kind::Uuid)
        .optional("q", string_max(100))
});
static UPDATE: LazyLock<Schema> = LazyLock::new(|| {
    Schema::new()
        .optional_not_null("status", one_of(&ConversationStatus::wire_values()))
        .optional("assignedToUserId", Kind::Uuid)
});

impl Validated for ListConversationsQuery {
    fn schema() -> &'static Schema {
        &LIST
    }
}
impl Validated for UpdateConversation {
    fn schema() -> &'static Schema {
        &UPDATE
    }
}
