//! Messaging providers, one folder each, and the one place they are registered
//! ([`registry()`]): the simulated platform (default for demos and tests) and WhatsApp's Cloud
//! API, side by side, with the pacing every sender account is subject to.
//!
//! A provider is its channel's [`wm_core::platform::Descriptor`] plus what the platform
//! has of sender, webhook intake, media source and template catalog
//! ([`registry::Provider`]). Everything above this module is channel-neutral: it asks the
//! registry for a channel's provider and reads its descriptor.

pub mod messenger;
pub mod meta_hub;
pub mod pace;
pub mod registry;
pub mod simulated;
pub mod webchat;
pub mod whatsapp;

pub use pace::Pacer;
pub use registry::{Credentials, Provider, Registry};

use std::sync::Arc;

use wm_core::time::Clock;

use crate::db::Db;

/// Every provider's settings.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The provider MESSAGING_APP_A sends through unless an account names another
    /// (`WM_PROVIDER`: `simulated` or `whatsapp`).
    pub messaging: String,
    /// WhatsApp's Cloud API (`WM_WHATSAPP_*`).
    pub whatsapp: whatsapp::Settings,
    /// Messenger and Instagram (`WM_MESSENGER_*`): unset values are WhatsApp's (one Meta
    /// app).
    pub messenger: messenger::Settings,
}

impl Settings {
    /// Messenger's settings with WhatsApp's filling what is not set.
    fn messenger(&self) -> messenger::Settings {
        self.messenger.or(&self.whatsapp)
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            messaging: "simulated".into(),
            whatsapp: whatsapp::default_settings(),
            messenger: messenger::Settings::default(),
        }
    }
}

/// The providers of a process, from its settings: the one place a provider is registered
/// (a new channel's provider is one line here). `Err` when the default messaging provider
/// cannot be built.
pub fn registry(settings: &Settings, db: &Db, clock: Arc<dyn Clock>) -> Result<Registry, String> {
    let mut r = Registry::default();
    r.register(simulated::provider(db.clone(), clock));
    r.register(webchat::provider());
    match whatsapp::provider(&settings.whatsapp) {
        Ok(p) => {
            r.register(p);
        }
        Err(e) if settings.messaging == "whatsapp" => return Err(format!("WhatsApp: {e}")),
        Err(e) => tracing::warn!(error = %e, "the WhatsApp client could not be built"),
    }
    match messenger::providers(&settings.messenger()) {
        Ok(ps) => {
            for p in ps {
                r.register(p);
            }
        }
        Err(e) => tracing::warn!(error = %e, "the Messenger client could not be built"),
    }
    r.set_default(&settings.messaging);
    Ok(r)
}
