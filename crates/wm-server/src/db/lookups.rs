//! Lookups of an organisation's stages, users and channels, one by one or all together
//! ([`OrgLookups`], which [`crate::cache`] keeps for a few seconds).

use crate::db::Unique;
use std::collections::HashMap;

use sea_orm::{ColumnTrait, ConnectionTrait, DbErr, QueryFilter, QueryOrder};
use uuid::Uuid;
use wm_types::enums::ChannelType;

use super::entities::{channel, lifecycle_stage, user};
use super::tenant::{find_in_org, in_org};

/// The organisation's stages, in funnel order.
pub async fn stages(
    conn: &impl ConnectionTrait,
    org: Uuid,
) -> Result<Vec<lifecycle_stage::Model>, DbErr> {
    in_org::<lifecycle_stage::Entity>(org)
        .order_by_asc(lifecycle_stage::Column::Position)
        .order_by_asc(lifecycle_stage::Column::CreatedAt)
        .all(conn)
        .await
}

/// One stage of the organisation.
pub async fn stage(
    conn: &impl ConnectionTrait,
    org: Uuid,
    id: Uuid,
) -> Result<Option<lifecycle_stage::Model>, DbErr> {
    find_in_org::<lifecycle_stage::Entity>(org, id)
        .unique(conn)
        .await
}

/// The organisation's users, oldest first.
pub async fn users(conn: &impl ConnectionTrait, org: Uuid) -> Result<Vec<user::Model>, DbErr> {
    in_org::<user::Entity>(org)
        .order_by_asc(user::Column::CreatedAt)
        .order_by_asc(user::Column::Id)
        .all(conn)
        .await
}

/// One user of the organisation.
pub async fn user(
    conn: &impl ConnectionTrait,
    org: Uuid,
    id: Uuid,
) -> Result<Option<user::Model>, DbErr> {
    find_in_org::<user::Entity>(org, id).unique(conn).await
}

/// The organisation's active channel of a type.
pub async fn active_channel(
    conn: &impl ConnectionTrait,
    org: Uuid,
    kind: ChannelType,
) -> Result<Option<channel::Model>, DbErr> {
    in_org::<channel::Entity>(org)
        .filter(channel::Column::ChannelType.eq(kind))
        .filter(channel::Column::Active.eq(true))
        .order_by_asc(channel::Column::CreatedAt)
        .one(conn)
        .await
}

/// Users by id, for the owners of a page of contacts.
pub async fn users_by_id(
    conn: &impl ConnectionTrait,
    org: Uuid,
    ids: Vec<Uuid>,
) -> Result<Vec<user::Model>, DbErr> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    in_org::<user::Entity>(org)
        .filter(user::Column::Id.is_in(ids))
        .all(conn)
        .await
}

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
    /// The channel types active in the organisation: conversations on the others "simply
    /// return none".
    pub fn active_types(&self) -> Vec<wm_types::enums::ChannelType> {
        self.channels
            .iter()
            .filter(|c| c.active)
            .map(|c| c.channel_type)
            .collect()
    }

    /// Reads them from the database.
    pub async fn load(conn: &impl ConnectionTrait, org: Uuid) -> Result<OrgLookups, DbErr> {
        Ok(OrgLookups {
            stages: stages(conn, org).await?,
            users: users(conn, org)
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
            .find(|c| c.active && c.channel_type == kind)
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
