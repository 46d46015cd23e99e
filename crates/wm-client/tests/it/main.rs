//! wm-client against a wiremock server: retries, typed errors, query strings, pagination
//! streams and the shape of every request (conversations, automations and reports in
//! `inbox`).

mod compat;
mod endpoints;
mod inbox;
mod pagination;
mod queries;
mod retries;
mod support;
