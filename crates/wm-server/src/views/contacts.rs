//! Contacts (`wm_types::contacts`): a row with its mirrored identities and tags, the
//! organisation's lookups for its stage and owner, and per shape its open deals or its last
//! conversation, loaded for the whole batch.

use std::collections::HashMap;

use sea_orm::{ConnectionTrait, DbErr};
use uuid::Uuid;
use wm_types::Money;
use wm_types::Timestamp;
use wm_types::contacts::{Contact, IdentityRef, OpenDeal, StageRef, UserRef};

use crate::db::contacts::{fields_of, identities_of};
use crate::db::deals;
use crate::db::entities::{contact, identity};
use crate::db::lookups::OrgLookups;

/// Which variant of the contact resource to build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Create, get and update: with `organizationId` and `openDeals`.
    Detail,
    /// List items: with `lastConversation`.
    ListItem,
}

/// A stored identity as embedded in a contact.
impl From<identity::Model> for IdentityRef {
    fn from(i: identity::Model) -> Self {
        // Instagram's identity is the username (the contract's word for it) once the profile
        // gave one; the scoped id it is answered at stays beside it.
        let shown = (i.channel_type == wm_types::enums::ChannelType::SocialAppA)
            .then(|| i.username.clone())
            .flatten();
        match shown {
            Some(username) => IdentityRef {
                id: i.id,
                channel_type: i.channel_type,
                external_id: username.clone(),
                username: Some(username),
                scoped_id: Some(i.external_id),
            },
            None => IdentityRef {
                id: i.id,
                channel_type: i.channel_type,
                external_id: i.external_id,
                username: i.username,
                scoped_id: None,
            },
        }
    }
}

/// The wire contact of a stored row, given its identities, its open deals (detail only)
/// and the organisation's lookups (which must know its stage and owner).
pub fn view(
    r: &contact::Model,
    identities: Vec<IdentityRef>,
    open_deals: Vec<OpenDeal>,
    l: &OrgLookups,
    shape: Shape,
) -> Contact {
    let f = fields_of(r);
    Contact {
        id: r.id,
        organization_id: (shape == Shape::Detail).then_some(r.organization_id),
        full_name: f.full_name,
        primary_phone: f.primary_phone.map(|p| p.as_str().to_owned()),
        primary_email: f.primary_email,
        company: f.company,
        country: f.country,
        source: f.source,
        lifecycle_stage_id: r.lifecycle_stage_id,
        lifecycle_stage: r
            .lifecycle_stage_id
            .and_then(|id| l.stage(id))
            .map(|s| StageRef {
                id: s.id,
                name: s.name.clone(),
                order: s.position,
            }),
        owner_id: r.owner_id,
        owner: r.owner_id.and_then(|id| l.users.get(&id)).map(|u| UserRef {
            id: u.id,
            full_name: u.full_name.clone(),
            email: u.email.clone(),
        }),
        opted_out: f.opted_out,
        consent: f.consent,
        tags: f.tags,
        identities,
        // Filled in by `views` for list items.
        last_conversation: (shape == Shape::ListItem).then_some(None),
        open_deals: (shape == Shape::Detail).then_some(open_deals),
        created_at: Timestamp::from_millis(r.created_at),
        updated_at: Timestamp::from_millis(r.updated_at),
    }
}

/// Builds the wire contacts for stored rows; only the detail of a contact with open deals
/// needs another query.
pub async fn load(
    conn: &impl ConnectionTrait,
    org: Uuid,
    rows: &[contact::Model],
    shape: Shape,
    l: &OrgLookups,
) -> Result<Vec<Contact>, DbErr> {
    let with_deals: Vec<Uuid> = rows
        .iter()
        .filter(|r| r.open_deals > 0)
        .map(|r| r.id)
        .collect();
    let mut last = if shape == Shape::ListItem {
        crate::db::conversations::latest_of(conn, org, rows.iter().map(|r| r.id).collect()).await?
    } else {
        HashMap::new()
    };
    let mut open: HashMap<Uuid, Vec<OpenDeal>> = HashMap::new();
    if shape == Shape::Detail && !with_deals.is_empty() {
        for d in deals::open_of_contacts(conn, org, with_deals).await? {
            open.entry(d.contact_id).or_default().push(OpenDeal {
                id: d.id,
                title: d.title,
                value: Money(d.value_micros),
                created_at: Timestamp::from_millis(d.created_at),
            });
        }
    }
    Ok(rows
        .iter()
        .map(|r| {
            let d = open.remove(&r.id).unwrap_or_default();
            let mut v = view(r, identities_of(r), d, l, shape);
            if shape == Shape::ListItem {
                v.last_conversation = Some(last.remove(&r.id));
            }
            v
        })
        .collect())
}
