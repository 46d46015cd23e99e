#![allow(clippy::unwrap_used)]
//! The integration suite: every test on its own fresh database (SQLite in memory, or
//! PostgreSQL when `WM_TEST_DATABASE_URL` is set), through the real router.

mod admin;
mod auth;
mod automations;
mod campaigns;
mod campaigns_concurrency;
mod campaigns_eligibility;
mod campaigns_pricing;
mod campaigns_receipts;
mod campaigns_stagger;
mod client_e2e;
mod contacts_bulk;
mod contacts_create;
mod contacts_delete;
mod contacts_list;
mod contacts_update;
mod contract;
mod conversations;
mod events;
mod identities;
mod imports;
mod kit;
mod lookups;
mod notes_timeline;
mod observe;
mod openapi;
mod pg;
mod replicas;
mod replicas_harness;
mod replicas_processes;
mod reports;
mod server;
mod support;
mod tcp;
mod transport;
mod validation;
mod webhooks;
mod webhooks_management;
mod webhooks_ssrf;
mod whatsapp;
mod whatsapp_intake;
mod whatsapp_kit;
