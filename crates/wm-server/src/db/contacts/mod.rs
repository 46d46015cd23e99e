//! Contact rows: reading and writing them ([`list`] holds the list with its tabs and summary,
//! [`filter`] its filters and page, [`counts`] the maintained counts, `view` the wire
//! view).

use crate::db::Unique;
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveValue::{NotSet, Set},
    ColumnTrait, ConnectionTrait, DbErr, EntityTrait, ExprTrait, QueryFilter, TryIntoModel,
};
use uuid::Uuid;
use wm_core::contacts::{ContactFields, search_text};
use wm_core::phone::Phone;
use wm_core::tags::tag_key;
use wm_types::Timestamp;
use wm_types::contacts::{Consent, IdentityRef};
use wm_types::enums::ConsentHow;

use crate::db::entities::{contact, contact_tag, identity};
use crate::db::tenant::{find_in_org, in_org};

pub mod counts;
pub mod filter;
mod list;

pub use list::{Listed, list};

/// The normalised fields of a stored contact.
pub fn fields_of(m: &contact::Model) -> ContactFields {
    ContactFields {
        full_name: m.full_name.clone(),
        primary_phone: m.primary_phone.clone().map(Phone::from_stored),
        primary_email: m.primary_email.clone(),
        company: m.company.clone(),
        country: m.country.clone(),
        source: m.source,
        lifecycle_stage_id: m.lifecycle_stage_id,
        owner_id: m.owner_id,
        opted_out: m.opted_out,
        consent: Consent {
            given: m.consent_given,
            at: m.consent_at.map(Timestamp::from_millis),
            how: m.consent_how.as_deref().and_then(ConsentHow::parse),
        },
        tags: super::stored::json("contacts.tags", m.id, &m.tags),
    }
}

fn active_model(
    id: Uuid,
    org: Uuid,
    f: &ContactFields,
    stage_changed_at: Option<i64>,
    created: i64,
    now: i64,
) -> contact::ActiveModel {
    contact::ActiveModel {
        id: Set(id),
        organization_id: Set(org),
        full_name: Set(f.full_name.clone()),
        primary_phone: Set(f.primary_phone.as_ref().map(|p| p.as_str().to_owned())),
        primary_email: Set(f.primary_email.clone()),
        company: Set(f.company.clone()),
        country: Set(f.country.clone()),
        source: Set(f.source),
        lifecycle_stage_id: Set(f.lifecycle_stage_id),
        owner_id: Set(f.owner_id),
        opted_out: Set(f.opted_out),
        consent_given: Set(f.consent.given),
        consent_at: Set(f.consent.at.map(|t| t.millis())),
        consent_how: Set(f.consent.how.map(|h| h.as_str().to_owned())),
        tags: Set(serde_json::to_string(&f.tags).unwrap_or_else(|_| "[]".to_owned())),
        identities: NotSet,
        open_deals: NotSet,
        search_text: Set(search_text(f)),
        stage_changed_at: Set(stage_changed_at),
        created_at: Set(created),
        updated_at: Set(now),
    }
}

/// One contact of the organisation.
pub async fn find(
    conn: &impl ConnectionTrait,
    org: Uuid,
    id: Uuid,
) -> Result<Option<contact::Model>, DbErr> {
    find_in_org::<contact::Entity>(org, id).unique(conn).await
}

/// The contact holding a phone in the organisation.
pub async fn find_by_phone(
    conn: &impl ConnectionTrait,
    org: Uuid,
    phone: &Phone,
) -> Result<Option<contact::Model>, DbErr> {
    in_org::<contact::Entity>(org)
        .filter(contact::Column::PrimaryPhone.eq(phone.as_str()))
        .unique(conn)
        .await
}

/// The organisation's contacts whose primary phone is one of `phones` (stored form). On
/// PostgreSQL the phones are joined as one JSON parameter: an `IN` list of a thousand
/// values is planned as a sequential scan, a join probes the index once per phone.
pub async fn with_phones(
    conn: &impl ConnectionTrait,
    org: Uuid,
    phones: &[&str],
) -> Result<Vec<contact::Model>, DbErr> {
    if phones.is_empty() {
        return Ok(Vec::new());
    }
    if conn.get_database_backend() == sea_orm::DbBackend::Postgres {
        let list = serde_json::to_string(phones).map_err(|e| DbErr::Custom(e.to_string()))?;
        return contact::Entity::find()
            .from_raw_sql(sea_orm::Statement::from_sql_and_values(
                sea_orm::DbBackend::Postgres,
                "SELECT c.* FROM contacts c \
                 JOIN json_array_elements_text($2::json) AS p(phone) ON c.primary_phone = p.phone \
                 WHERE c.organization_id = $1",
                [org.into(), list.into()],
            ))
            .all(conn)
            .await;
    }
    in_org::<contact::Entity>(org)
        .filter(contact::Column::PrimaryPhone.is_in(phones.iter().copied()))
        .all(conn)
        .await
}

/// Contacts of the organisation among `ids`.
pub async fn find_many(
    conn: &impl ConnectionTrait,
    org: Uuid,
    ids: Vec<Uuid>,
) -> Result<Vec<contact::Model>, DbErr> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    in_org::<contact::Entity>(org)
        .filter(contact::Column::Id.is_in(ids))
        .all(conn)
        .await
}

/// What a contact's tag and identity rows copy of it (a trigger keeps the stage and consent
/// in step), so a tag's or a channel's page is read in order from their own index.
#[derive(Clone, Copy, Debug)]
pub struct Mirror {
    /// When the contact was created.
    pub created_at: i64,
    /// Its stage.
    pub stage: Option<Uuid>,
    /// Whether it gave consent.
    pub consent: bool,
}

impl Mirror {
    /// A stored contact's.
    pub fn of(m: &contact::Model) -> Self {
        Mirror {
            created_at: m.created_at,
            stage: m.lifecycle_stage_id,
            consent: m.consent_given,
        }
    }
}

/// A contact about to be inserted: its id, fields and the identities about to be inserted
/// for it (mirrored on the row).
pub struct NewRow<'a> {
    /// The contact's id.
    pub id: Uuid,
    /// Its normalised fields.
    pub fields: &'a ContactFields,
    /// Its identities.
    pub identities: &'a [IdentityRef],
}

/// Inserts contacts and their tag rows, a few hundred per statement.
pub async fn insert_many(
    conn: &impl ConnectionTrait,
    org: Uuid,
    rows: &[NewRow<'_>],
    now: i64,
) -> Result<Vec<contact::Model>, DbErr> {
    let mut models = Vec::with_capacity(rows.len());
    for batch in rows.chunks(super::INSERT_BATCH) {
        let ams: Vec<contact::ActiveModel> = batch
            .iter()
            .map(|r| {
                let stage_changed_at = r.fields.lifecycle_stage_id.map(|_| now);
                let mut am = active_model(r.id, org, r.fields, stage_changed_at, now, now);
                am.identities = Set(identities_json(r.identities));
                am.open_deals = Set(0);
                am
            })
            .collect();
        for am in &ams {
            models.push(am.clone().try_into_model()?);
        }
        contact::Entity::insert_many(ams)
            .exec_without_returning(conn)
            .await?;
    }
    let tags: Vec<contact_tag::ActiveModel> = rows
        .iter()
        .flat_map(|r| {
            let mirror = Mirror {
                created_at: now,
                stage: r.fields.lifecycle_stage_id,
                consent: r.fields.consent.given,
            };
            r.fields
                .tags
                .iter()
                .map(move |t| tag_row(org, r.id, mirror, t))
        })
        .collect();
    super::insert_chunked(conn, tags).await?;
    Ok(models)
}

/// Saves new fields over a stored contact (and its tag rows when they changed).
pub async fn save(
    conn: &impl ConnectionTrait,
    current: &contact::Model,
    f: &ContactFields,
    now: i64,
) -> Result<contact::Model, DbErr> {
    let stage_changed_at = if f.lifecycle_stage_id != current.lifecycle_stage_id {
        f.lifecycle_stage_id.map(|_| now)
    } else {
        current.stage_changed_at
    };
    let model = contact::Entity::update(active_model(
        current.id,
        current.organization_id,
        f,
        stage_changed_at,
        current.created_at,
        now,
    ))
    .exec(conn)
    .await?;
    if fields_of(current).tags != f.tags {
        contact_tag::Entity::delete_many()
            .filter(contact_tag::Column::ContactId.eq(current.id))
            .exec(conn)
            .await?;
        write_tags(conn, &model, &f.tags).await?;
    }
    Ok(model)
}

/// Identities as the JSON a contact row mirrors them in.
pub fn identities_json(identities: &[IdentityRef]) -> String {
    serde_json::to_string(identities).unwrap_or_else(|_| "[]".to_owned())
}

/// The identities mirrored on a contact row.
pub fn identities_of(m: &contact::Model) -> Vec<IdentityRef> {
    super::stored::json("contacts.identities", m.id, &m.identities)
}

/// Adds `delta` to a contact's open-deal count.
pub async fn add_open_deals(
    conn: &impl ConnectionTrait,
    contact: Uuid,
    delta: i32,
) -> Result<(), DbErr> {
    contact::Entity::update_many()
        .col_expr(
            contact::Column::OpenDeals,
            Expr::col(contact::Column::OpenDeals).add(delta),
        )
        .filter(contact::Column::Id.eq(contact))
        .exec(conn)
        .await?;
    Ok(())
}

fn tag_row(org: Uuid, contact: Uuid, mirror: Mirror, tag: &str) -> contact_tag::ActiveModel {
    contact_tag::ActiveModel {
        contact_id: Set(contact),
        tag_key: Set(tag_key(tag)),
        organization_id: Set(org),
        tag: Set(tag.to_owned()),
        contact_created_at: Set(mirror.created_at),
        contact_stage_id: Set(mirror.stage),
        contact_consent: Set(mirror.consent),
    }
}

async fn write_tags(
    conn: &impl ConnectionTrait,
    contact: &contact::Model,
    tags: &[String],
) -> Result<(), DbErr> {
    if tags.is_empty() {
        return Ok(());
    }
    contact_tag::Entity::insert_many(
        tags.iter()
            .map(|t| tag_row(contact.organization_id, contact.id, Mirror::of(contact), t)),
    )
    .exec_without_returning(conn)
    .await?;
    Ok(())
}

/// Deletes a contact; its tags, identities, notes, timeline and closed deals go with it.
pub async fn delete(conn: &impl ConnectionTrait, org: Uuid, id: Uuid) -> Result<(), DbErr> {
    use super::entities::{deal, note, timeline_entry};
    contact_tag::Entity::delete_many()
        .filter(contact_tag::Column::ContactId.eq(id))
        .exec(conn)
        .await?;
    identity::Entity::delete_many()
        .filter(identity::Column::ContactId.eq(id))
        .exec(conn)
        .await?;
    note::Entity::delete_many()
        .filter(note::Column::ContactId.eq(id))
        .exec(conn)
        .await?;
    timeline_entry::Entity::delete_many()
        .filter(timeline_entry::Column::ContactId.eq(id))
        .exec(conn)
        .await?;
    deal::Entity::delete_many()
        .filter(deal::Column::ContactId.eq(id))
        .exec(conn)
        .await?;
    contact::Entity::delete_many()
        .filter(contact::Column::OrganizationId.eq(org))
        .filter(contact::Column::Id.eq(id))
        .exec(conn)
        .await?;
    Ok(())
}

/// Refreshes PostgreSQL's planner statistics of the contact tables, after a bulk load.
/// Autovacuum analyzes them a minute or more later; until then the lists of an organisation
/// that just grew from thousands of contacts to a hundred thousand are planned for its old
/// size (the scale benchmark measured 35–113 ms instead of 2–15 ms in that window). SQLite's
/// planner reads no such statistics.
pub async fn analyze(conn: &impl ConnectionTrait) -> Result<(), DbErr> {
    if conn.get_database_backend() == sea_orm::DbBackend::Postgres {
        conn.execute_unprepared("ANALYZE contacts, contact_tags, contact_identities")
            .await?;
    }
    Ok(())
}
