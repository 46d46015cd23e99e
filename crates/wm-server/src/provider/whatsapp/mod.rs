//! WhatsApp Business Cloud API (Meta Graph API): the HTTP client that sends messages and
//! lists templates ([`client`]), and the reading and verification of the platform's
//! webhooks ([`webhook`]); [`provider`] hands them to the registry. What the platform's
//! error codes mean is decided in [`wm_core::whatsapp`]; this module only reads them.

pub mod client;
pub mod webhook;

use std::sync::Arc;

pub use client::WhatsAppProvider;
use wm_core::platform::descriptor::WHATSAPP;
use wm_core::provider::PlatformAccount;

use super::registry::{Credentials, Provider};

/// WhatsApp Cloud API settings (`WM_WHATSAPP_*`).
#[derive(Clone)]
pub struct Settings {
    /// Graph API base URL.
    pub graph_url: String,
    /// Graph API version (`v24.0`).
    pub api_version: String,
    /// The app secret that signs platform webhooks (none: the intake refuses them).
    pub app_secret: Option<String>,
    /// The verification handshake's token (none: the handshake is refused).
    pub verify_token: Option<String>,
}

impl std::fmt::Debug for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Settings")
            .field("graph_url", &self.graph_url)
            .field("api_version", &self.api_version)
            .field("app_secret", &self.app_secret.as_ref().map(|_| "<set>"))
            .field("verify_token", &self.verify_token.as_ref().map(|_| "<set>"))
            .finish()
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            graph_url: "https://graph.facebook.com".into(),
            api_version: "v24.0".into(),
            app_secret: None,
            verify_token: None,
        }
    }
}

/// A number's Cloud API account: its phone number id and its access token.
fn account(c: &Credentials<'_>) -> Option<PlatformAccount> {
    Some(PlatformAccount {
        id: c.account_id?.to_owned(),
        access_token: c.token?.to_owned(),
    })
}

/// WhatsApp as a provider: its client sends, fetches media and lists templates; its
/// intake takes the webhooks. `Err` when the client cannot be built (a bad URL or
/// version).
pub fn provider(settings: &Settings) -> Result<Provider, String> {
    let client = Arc::new(WhatsAppProvider::new(
        &settings.graph_url,
        &settings.api_version,
    )?);
    let intake = webhook::WhatsAppIntake {
        verify_token: settings.verify_token.clone(),
        app_secret: settings.app_secret.clone(),
    };
    Ok(Provider {
        descriptor: &WHATSAPP,
        sender: client.clone(),
        intake: Some(Arc::new(intake)),
        media: Some(client.clone()),
        catalog: Some(client),
        profiles: None,
        account,
    })
}
