//! Messaging providers: the simulated one (default), WhatsApp's Cloud API, and the pacing
//! every sender number is subject to.

pub mod pace;
pub mod simulated;
pub mod whatsapp;

pub use pace::Pacer;
