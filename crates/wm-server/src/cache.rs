//! A short-lived cache of each organisation's stages, users and channels.
//!
//! They are read on nearly every contact request, are small, and change only through the
//! operator API (which invalidates them here). Entries live a few seconds, and a reader that
//! meets an id the cached copy does not know reloads it, so a stage or user created on
//! another replica is seen at once. Validation of ids that must exist (a PATCH's new stage)
//! still asks the database when the cache does not know them.

use std::sync::Arc;
use std::time::Duration;

use sea_orm::{ConnectionTrait, DbErr};
use uuid::Uuid;

use crate::db::lookups::OrgLookups;
use crate::ttl::TtlMap;

const TTL: Duration = Duration::from_secs(5);
/// Most organisations cached at once (least recently used go first).
const CAPACITY: u64 = 100_000;

/// The cache of every organisation's lookups, each kept `TTL` after it is read.
pub struct LookupCache(TtlMap<Uuid, Arc<OrgLookups>>);

impl Default for LookupCache {
    fn default() -> Self {
        LookupCache(crate::ttl::expiring(TTL, CAPACITY))
    }
}

impl LookupCache {
    /// The organisation's lookups, from the cache when fresh.
    pub async fn get(
        &self,
        conn: &impl ConnectionTrait,
        org: Uuid,
    ) -> Result<Arc<OrgLookups>, DbErr> {
        match self.0.get(&org) {
            Some(l) => Ok(l),
            None => self.reload(conn, org).await,
        }
    }

    /// The organisation's lookups, reloaded when they do not know one of the given ids.
    pub async fn covering(
        &self,
        conn: &impl ConnectionTrait,
        org: Uuid,
        stages: impl IntoIterator<Item = Uuid> + Clone,
        users: impl IntoIterator<Item = Uuid> + Clone,
    ) -> Result<Arc<OrgLookups>, DbErr> {
        let l = self.get(conn, org).await?;
        if l.knows(stages, users) {
            Ok(l)
        } else {
            self.reload(conn, org).await
        }
    }

    /// Reads the organisation's lookups from the database.
    pub async fn reload(
        &self,
        conn: &impl ConnectionTrait,
        org: Uuid,
    ) -> Result<Arc<OrgLookups>, DbErr> {
        let l = Arc::new(OrgLookups::load(conn, org).await?);
        self.0.insert(org, l.clone());
        Ok(l)
    }

    /// Forgets every organisation (after announcements may have been missed).
    pub fn clear(&self) {
        self.0.invalidate_all();
    }

    /// Forgets an organisation (after an operator change to its stages, users or channels).
    pub fn invalidate(&self, org: Uuid) {
        self.0.invalidate(&org);
    }
}
