//! The website chat (WEBCHAT): wm's own channel, with no platform in between. A message to a
//! visitor is "sent" the moment it is handed over: it is already in wm's database, where
//! the visitor's widget reads it (woken by the contact bell, `crate::db::bell`); its files
//! are already in wm's media store. So the sender takes every message, uploads nothing and
//! needs no account.

use std::sync::Arc;

use wm_core::platform::descriptor::WEBCHAT;
use wm_core::provider::{
    Accepted, MediaUpload, MessagingProvider, OutboundMessage, PlatformAccount, SendError,
};

use super::registry::Provider;

/// The website chat's sender.
pub struct WebchatSender;

#[async_trait::async_trait]
impl MessagingProvider for WebchatSender {
    fn name(&self) -> &'static str {
        WEBCHAT.provider
    }

    async fn send(&self, message: &OutboundMessage) -> Result<Accepted, SendError> {
        // Its own id: the message is the platform's record.
        Ok(Accepted::id(format!("wc.{}", message.correlation_id)))
    }

    async fn upload_media(
        &self,
        _account: Option<&PlatformAccount>,
        _file: &MediaUpload,
    ) -> Result<String, SendError> {
        // The file stays in wm's store, where the widget reads it.
        Ok("wm".to_owned())
    }
}

/// The website chat as a provider.
pub fn provider() -> Provider {
    Provider::sender(&WEBCHAT, Arc::new(WebchatSender))
}
