//! Conversation schemas.

use wm_types::conversations::{ListConversationsQuery, UpdateConversation};
use wm_types::messages::{ListMessagesQuery, SendMessage};

use crate::validate::validated;

validated!(
    ListConversationsQuery,
    UpdateConversation,
    ListMessagesQuery,
    SendMessage
);
