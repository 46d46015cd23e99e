//! One module per console section.

pub mod automations;
pub mod campaign;
pub mod campaigns;
pub mod catalog;
pub mod compose;
pub mod contact;
pub mod contact_form;
pub mod contacts;
pub mod home;
pub mod imports;
pub mod inbox;
pub mod push;
pub mod reply_file;
pub mod reports;
pub mod sign_in;
pub mod thread;
pub mod webhooks;
