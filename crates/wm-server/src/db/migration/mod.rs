//! Schema migrations, run at start-up (and by every test on its fresh database). A
//! migration that has landed is never edited (the `frozen` test checks it): a schema change is a
//! new migration.

use sea_orm_migration::prelude::*;

#[cfg(test)]
mod frozen;
mod helpers;
mod m0001_init;
mod m0002_webhooks;
mod m0003_campaigns;
mod m0004_rate_overrides;
mod m0005_inbox;
mod m0006_platform;
mod m0007_replicas;
mod m0008_imports;
mod m0009_contact_counts;
mod m0010_campaign_charges;
mod m0011_recipient_indexes;
mod m0012_recipient_keys;
mod m0013_tallies;
mod m0014_audience_tallies;
mod m0015_ledger_order;
mod m0016_messages;
mod m0017_idempotency;
mod m0018_console_sessions;
mod m0019_contact_history;
mod m0020_idempotency_commits;
mod m0021_platform_users;
mod m0022_account_providers;
mod m0023_conversation_windows;
mod m0024_channel_accounts;

/// The migrator: every migration, in order.
pub struct Migrator;

#[async_trait::async_trait]
impl MigratorTrait for Migrator {
    fn migrations() -> Vec<Box<dyn MigrationTrait>> {
        vec![
            Box::new(m0001_init::Migration),
            Box::new(m0002_webhooks::Migration),
            Box::new(m0003_campaigns::Migration),
            Box::new(m0004_rate_overrides::Migration),
            Box::new(m0005_inbox::Migration),
            Box::new(m0006_platform::Migration),
            Box::new(m0007_replicas::Migration),
            Box::new(m0008_imports::Migration),
            Box::new(m0009_contact_counts::Migration),
            Box::new(m0010_campaign_charges::Migration),
            Box::new(m0011_recipient_indexes::Migration),
            Box::new(m0012_recipient_keys::Migration),
            Box::new(m0013_tallies::Migration),
            Box::new(m0014_audience_tallies::Migration),
            Box::new(m0015_ledger_order::Migration),
            Box::new(m0016_messages::Migration),
            Box::new(m0017_idempotency::Migration),
            Box::new(m0018_console_sessions::Migration),
            Box::new(m0019_contact_history::Migration),
            Box::new(m0020_idempotency_commits::Migration),
            Box::new(m0021_platform_users::Migration),
            Box::new(m0022_account_providers::Migration),
            Box::new(m0023_conversation_windows::Migration),
            Box::new(m0024_channel_accounts::Migration),
        ]
    }
}
