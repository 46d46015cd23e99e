//! `GET /contacts`: the page, its tabs, summary and tag list.

use sea_orm::sea_query::{Expr, Func, Query, SimpleExpr};
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DbErr, EntityTrait, ExprTrait, FromQueryResult,
    QueryFilter, QueryOrder, QuerySelect,
};
use uuid::Uuid;
use wm_core::tags::tag_key;
use wm_types::common::PageMeta;
use wm_types::contacts::{
    ContactList, ContactSummary, ContactTab, ContactTabs, ListContactsQuery, OwnerFilter,
};
use wm_types::enums::StageCategory;

use super::{DAY_MS, Shape, views};
use crate::db::entities::{contact, contact_tag, identity, lifecycle_stage};
use crate::db::lookups::OrgLookups;
use crate::db::{count_if, like_contains, lookups};

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
