//! Schema migrations, run at start-up (and by every test on its fresh database).

use sea_orm_migration::prelude::*;

mod m0001_init;

/// The migrator: every migration, in order.
pub struct Migrator;

#[async_trait::async_trait]
impl MigratorTrait for Migrator {
    fn migrations() -> Vec<Box<dyn MigrationTrait>> {
        vec![Box::new(m0001_init::Migration)]
    }
}
