//! Messaging providers: the simulated one (default), WhatsApp's Cloud API, and the pacing
//! every sender number is subject to.

pub mod pace;
pub mod simulated;
pub mod whatsapp;

pub use pace::Pacer;

use std::sync::Arc;

use wm_core::platform::{MediaSource, PlatformIntake};

/// The platforms whose webhooks wm takes: the one place a new provider's intake is wired.
pub fn intakes(settings: &crate::state::Settings) -> Vec<Arc<dyn PlatformIntake>> {
    vec![Arc::new(whatsapp::webhook::WhatsAppIntake {
        verify_token: settings.whatsapp.verify_token.clone(),
        app_secret: settings.whatsapp.app_secret.clone(),
    })]
}

/// Where inbound media is fetched from: the one place a new provider's media is wired.
pub fn media_sources(
    whatsapp: Option<&Arc<whatsapp::WhatsAppProvider>>,
) -> Vec<Arc<dyn MediaSource>> {
    whatsapp
        .map(|w| Arc::clone(w) as Arc<dyn MediaSource>)
        .into_iter()
        .collect()
}
