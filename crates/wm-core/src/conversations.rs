//! Conversation schemas.

use wm_types::conversations::{ListConversationsQuery, UpdateConversation};

use crate::validate::validated;

validated!(ListConversationsQuery, UpdateConversation);
