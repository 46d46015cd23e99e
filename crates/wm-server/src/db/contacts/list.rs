//! `GET /contacts`: the page, its tabs, summary and tag list, at a cost that does not grow
//! with the organisation.
//!
//! - Tabs under no filter, or under one of stage, owner, source, tag, channel or `days`, add
//!   up maintained counts ([`super::counts`]); other combinations (a search, `ids`, several
//!   filters) count the contacts they select, through those filters' indexes.
//! - The summary adds up counts too: everyone, and the days of the period; only the first
//!   day of the period, which the counts hold whole, is counted from the contacts.
//! - The page is an index range ([`super::filter`]).

use std::collections::{BTreeMap, HashMap};

use sea_orm::sea_query::{Alias, Expr, Query, UnionType};
use sea_orm::{ColumnTrait, Condition, ConnectionTrait, DbErr, ExprTrait, FromQueryResult, Order};
use uuid::Uuid;
use wm_types::common::PageMeta;
use wm_types::contacts::{ContactList, ContactSummary, ContactTab, ContactTabs, ListContactsQuery};
use wm_types::enums::StageCategory;

use super::counts::{self, DAY_MS, Dim, Group, Keys, day_key, owner_key};
use super::filter::{self, Filters, Match, SearchPlan};
use crate::db::entities::{contact, contact_tag};
use crate::db::lookups::OrgLookups;

/// A list, its page's rows, and whether every stage it counted was in the lookups it was
/// given (when not, the caller reads the lookups again and lists once more).
pub struct Listed {
    /// The list, its `data` left for the caller to build from `rows`
    /// (`crate::views::contacts::load`).
    pub list: ContactList,
    /// The page's contacts, in order.
    pub rows: Vec<contact::Model>,
    /// Whether the lookups knew every stage counted.
    pub lookups_complete: bool,
}

/// Each stage's category, to sort counts into tabs.
struct Categories(HashMap<Uuid, StageCategory>);

impl Categories {
    fn new(l: &OrgLookups) -> Self {
        Categories(l.stages.iter().map(|s| (s.id, s.category)).collect())
    }

    /// The tab a contact of this stage counts in besides `all` and `no_consent`
    /// (`None`: a stage of no known category).
    fn tab_of(&self, stage: Option<Uuid>) -> Option<ContactTab> {
        match stage.map(|s| self.0.get(&s).copied().unwrap_or(StageCategory::Unknown)) {
            None | Some(StageCategory::Lead) => Some(ContactTab::Leads),
            Some(StageCategory::InProgress) => Some(ContactTab::InProgress),
            Some(StageCategory::Customer) => Some(ContactTab::Customers),
            Some(StageCategory::Inactive) => Some(ContactTab::Inactive),
            Some(_) => None,
        }
    }

    fn knows(&self, groups: &[Group]) -> bool {
        groups
            .iter()
            .all(|g| g.stage.is_none_or(|s| self.0.contains_key(&s)))
    }

    fn tabs(&self, groups: &[Group]) -> ContactTabs {
        let mut t = ContactTabs::default();
        for g in groups {
            let n = u64::try_from(g.n).unwrap_or(0);
            t.all += n;
            if !g.consent {
                t.no_consent += n;
            }
            match self.tab_of(g.stage) {
                Some(ContactTab::Leads) => t.leads += n,
                Some(ContactTab::InProgress) => t.in_progress += n,
                Some(ContactTab::Customers) => t.customers += n,
                Some(ContactTab::Inactive) => t.inactive += n,
                _ => {}
            }
        }
        t
    }

    /// A tab as a condition on a row's `stage` and `consent` columns (a contact's, or
    /// those its tag and identity rows copy).
    fn condition(&self, tab: ContactTab, stage: &Expr, consent: &Expr) -> Condition {
        let stage = || stage.clone();
        let of = |want: StageCategory| -> Vec<Uuid> {
            let mut ids: Vec<Uuid> = self
                .0
                .iter()
                .filter(|(_, c)| **c == want)
                .map(|(id, _)| *id)
                .collect();
            ids.sort();
            ids
        };
        let in_stages = |ids: Vec<Uuid>| -> Condition {
            if ids.is_empty() {
                // No stage of that category: nothing matches.
                Condition::all().add(Expr::val(1).eq(Expr::val(0)))
            } else {
                Condition::all().add(stage().is_in(ids))
            }
        };
        match tab {
            ContactTab::All => Condition::all(),
            ContactTab::Leads => Condition::any()
                .add(stage().is_null())
                .add(in_stages(of(StageCategory::Lead))),
            ContactTab::InProgress => in_stages(of(StageCategory::InProgress)),
            ContactTab::Customers => in_stages(of(StageCategory::Customer)),
            ContactTab::Inactive => in_stages(of(StageCategory::Inactive)),
            ContactTab::NoConsent => Condition::all().add(consent.clone().eq(false)),
        }
    }
}

fn tab_total(tabs: &ContactTabs, tab: ContactTab) -> u64 {
    match tab {
        ContactTab::All => tabs.all,
        ContactTab::Leads => tabs.leads,
        ContactTab::InProgress => tabs.in_progress,
        ContactTab::Customers => tabs.customers,
        ContactTab::Inactive => tabs.inactive,
        ContactTab::NoConsent => tabs.no_consent,
    }
}

/// The maintained count that holds the contacts of `q`'s filters (a stage filter is applied
/// to its groups), if one does.
fn counted(q: &ListContactsQuery) -> Option<(Dim, Keys)> {
    if q.ids.is_some() || !filter::needles(q).is_empty() {
        return None;
    }
    let tag = q.tag.as_deref().map(str::trim).filter(|t| !t.is_empty());
    let mut dims: Vec<(Dim, String)> = Vec::new();
    if let Some(o) = q.owner_id {
        let owner = match o {
            wm_types::contacts::OwnerFilter::Unowned => None,
            wm_types::contacts::OwnerFilter::User(id) => Some(id),
        };
        dims.push((Dim::Owner, owner_key(owner)));
    }
    if let Some(s) = q.source {
        dims.push((Dim::Source, s.as_str().to_owned()));
    }
    if let Some(t) = tag {
        dims.push((Dim::Tag, wm_core::tags::tag_key(t)));
    }
    if let Some(c) = q.channel_type {
        dims.push((Dim::Channel, c.as_str().to_owned()));
    }
    match (dims.pop(), dims.is_empty(), q.days) {
        (None, _, None) => Some((Dim::All, Keys::Is(String::new()))),
        (Some((dim, key)), true, None) => Some((dim, Keys::Is(key))),
        _ => None,
    }
}

/// Contacts created (or that entered their stage) at `since` or later, by stage and
/// consent: the counts of the days after `since`'s, plus `since`'s own day counted from
/// the contacts (one day's rows at most).
async fn since(
    conn: &impl ConnectionTrait,
    org: Uuid,
    dim: Dim,
    since: i64,
) -> Result<Vec<Group>, DbErr> {
    #[derive(FromQueryResult)]
    struct Row {
        stage: Option<Uuid>,
        consent: bool,
        n: i64,
    }
    let mut groups = counts::read(conn, org, dim, Keys::After(day_key(since))).await?;
    let at = match dim {
        Dim::StageChanged => contact::Column::StageChangedAt,
        _ => contact::Column::CreatedAt,
    };
    let day_end = (since.div_euclid(DAY_MS) + 1) * DAY_MS;
    let q = Query::select()
        .expr_as(
            Expr::col(contact::Column::LifecycleStageId),
            Alias::new("stage"),
        )
        .expr_as(
            Expr::col(contact::Column::ConsentGiven),
            Alias::new("consent"),
        )
        .expr_as(Expr::col(contact::Column::Id).count(), Alias::new("n"))
        .from(contact::Entity)
        .and_where(contact::Column::OrganizationId.eq(org))
        .and_where(Expr::col(at).gte(since))
        .and_where(Expr::col(at).lt(day_end))
        .add_group_by([
            Expr::col(contact::Column::LifecycleStageId),
            Expr::col(contact::Column::ConsentGiven),
        ])
        .to_owned();
    let first_day = Row::find_by_statement(conn.get_database_backend().build(&q))
        .all(conn)
        .await?;
    groups.extend(first_day.into_iter().map(|r| Group {
        key: String::new(),
        stage: r.stage,
        consent: r.consent,
        n: r.n,
    }));
    Ok(groups)
}

/// The organisation's tags (each key in the spelling its oldest contact gave it), by key.
async fn tags(conn: &impl ConnectionTrait, org: Uuid) -> Result<Vec<String>, DbErr> {
    #[derive(FromQueryResult)]
    struct Tag {
        tag: String,
    }
    let mut keys: BTreeMap<String, i64> = BTreeMap::new();
    for g in counts::read(conn, org, Dim::Tag, Keys::Any).await? {
        *keys.entry(g.key).or_default() += g.n;
    }
    let keys: Vec<String> = keys
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .map(|(k, _)| k)
        .collect();
    let mut out = Vec::with_capacity(keys.len());
    // One statement per 100 tags, each tag its first row in the list index.
    for chunk in keys.chunks(100) {
        let mut parts = chunk.iter().map(|k| {
            let one = Query::select()
                .column(contact_tag::Column::Tag)
                .from(contact_tag::Entity)
                .and_where(contact_tag::Column::OrganizationId.eq(org))
                .and_where(contact_tag::Column::TagKey.eq(k.as_str()))
                .order_by(contact_tag::Column::ContactCreatedAt, Order::Asc)
                .order_by(contact_tag::Column::ContactId, Order::Asc)
                .limit(1)
                .to_owned();
            Query::select()
                .column(contact_tag::Column::Tag)
                .from_subquery(one, Alias::new("t"))
                .to_owned()
        });
        let Some(mut q) = parts.next() else { continue };
        for p in parts {
            q.union(UnionType::All, p);
        }
        out.extend(
            Tag::find_by_statement(conn.get_database_backend().build(&q))
                .all(conn)
                .await?
                .into_iter()
                .map(|t| t.tag),
        );
    }
    Ok(out)
}

/// `GET /contacts`: a page of contacts (newest first), the tab counts under the other
/// filters, and the organisation-wide summary over the last `days` (default 30) days.
pub async fn list(
    conn: &impl ConnectionTrait,
    org: Uuid,
    q: &ListContactsQuery,
    now: i64,
    l: &OrgLookups,
) -> Result<Listed, DbErr> {
    let cats = Categories::new(l);
    let tab = q.tab.unwrap_or_default();
    let days = q.days.unwrap_or(30);
    let period = since(conn, org, Dim::Created, now - i64::from(days) * DAY_MS).await?;
    let everyone = counts::read(conn, org, Dim::All, Keys::Is(String::new())).await?;
    let org_total = u64::try_from(everyone.iter().map(|g| g.n).sum::<i64>()).unwrap_or(0);

    let needles = filter::needles(q);
    let candidates = filter::candidates(conn, &needles).await?;
    let filters = Filters::new(
        org,
        q,
        now,
        filter::plan(conn.get_database_backend(), &needles, candidates, org_total),
    );
    let matched = match filters.plan() {
        SearchPlan::Trigrams => Some(filters.matching(conn).await?),
        SearchPlan::Plain => None,
    };
    let mut groups = match (&matched, counted(q)) {
        (Some(m), _) => group(m),
        (None, Some((Dim::All, _))) => everyone.clone(),
        (None, Some((dim, keys))) => counts::read(conn, org, dim, keys).await?,
        (None, None) if only_days(q) => period.clone(),
        (None, None) => filters.count(conn).await?,
    };
    if let Some(stage) = q.lifecycle_stage_id
        && (counted(q).is_some() || only_days(q))
    {
        groups.retain(|g| g.stage == Some(stage));
    }
    let tabs = cats.tabs(&groups);
    let total = tab_total(&tabs, tab);

    let page = q.page.unwrap_or(1);
    let page_size = q.page_size.unwrap_or(20);
    let offset = crate::db::offset(page, page_size);
    let rows = if offset >= total {
        Vec::new()
    } else if let Some(mut m) = matched {
        m.retain(|c| match tab {
            ContactTab::All => true,
            ContactTab::NoConsent => !c.consent,
            t => cats.tab_of(c.stage) == Some(t),
        });
        m.sort_unstable_by_key(|c| std::cmp::Reverse((c.created_at, c.id)));
        let at = usize::try_from(offset).unwrap_or(usize::MAX);
        let n = usize::try_from(page_size).unwrap_or(usize::MAX);
        let ids = m.iter().skip(at).take(n).map(|c| c.id).collect();
        crate::db::rows_in_order::<contact::Entity>(conn, ids, |c| c.id).await?
    } else {
        filters
            .page(
                conn,
                &|stage, consent| cats.condition(tab, stage, consent),
                offset,
                page_size,
            )
            .await?
    };
    let staged = since(conn, org, Dim::StageChanged, now - i64::from(days) * DAY_MS).await?;
    let lookups_complete =
        cats.knows(&groups) && cats.knows(&everyone) && cats.knows(&period) && cats.knows(&staged);
    let summary = summary(
        &cats,
        days,
        &everyone,
        &period,
        &staged,
        tags(conn, org).await?,
    );
    Ok(Listed {
        list: ContactList {
            data: Vec::new(),
            meta: PageMeta::new(page, page_size, total),
            tabs,
            summary,
        },
        rows,
        lookups_complete,
    })
}

/// Matched contacts by stage and consent.
fn group(matched: &[Match]) -> Vec<Group> {
    let mut by: HashMap<(Option<Uuid>, bool), i64> = HashMap::new();
    for m in matched {
        *by.entry((m.stage, m.consent)).or_default() += 1;
    }
    by.into_iter()
        .map(|((stage, consent), n)| Group {
            key: String::new(),
            stage,
            consent,
            n,
        })
        .collect()
}

/// Whether `days` is the only filter besides the stage.
fn only_days(q: &ListContactsQuery) -> bool {
    let bare = ListContactsQuery {
        days: None,
        lifecycle_stage_id: None,
        page: None,
        page_size: None,
        tab: None,
        ..q.clone()
    };
    q.days.is_some() && counted(&bare).is_some_and(|(d, _)| d == Dim::All)
}

fn summary(
    cats: &Categories,
    days: u32,
    everyone: &[Group],
    period: &[Group],
    staged: &[Group],
    tags: Vec<String>,
) -> ContactSummary {
    let all = cats.tabs(everyone);
    let new = cats.tabs(period);
    let with = all.all - all.no_consent;
    ContactSummary {
        days,
        total: all.all,
        new_in_period: new.all,
        with_consent: with,
        without_consent: all.no_consent,
        consent_pct: if all.all == 0 {
            0.0
        } else {
            (with as f64 * 1000.0 / all.all as f64).round() / 10.0
        },
        leads_new: new.leads,
        leads_in_progress: all.in_progress,
        customers: all.customers,
        customers_new_in_period: cats.tabs(staged).customers,
        tags,
    }
}
