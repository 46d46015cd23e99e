//! Messaging providers: the simulated one (default), WhatsApp's Cloud API, and the pacing
//! every sender number is subject to.

pub mod pace;
pub mod simulated;
pub mod whatsapp;

pub use pace::Pacer;

use std::sync::Arc;

use wm_core::platform::{MediaSource, PlatformIntake, TemplateCatalog};

/// The receiving side of the platforms wm talks to.
#[derive(Clone, Default)]
pub struct Platforms {
    /// Webhook intakes, by name (`/platform/{name}/webhook`).
    pub intakes: Vec<Arc<dyn PlatformIntake>>,
    /// Where inbound media is fetched from, by name.
    pub media_sources: Vec<Arc<dyn MediaSource>>,
    /// Where the operator's template sync lists templates.
    pub catalog: Option<Arc<dyn TemplateCatalog>>,
}

/// The one place a provider's receiving side is wired: its webhook intake, its media source
/// and its template catalog (whatever the sending provider is: templates can be synced and
/// webhooks taken while sends are simulated).
pub fn platforms(settings: &crate::state::Settings) -> Platforms {
    let whatsapp = whatsapp::WhatsAppProvider::new(
        &settings.whatsapp.graph_url,
        &settings.whatsapp.api_version,
    )
    .map_err(|e| tracing::warn!(error = %e, "the WhatsApp client could not be built"))
    .ok()
    .map(Arc::new);
    let intake = whatsapp::webhook::WhatsAppIntake {
        verify_token: settings.whatsapp.verify_token.clone(),
        app_secret: settings.whatsapp.app_secret.clone(),
    };
    Platforms {
        intakes: vec![Arc::new(intake)],
        media_sources: whatsapp
            .iter()
            .map(|w| Arc::clone(w) as Arc<dyn MediaSource>)
            .collect(),
        catalog: whatsapp.map(|w| w as Arc<dyn TemplateCatalog>),
    }
}
