//! Contact rows: reading, writing, the list with its tabs and summary, and the wire view.

use std::collections::HashMap;

use sea_orm::sea_query::{CaseStatement, Expr, Func, Query, SimpleExpr};
use sea_orm::{
    ActiveValue::{NotSet, Set},
    ColumnTrait, Condition, ConnectionTrait, DbErr, EntityTrait, ExprTrait, FromQueryResult,
    QueryFilter, QueryOrder, QuerySelect, TryIntoModel,
};
use uuid::Uuid;
use wm_core::contacts::{ContactFields, search_text};
use wm_core::phone::Phone;
use wm_core::tags::tag_key;
use wm_types::Money;
use wm_types::Timestamp;
use wm_types::common::PageMeta;
use wm_types::contacts::{
    Consent, Contact, ContactList, ContactSummary, ContactTab, ContactTabs, IdentityRef,
    ListContactsQuery, OpenDeal, OwnerFilter, StageRef, UserRef,
};
use wm_types::enums::{ChannelType, ConsentHow, ContactSource, StageCategory};

use super::entities::{contact, contact_tag, identity, lifecycle_stage};
use super::tenant::{find_in_org, in_org};
use super::{deals, identities, like_contains, lookups};
use crate::cache::OrgLookups;

const DAY_MS: i64 = 86_400_000;

/// The normalised fields of a stored contact.
pub fn fields_of(m: &contact::Model) -> ContactFields {
    ContactFields {
        full_name: m.full_name.clone(),
        primary_phone: m.primary_phone.clone().map(Phone::from_stored),
        primary_email: m.primary_email.clone(),
        company: m.company.clone(),
        country: m.country.clone(),
        source: ContactSource::parse(&m.source).unwrap_or(ContactSource::Other),
        lifecycle_stage_id: m.lifecycle_stage_id,
        owner_id: m.owner_id,
        opted_out: m.opted_out,
        consent: Consent {
            given: m.consent_given,
            at: m.consent_at.map(Timestamp::from_millis),
            how: m.consent_how.as_deref().and_then(ConsentHow::parse),
        },
        tags: serde_json::from_str(&m.tags).unwrap_or_default(),
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
        source: Set(f.source.as_str().to_owned()),
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
    find_in_org::<contact::Entity>(org, id).one(conn).await
}

/// The contact holding a phone in the organisation.
pub async fn find_by_phone(
    conn: &impl ConnectionTrait,
    org: Uuid,
    phone: &Phone,
) -> Result<Option<contact::Model>, DbErr> {
    in_org::<contact::Entity>(org)
        .filter(contact::Column::PrimaryPhone.eq(phone.as_str()))
        .one(conn)
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

/// Inserts a contact (with the identities about to be inserted for it) and its tag rows.
pub async fn insert(
    conn: &impl ConnectionTrait,
    id: Uuid,
    org: Uuid,
    f: &ContactFields,
    identities: &[IdentityRef],
    now: i64,
) -> Result<contact::Model, DbErr> {
    let stage_changed_at = f.lifecycle_stage_id.map(|_| now);
    let mut am = active_model(id, org, f, stage_changed_at, now, now);
    am.identities = Set(identities_json(identities));
    am.open_deals = Set(0);
    contact::Entity::insert(am.clone())
        .exec_without_returning(conn)
        .await?;
    write_tags(conn, org, id, &f.tags).await?;
    am.try_into_model()
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
        write_tags(conn, current.organization_id, current.id, &f.tags).await?;
    }
    Ok(model)
}

fn identities_json(identities: &[IdentityRef]) -> String {
    serde_json::to_string(identities).unwrap_or_else(|_| "[]".to_owned())
}

/// The identities mirrored on a contact row.
pub fn identities_of(m: &contact::Model) -> Vec<IdentityRef> {
    serde_json::from_str(&m.identities).unwrap_or_default()
}

/// Rewrites the identities mirrored on a contact from `contact_identities`.
pub async fn refresh_identities(
    conn: &impl ConnectionTrait,
    org: Uuid,
    contact: Uuid,
) -> Result<(), DbErr> {
    use sea_orm::sea_query::Expr;
    let list: Vec<IdentityRef> = identities::of_contacts(conn, org, vec![contact])
        .await?
        .into_iter()
        .map(identity_ref)
        .collect();
    contact::Entity::update_many()
        .col_expr(
            contact::Column::Identities,
            Expr::val(identities_json(&list)),
        )
        .filter(contact::Column::Id.eq(contact))
        .exec(conn)
        .await?;
    Ok(())
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

async fn write_tags(
    conn: &impl ConnectionTrait,
    org: Uuid,
    contact: Uuid,
    tags: &[String],
) -> Result<(), DbErr> {
    if tags.is_empty() {
        return Ok(());
    }
    contact_tag::Entity::insert_many(tags.iter().map(|t| contact_tag::ActiveModel {
        contact_id: Set(contact),
        tag_key: Set(tag_key(t)),
        organization_id: Set(org),
        tag: Set(t.clone()),
    }))
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

/// Which variant of the contact resource to build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Create, get and update: with `organizationId` and `openDeals`.
    Detail,
    /// List items: with `lastConversation`.
    ListItem,
}

/// A stored identity as embedded in a contact.
pub fn identity_ref(i: identity::Model) -> IdentityRef {
    IdentityRef {
        id: i.id,
        channel_type: ChannelType::parse(&i.channel_type).unwrap_or(ChannelType::Unknown),
        external_id: i.external_id,
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
pub async fn views(
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
        super::conversations::latest_of(conn, org, rows.iter().map(|r| r.id).collect()).await?
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

/// The stage ids of each category, to express tabs as conditions.
struct Categories {
    lead: Vec<Uuid>,
    in_progress: Vec<Uuid>,
    customer: Vec<Uuid>,
    inactive: Vec<Uuid>,
}

impl Categories {
    fn new(stages: &[lifecycle_stage::Model]) -> Self {
        Categories {
            lead: lookups::stage_ids(stages, StageCategory::Lead),
            in_progress: lookups::stage_ids(stages, StageCategory::InProgress),
            customer: lookups::stage_ids(stages, StageCategory::Customer),
            inactive: lookups::stage_ids(stages, StageCategory::Inactive),
        }
    }

    fn in_stages(ids: &[Uuid]) -> Condition {
        if ids.is_empty() {
            // No stage of that category: nothing matches.
            Condition::all().add(Expr::val(1).eq(Expr::val(0)))
        } else {
            Condition::all().add(contact::Column::LifecycleStageId.is_in(ids.to_vec()))
        }
    }

    fn tab(&self, tab: ContactTab) -> Condition {
        match tab {
            ContactTab::All => Condition::all(),
            ContactTab::Leads => Condition::any()
                .add(contact::Column::LifecycleStageId.is_null())
                .add(Self::in_stages(&self.lead)),
            ContactTab::InProgress => Self::in_stages(&self.in_progress),
            ContactTab::Customers => Self::in_stages(&self.customer),
            ContactTab::Inactive => Self::in_stages(&self.inactive),
            ContactTab::NoConsent => Condition::all().add(contact::Column::ConsentGiven.eq(false)),
        }
    }
}

/// The filters of the list other than the tab.
fn filters(org: Uuid, q: &ListContactsQuery, now: i64) -> Condition {
    let mut c = Condition::all().add(contact::Column::OrganizationId.eq(org));
    if let Some(id) = q.lifecycle_stage_id {
        c = c.add(contact::Column::LifecycleStageId.eq(id));
    }
    match q.owner_id {
        Some(OwnerFilter::Unowned) => c = c.add(contact::Column::OwnerId.is_null()),
        Some(OwnerFilter::User(id)) => c = c.add(contact::Column::OwnerId.eq(id)),
        None => {}
    }
    if let Some(s) = q.source {
        c = c.add(contact::Column::Source.eq(s.as_str()));
    }
    if let Some(ct) = q.channel_type {
        c = c.add(
            contact::Column::Id.in_subquery(
                Query::select()
                    .column(identity::Column::ContactId)
                    .from(identity::Entity)
                    .and_where(identity::Column::OrganizationId.eq(org))
                    .and_where(identity::Column::ChannelType.eq(ct.as_str()))
                    .to_owned(),
            ),
        );
    }
    if let Some(tag) = q.tag.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
        c = c.add(
            contact::Column::Id.in_subquery(
                Query::select()
                    .column(contact_tag::Column::ContactId)
                    .from(contact_tag::Entity)
                    .and_where(contact_tag::Column::OrganizationId.eq(org))
                    .and_where(contact_tag::Column::TagKey.eq(tag_key(tag)))
                    .to_owned(),
            ),
        );
    }
    for text in [&q.q, &q.search].into_iter().flatten() {
        let text = text.trim();
        if !text.is_empty() {
            c = c.add(contact::Column::SearchText.like(like_contains(text)));
        }
    }
    if let Some(days) = q.days {
        c = c.add(contact::Column::CreatedAt.gte(now - i64::from(days) * DAY_MS));
    }
    if let Some(ids) = &q.ids {
        c = c.add(contact::Column::Id.is_in(ids.clone()));
    }
    c
}

fn count_if(c: Condition) -> SimpleExpr {
    let case: SimpleExpr = CaseStatement::new()
        .case(c, Expr::val(1))
        .finally(Expr::val(0))
        .into();
    Func::coalesce([SimpleExpr::from(Func::sum(case)), Expr::val(0)]).into()
}

#[derive(Debug, FromQueryResult)]
struct TabCounts {
    all: i64,
    leads: i64,
    in_progress: i64,
    customers: i64,
    inactive: i64,
    no_consent: i64,
}

#[derive(Debug, FromQueryResult)]
struct SummaryCounts {
    total: i64,
    new_in_period: i64,
    with_consent: i64,
    leads_new: i64,
    leads_in_progress: i64,
    customers: i64,
    customers_new: i64,
}

#[derive(Debug, FromQueryResult)]
struct TagRow {
    tag: String,
}

fn n(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

/// `GET /contacts`: a page of contacts (newest first), the tab counts under the other
/// filters, and the organisation-wide summary over the last `days` (default 30) days.
pub async fn list(
    conn: &impl ConnectionTrait,
    org: Uuid,
    q: &ListContactsQuery,
    now: i64,
    l: &OrgLookups,
) -> Result<ContactList, DbErr> {
    let cats = Categories::new(&l.stages);
    let base = filters(org, q, now);
    let tab = q.tab.unwrap_or_default();

    let tabs = contact::Entity::find()
        .select_only()
        .filter(base.clone())
        .column_as(
            SimpleExpr::from(Func::count(Expr::col(contact::Column::Id))),
            "all",
        )
        .column_as(count_if(cats.tab(ContactTab::Leads)), "leads")
        .column_as(count_if(cats.tab(ContactTab::InProgress)), "in_progress")
        .column_as(count_if(cats.tab(ContactTab::Customers)), "customers")
        .column_as(count_if(cats.tab(ContactTab::Inactive)), "inactive")
        .column_as(count_if(cats.tab(ContactTab::NoConsent)), "no_consent")
        .into_model::<TabCounts>()
        .one(conn)
        .await?
        .map(|t| ContactTabs {
            all: n(t.all),
            leads: n(t.leads),
            in_progress: n(t.in_progress),
            customers: n(t.customers),
            inactive: n(t.inactive),
            no_consent: n(t.no_consent),
        })
        .unwrap_or_default();
    let total = match tab {
        ContactTab::All => tabs.all,
        ContactTab::Leads => tabs.leads,
        ContactTab::InProgress => tabs.in_progress,
        ContactTab::Customers => tabs.customers,
        ContactTab::Inactive => tabs.inactive,
        ContactTab::NoConsent => tabs.no_consent,
    };

    let page = q.page.unwrap_or(1);
    let page_size = q.page_size.unwrap_or(20);
    let rows = contact::Entity::find()
        .filter(base)
        .filter(cats.tab(tab))
        .order_by_desc(contact::Column::CreatedAt)
        .order_by_desc(contact::Column::Id)
        .offset(crate::db::offset(page, page_size))
        .limit(page_size)
        .all(conn)
        .await?;
    let data = views(conn, org, &rows, Shape::ListItem, l).await?;

    let days = q.days.unwrap_or(30);
    let since = now - i64::from(days) * DAY_MS;
    let recent = || Condition::all().add(contact::Column::CreatedAt.gte(since));
    let s = contact::Entity::find()
        .select_only()
        .filter(contact::Column::OrganizationId.eq(org))
        .column_as(
            SimpleExpr::from(Func::count(Expr::col(contact::Column::Id))),
            "total",
        )
        .column_as(count_if(recent()), "new_in_period")
        .column_as(
            count_if(cats.tab(ContactTab::NoConsent).not()),
            "with_consent",
        )
        .column_as(
            count_if(
                Condition::all()
                    .add(cats.tab(ContactTab::Leads))
                    .add(recent()),
            ),
            "leads_new",
        )
        .column_as(
            count_if(cats.tab(ContactTab::InProgress)),
            "leads_in_progress",
        )
        .column_as(count_if(cats.tab(ContactTab::Customers)), "customers")
        .column_as(
            count_if(
                Condition::all()
                    .add(cats.tab(ContactTab::Customers))
                    .add(contact::Column::StageChangedAt.gte(since)),
            ),
            "customers_new",
        )
        .into_model::<SummaryCounts>()
        .one(conn)
        .await?;
    let tags = contact_tag::Entity::find()
        .select_only()
        .column_as(
            SimpleExpr::from(Func::min(Expr::col(contact_tag::Column::Tag))),
            "tag",
        )
        .filter(contact_tag::Column::OrganizationId.eq(org))
        .group_by(contact_tag::Column::TagKey)
        .order_by_asc(contact_tag::Column::TagKey)
        .into_model::<TagRow>()
        .all(conn)
        .await?
        .into_iter()
        .map(|t| t.tag)
        .collect();
    let summary = match s {
        Some(s) => {
            let total = n(s.total);
            let with = n(s.with_consent);
            ContactSummary {
                days,
                total,
                new_in_period: n(s.new_in_period),
                with_consent: with,
                without_consent: total - Ord::min(with, total),
                consent_pct: if total == 0 {
                    0.0
                } else {
                    (with as f64 * 1000.0 / total as f64).round() / 10.0
                },
                leads_new: n(s.leads_new),
                leads_in_progress: n(s.leads_in_progress),
                customers: n(s.customers),
                customers_new_in_period: n(s.customers_new),
                tags,
            }
        }
        None => ContactSummary {
            days,
            tags,
            ..Default::default()
        },
    };
    Ok(ContactList {
        data,
        meta: PageMeta::new(page, page_size, total),
        tabs,
        summary,
    })
}
