//! Conversation schemas.

use wm_types::conversations::{ListConversationsQuery, UpdateConversation};
use wm_types::messages::ListMessagesQuery;

use crate::validate::validated;

validated!(
    ListConversationsQuery,
    UpdateConversation,
    ListMessagesQuery
);
