//! Lifecycle stages and users (`wm_types::lookups`).

use wm_types::Timestamp;
use wm_types::lookups::{LifecycleStage, User};

use crate::db::entities::{lifecycle_stage, user};

impl From<lifecycle_stage::Model> for LifecycleStage {
    fn from(s: lifecycle_stage::Model) -> Self {
        LifecycleStage {
            id: s.id,
            category: s.category,
            name: s.name,
            order: s.position,
            created_at: Timestamp::from_millis(s.created_at),
        }
    }
}

impl From<user::Model> for User {
    fn from(u: user::Model) -> Self {
        User {
            id: u.id,
            full_name: u.full_name,
            email: u.email,
            created_at: Timestamp::from_millis(u.created_at),
        }
    }
}
