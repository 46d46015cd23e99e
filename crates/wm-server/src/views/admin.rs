//! Organisations, API keys, channels and deals (`wm_types::admin`): rows that hold all they
//! show, shared by the API-key and operator routes.

use wm_types::Money;
use wm_types::Timestamp;
use wm_types::admin::{ApiKey, Channel, Deal, Organization, UnappliedPart};

use crate::db::entities::{api_key, channel, deal, organization, platform_unapplied};
use crate::keys::scopes_from_db;

/// A platform webhook part wm did not apply, for the operator.
impl From<platform_unapplied::Model> for UnappliedPart {
    fn from(u: platform_unapplied::Model) -> Self {
        UnappliedPart {
            id: u.id,
            provider: u.provider,
            event_id: u.event_id,
            account: u.account,
            reason: u.reason,
            part: u.part,
            created_at: Timestamp::from_millis(u.created_at),
        }
    }
}

/// An organisation on the wire.
impl From<organization::Model> for Organization {
    fn from(o: organization::Model) -> Self {
        Organization {
            id: o.id,
            name: o.name,
            currency: o.currency,
            timezone: o.timezone,
            included_utility_messages: o.included_utility_messages,
            created_at: Timestamp::from_millis(o.created_at),
        }
    }
}

/// A key on the wire (never its secret).
impl From<api_key::Model> for ApiKey {
    fn from(k: api_key::Model) -> Self {
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
}

/// A channel on the wire.
impl From<channel::Model> for Channel {
    fn from(c: channel::Model) -> Self {
        let webchat = (c.channel_type == wm_types::enums::ChannelType::Webchat).then(|| {
            c.settings
                .as_deref()
                .and_then(|s| serde_json::from_str(s).ok())
                .unwrap_or_default()
        });
        Channel {
            id: c.id,
            channel_type: c.channel_type,
            active: c.active,
            created_at: Timestamp::from_millis(c.created_at),
            name: c.name,
            provider: c.provider,
            account_id: c.account_id,
            page_id: c.page_id,
            status: c.status,
            status_reason: c.status_reason,
            human_agent: c.human_agent,
            website_token: c.public_token,
            webchat,
            identity_secret: None,
        }
    }
}

/// A deal on the wire.
impl From<deal::Model> for Deal {
    fn from(d: deal::Model) -> Self {
        Deal {
            id: d.id,
            contact_id: d.contact_id,
            title: d.title,
            value: Money(d.value_micros),
            status: d.status,
            created_at: Timestamp::from_millis(d.created_at),
        }
    }
}
