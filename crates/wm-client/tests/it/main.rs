//! wm-client against a wiremock server: retries, typed errors, query strings, pagination
//! streams and the shape of every request.

mod compat;
mod endpoints;
mod pagination;
mod queries;
mod retries;
mod support;
