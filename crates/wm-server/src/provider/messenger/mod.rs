//! Messenger (a Facebook Page's inbox, SOCIAL_MSG_A) and Instagram Direct through the Page
//! its professional account is linked to (SOCIAL_APP_A): one platform, Meta's Messenger
//! Platform, so one folder and two providers. The [`client`] sends, uploads, reads profiles
//! and fetches the files people send; [`webhook`] reads the `page` and `instagram`
//! webhooks; the handshake and signature are Meta's Webhooks product
//! ([`super::meta_hub`]), with the same app as WhatsApp unless configured apart.

pub mod client;
pub mod webhook;

use std::sync::Arc;

pub use client::MessengerClient;
use wm_core::platform::descriptor::{INSTAGRAM, MESSENGER};
use wm_core::platform::{
    Descriptor, FetchError, Fetched, Handshake, MediaSource, PlatformEvent, PlatformIntake,
    Profile, ProfileSource,
};
use wm_core::provider::{
    Accepted, MediaUpload, MessagingProvider, OutboundMessage, PlatformAccount, SendError,
};

use super::meta_hub;
use super::registry::{Credentials, Provider};

/// Messenger and Instagram settings (`WM_MESSENGER_*`; unset ones fall back to WhatsApp's,
/// the same Meta app).
pub type Settings = meta_hub::MetaApp;

/// A Page's account: the Page id the Send API is called on and the Page token.
fn account(c: &Credentials<'_>) -> Option<PlatformAccount> {
    Some(PlatformAccount {
        id: c.account_id?.to_owned(),
        access_token: c.token?.to_owned(),
    })
}

/// One of the two platforms: its client, its channel's descriptor and its webhook object.
struct Meta {
    client: MessengerClient,
    descriptor: &'static Descriptor,
    object: &'static str,
    hub: Settings,
}

#[async_trait::async_trait]
impl MessagingProvider for Meta {
    fn name(&self) -> &'static str {
        self.descriptor.provider
    }

    async fn send(&self, message: &OutboundMessage) -> Result<Accepted, SendError> {
        self.client.send(message).await
    }

    async fn upload_media(
        &self,
        account: Option<&PlatformAccount>,
        file: &MediaUpload,
    ) -> Result<String, SendError> {
        let account = account.ok_or_else(|| SendError::Paused {
            stop_reason: wm_core::whatsapp::PLATFORM_NOT_CONFIGURED.to_owned(),
            reason: "the channel has no Page token configured".into(),
        })?;
        self.client.upload(account, file).await
    }
}

impl PlatformIntake for Meta {
    fn name(&self) -> &'static str {
        self.descriptor.provider
    }

    fn handshake(&self, query: &[(String, String)]) -> Handshake {
        meta_hub::handshake(self.hub.verify_token.as_deref(), query)
    }

    fn verify(&self, header: &dyn Fn(&str) -> Option<String>, body: &[u8]) -> bool {
        meta_hub::verify(self.hub.app_secret.as_deref(), header, body)
    }

    fn parse(&self, body: &[u8]) -> Result<Vec<PlatformEvent>, String> {
        webhook::parse(self.object, body)
    }
}

#[async_trait::async_trait]
impl MediaSource for Meta {
    fn name(&self) -> &'static str {
        self.descriptor.provider
    }

    async fn fetch(
        &self,
        link: &str,
        _account: &PlatformAccount,
        max_bytes: u64,
    ) -> Result<Fetched, FetchError> {
        self.client.fetch(link, max_bytes).await
    }
}

#[async_trait::async_trait]
impl ProfileSource for Meta {
    async fn profile(
        &self,
        scoped_id: &str,
        account: &PlatformAccount,
    ) -> Result<Profile, FetchError> {
        self.client.profile(scoped_id, account).await
    }
}

/// Messenger and Instagram as providers. `Err` when the client cannot be built.
pub fn providers(settings: &Settings) -> Result<Vec<Provider>, String> {
    let mut out = Vec::new();
    for (descriptor, object) in [(&MESSENGER, "page"), (&INSTAGRAM, "instagram")] {
        let meta = Arc::new(Meta {
            client: MessengerClient::new(
                &settings.graph_url,
                &settings.api_version,
                descriptor.channel_type == INSTAGRAM.channel_type,
            )?,
            descriptor,
            object,
            hub: settings.clone(),
        });
        out.push(Provider {
            descriptor,
            sender: meta.clone(),
            intake: Some(meta.clone()),
            media: Some(meta.clone()),
            catalog: None,
            profiles: Some(meta),
            account,
        });
    }
    Ok(out)
}
