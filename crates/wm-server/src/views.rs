//! Row → wire conversions shared by the API-key and operator routes.

use wm_types::Money;
use wm_types::Timestamp;
use wm_types::admin::{ApiKey, Channel, Deal, Organization};
use wm_types::lookups::{LifecycleStage, User};

use crate::auth::scopes_from_db;
use crate::db::entities::{api_key, channel, deal, lifecycle_stage, organization, user};

/// A stage on the wire.
pub fn stage_view(s: lifecycle_stage::Model) -> LifecycleStage {
    LifecycleStage {
        id: s.id,
        category: s.category,
        name: s.name,
        order: s.position,
        created_at: Timestamp::from_millis(s.created_at),
    }
}

/// A user on the wire.
pub fn user_view(u: user::Model) -> User {
    User {
        id: u.id,
        full_name: u.full_name,
        email: u.email,
        created_at: Timestamp::from_millis(u.created_at),
    }
}

/// An organisation on the wire.
pub fn organization_view(o: organization::Model) -> Organization {
    Organization {
        id: o.id,
        name: o.name,
        currency: o.currency,
        timezone: o.timezone,
        included_utility_messages: o.included_utility_messages,
        created_at: Timestamp::from_millis(o.created_at),
    }
}

/// A key on the wire (never its secret).
pub fn api_key_view(k: api_key::Model) -> ApiKey {
    ApiKey {
        id: k.id,
        name: k.name,
        user_id: k.user_id,
        prefix: k.prefix,
        scopes: scopes_from_db(&k.scopes),
        expires_at: k.expires_at.map(Timestamp::from_millis),
        revoked_at: k.revoked_at.map(Timestamp::from_millis),
        created_at: Timestamp::from_millis(k.created_at),
    }
}

/// A channel on the wire.
pub fn channel_view(c: channel::Model) -> Channel {
    Channel {
        id: c.id,
        channel_type: c.channel_type,
        active: c.active,
        created_at: Timestamp::from_millis(c.created_at),
    }
}

/// A deal on the wire.
pub fn deal_view(d: deal::Model) -> Deal {
    Deal {
        id: d.id,
        contact_id: d.contact_id,
        title: d.title,
        value: Money(d.value_micros),
        status: d.status,
        created_at: Timestamp::from_millis(d.created_at),
    }
}
