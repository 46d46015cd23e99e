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

/// WhatsApp Cloud API settings (`WM_WHATSAPP_*`); by default Meta's Graph API, `v24.0`.
pub type Settings = super::meta_hub::MetaApp;

/// WhatsApp's settings when none are given: Meta's Graph API at the version wm speaks.
pub fn default_settings() -> Settings {
    Settings {
        graph_url: "https://graph.facebook.com".into(),
        api_version: "v24.0".into(),
        app_secret: None,
        verify_token: None,
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
