//! WhatsApp Business Cloud API (Meta Graph API): the HTTP client that sends templates and
//! lists them ([`client`]), and the reading and verification of the platform's webhooks
//! ([`webhook`]). What the platform's error codes mean is decided in
//! [`wm_core::whatsapp`]; this module only reads them.

pub mod client;
pub mod webhook;

pub use client::WhatsAppProvider;

/// The platform's text with U+0000 replaced (PostgreSQL refuses it in text columns).
pub(crate) fn no_nul(s: &str) -> String {
    s.replace('\0', "\u{FFFD}")
}
