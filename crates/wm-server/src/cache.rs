//! A short-lived cache of each organisation's stages, users and channels.
//!
//! They are read on nearly every contact request, are small, and change only through the
//! operator API (which invalidates them here). Entries live a few seconds, and a reader that
//! meets an id the cached copy does not know reloads it, so a stage or user created on
//! another replica is seen at once. Validation of ids that must exist (a PATCH's new stage)
//! still asks the database when the cache does not know them.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use sea_orm::{ConnectionTrait, DbErr};
use uuid::Uuid;
use wm_types::enums::ChannelType;

use crate::db::entities::{channel, lifecycle_stage, user};
use crate::db::{lookups, tenant::in_org};
use crate::ttl::TtlMap;

const TTL: Duration = Duration::from_secs(5);
/// Most organisations cached at once (least recently used go first).
const CAPACITY: u64 = 100_000;

/// One organisation's lookups.
#[derive(Debug, Default)]
pub struct OrgLookups {
    /// Stages in funnel order.
    pub stages: Vec<lifecycle_stage::Model>,
    /// Users by id.
    pub users: HashMap<Uuid, user::Model>,
    /// Channels, oldest first.
    pub channels: Vec<channel::Model>,
}

impl OrgLookups {
    async fn load(conn: &impl ConnectionTrait, org: Uuid) -> Result<OrgLookups, DbErr> {
        use sea_orm::QueryOrder;
        Ok(OrgLookups {
            stages: lookups::stages(conn, org).await?,
            users: lookups::users(conn, org)
                .await?
                .into_iter()
                .map(|u| (u.id, u))
                .collect(),
            channels: in_org::<channel::Entity>(org)
                .order_by_asc(channel::Column::CreatedAt)
                .all(conn)
                .await?,
        })
    }

    /// A stage by id.
    pub fn stage(&self, id: Uuid) -> Option<&lifecycle_stage::Model> {
        self.stages.iter().find(|s| s.id == id)
    }

    /// A stage's name.
    pub fn stage_name(&self, id: Option<Uuid>) -> Option<String> {
        id.and_then(|id| self.stage(id)).map(|s| s.name.clone())
    }

    /// The active channel of a type.
    pub fn active_channel(&self, kind: ChannelType) -> Option<&channel::Model> {
        self.channels
            .iter()
            .find(|c| c.active && c.channel_type == kind.as_str())
    }

    /// Whether every given stage and user id is known here.
    pub fn knows(
        &self,
        stages: impl IntoIterator<Item = Uuid>,
        users: impl IntoIterator<Item = Uuid>,
    ) -> bool {
        stages.into_iter().all(|s| self.stage(s).is_some())
            && users.into_iter().all(|u| self.users.contains_key(&u))
    }
}

/// The cache of every organisation's lookups, each kept [`TTL`] after it is read.
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
