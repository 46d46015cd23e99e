//! `GET /contacts`'s filters as SQL, the page of contacts they select, and what they count
//! when no maintained count serves them.
//!
//! Every filter has an index that reads its contacts newest first (migration `m0009`), so a
//! page is an index range, and a deep page skips index entries, never table rows. A tag's
//! page is read from the tag rows (which carry the contact's creation time); `q` is found
//! through the trigram index of each database.

use sea_orm::sea_query::{Alias, Expr, Query, SelectStatement, SimpleExpr};
use sea_orm::{
    Condition, ConnectionTrait, DbBackend, DbErr, EntityTrait, ExprTrait, FromQueryResult, Order,
};
use uuid::Uuid;
use wm_core::tags::tag_key;
use wm_types::contacts::{ListContactsQuery, OwnerFilter};

use super::counts::{DAY_MS, Group};
use crate::db::entities::{contact, contact_tag, identity};
use crate::db::like_contains;
use crate::db::tenant::org_guard;

/// The text searched for (`q` and `search`), trimmed, without the empty ones.
pub fn needles(q: &ListContactsQuery) -> Vec<String> {
    [&q.q, &q.search]
        .into_iter()
        .flatten()
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty())
        .collect()
}

/// The FTS5 query that finds the rows whose text may contain `needle` through SQLite's
/// trigram index: each of its trigrams, quoted (a row holding all of them is then checked
/// with LIKE). `None` under three characters, which hold no trigram.
pub fn trigram_query(needle: &str) -> Option<String> {
    let chars: Vec<char> = needle.to_lowercase().chars().collect();
    let mut parts: Vec<String> = Vec::new();
    for w in chars.windows(3) {
        let t = format!("\"{}\"", w.iter().collect::<String>().replace('"', "\"\""));
        if !parts.contains(&t) {
            parts.push(t);
        }
    }
    (!parts.is_empty()).then(|| parts.join(" AND "))
}

/// The conditions on `contacts` that find the rows whose text contains `text`: the
/// candidates of SQLite's trigram index when `fts` (three characters or more), each then
/// checked with LIKE (which PostgreSQL's trigram index serves on its own).
pub fn search_terms(fts: bool, text: &str) -> Vec<SimpleExpr> {
    let mut terms = Vec::with_capacity(2);
    if fts && let Some(fts) = trigram_query(text) {
        terms.push(Expr::cust_with_values(
            "\"contacts\".\"seq\" IN (SELECT rowid FROM contacts_fts WHERE contacts_fts MATCH ?)",
            [fts],
        ));
    }
    terms.push(col(contact::Column::SearchText).like(like_contains(text)));
    terms
}

/// How the contacts matching a search are found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SearchPlan {
    /// No search, or one the database's own planning serves (PostgreSQL's trigram index).
    Plain,
    /// SQLite: the trigram index gives the candidates, the other indexes are not used (the
    /// planner would otherwise walk the organisation).
    Trigrams,
}

/// A contact the filters select: what its tabs and its place in a page need.
#[derive(Debug, FromQueryResult)]
pub struct Match {
    /// Its id.
    pub id: Uuid,
    /// When it was created.
    pub created_at: i64,
    /// Its stage.
    pub stage: Option<Uuid>,
    /// Whether it gave consent.
    pub consent: bool,
}

/// The contacts a list's filters select (other than the tab).
pub struct Filters<'a> {
    org: Uuid,
    q: &'a ListContactsQuery,
    now: i64,
    needles: Vec<String>,
    plan: SearchPlan,
}

fn col(c: contact::Column) -> Expr {
    Expr::col((contact::Entity, c))
}

impl<'a> Filters<'a> {
    /// How the search is served.
    pub fn plan(&self) -> SearchPlan {
        self.plan
    }

    /// Every contact the filters select, read once. Under [`SearchPlan::Trigrams`] they
    /// are few (an eighth of the organisation at most), and one pass over them gives both
    /// the tabs and the page, where two queries would look each candidate up twice.
    pub async fn matching(&self, conn: &impl ConnectionTrait) -> Result<Vec<Match>, DbErr> {
        let q = Query::select()
            .expr_as(col(contact::Column::Id), Alias::new("id"))
            .expr_as(col(contact::Column::CreatedAt), Alias::new("created_at"))
            .expr_as(col(contact::Column::LifecycleStageId), Alias::new("stage"))
            .expr_as(col(contact::Column::ConsentGiven), Alias::new("consent"))
            .from(contact::Entity)
            .cond_where(self.condition(true, true))
            .to_owned();
        Match::find_by_statement(conn.get_database_backend().build(&q))
            .all(conn)
            .await
    }

    /// The filters of `q` for the organisation, searched as `plan` says.
    pub fn new(org: Uuid, q: &'a ListContactsQuery, now: i64, plan: SearchPlan) -> Self {
        Filters {
            org,
            q,
            now,
            needles: needles(q),
            plan,
        }
    }

    /// The conditions on `contacts`; `with_org` false when the rows are reached through
    /// the organisation's tag rows already.
    fn condition(&self, with_org: bool, with_tag: bool) -> Condition {
        let q = self.q;
        let mut c = Condition::all();
        if with_org {
            c = c.add(match self.plan {
                // `+col` keeps SQLite from planning through the organisation's indexes.
                SearchPlan::Trigrams => org_guard::<contact::Entity>(DbBackend::Sqlite, self.org),
                SearchPlan::Plain => col(contact::Column::OrganizationId).eq(self.org),
            });
        }
        if let Some(id) = q.lifecycle_stage_id {
            c = c.add(col(contact::Column::LifecycleStageId).eq(id));
        }
        match q.owner_id {
            Some(OwnerFilter::Unowned) => c = c.add(col(contact::Column::OwnerId).is_null()),
            Some(OwnerFilter::User(id)) => c = c.add(col(contact::Column::OwnerId).eq(id)),
            None => {}
        }
        if let Some(s) = q.source {
            c = c.add(col(contact::Column::Source).eq(s));
        }
        if let Some(ct) = q.channel_type {
            c = c.add(Expr::exists(
                Query::select()
                    .expr(Expr::val(1))
                    .from(identity::Entity)
                    .and_where(
                        Expr::col((identity::Entity, identity::Column::ContactId))
                            .equals((contact::Entity, contact::Column::Id)),
                    )
                    .and_where(
                        Expr::col((identity::Entity, identity::Column::ChannelType))
                            .eq(ct.as_str()),
                    )
                    .to_owned(),
            ));
        }
        if with_tag && let Some(key) = self.tag_key() {
            c = c.add(Expr::exists(
                Query::select()
                    .expr(Expr::val(1))
                    .from(contact_tag::Entity)
                    .and_where(
                        Expr::col((contact_tag::Entity, contact_tag::Column::ContactId))
                            .equals((contact::Entity, contact::Column::Id)),
                    )
                    .and_where(
                        Expr::col((contact_tag::Entity, contact_tag::Column::TagKey)).eq(key),
                    )
                    .to_owned(),
            ));
        }
        for text in &self.needles {
            for t in search_terms(self.plan == SearchPlan::Trigrams, text) {
                c = c.add(t);
            }
        }
        if let Some(days) = q.days {
            c = c.add(col(contact::Column::CreatedAt).gte(self.now - i64::from(days) * DAY_MS));
        }
        if let Some(ids) = &q.ids {
            c = c.add(col(contact::Column::Id).is_in(ids.clone()));
        }
        c
    }

    /// The tag filter's key, if any.
    fn tag_key(&self) -> Option<String> {
        self.q
            .tag
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(tag_key)
    }

    /// The contacts of the filters, by stage and consent: what the tabs count when no
    /// maintained count serves the filters (a search, `ids`, several filters at once).
    pub async fn count(&self, conn: &impl ConnectionTrait) -> Result<Vec<Group>, DbErr> {
        #[derive(FromQueryResult)]
        struct Row {
            stage: Option<Uuid>,
            consent: bool,
            n: i64,
        }
        let q = Query::select()
            .expr_as(col(contact::Column::LifecycleStageId), Alias::new("stage"))
            .expr_as(col(contact::Column::ConsentGiven), Alias::new("consent"))
            .expr_as(Expr::col(contact::Column::Id).count(), Alias::new("n"))
            .from(contact::Entity)
            .cond_where(self.condition(true, true))
            .add_group_by([
                SimpleExpr::from(col(contact::Column::LifecycleStageId)),
                SimpleExpr::from(col(contact::Column::ConsentGiven)),
            ])
            .to_owned();
        let rows = Row::find_by_statement(conn.get_database_backend().build(&q))
            .all(conn)
            .await?;
        Ok(rows
            .into_iter()
            .map(|r| Group {
                key: String::new(),
                stage: r.stage,
                consent: r.consent,
                n: r.n,
            })
            .collect())
    }

    /// One page of the contacts of the filters and a tab (`tab` makes its condition on a
    /// row's stage and consent columns), newest first.
    pub async fn page(
        &self,
        conn: &impl ConnectionTrait,
        tab: &(dyn Fn(&Expr, &Expr) -> Condition + Sync),
        offset: u64,
        limit: u64,
    ) -> Result<Vec<contact::Model>, DbErr> {
        #[derive(FromQueryResult)]
        struct Id {
            id: Uuid,
        }
        let plain = self.plan == SearchPlan::Plain;
        let q = match (
            self.tag_key().filter(|_| plain),
            self.q.channel_type.filter(|_| plain),
        ) {
            (Some(key), _) => self.copied_page(
                contact_tag::Entity,
                (contact_tag::Column::TagKey, key),
                tab,
                false,
            ),
            (None, Some(ct)) => self.copied_page(
                identity::Entity,
                (identity::Column::ChannelType, ct.as_str().to_owned()),
                tab,
                true,
            ),
            (None, None) => {
                let mut q = Query::select();
                q.expr_as(col(contact::Column::Id), Alias::new("id"))
                    .from(contact::Entity)
                    .cond_where(self.condition(true, true))
                    .cond_where(tab(
                        &col(contact::Column::LifecycleStageId),
                        &col(contact::Column::ConsentGiven),
                    ))
                    .order_by((contact::Entity, contact::Column::CreatedAt), Order::Desc)
                    .order_by((contact::Entity, contact::Column::Id), Order::Desc);
                q
            }
        }
        .offset(offset)
        .limit(limit)
        .to_owned();
        let ids: Vec<Uuid> = Id::find_by_statement(conn.get_database_backend().build(&q))
            .all(conn)
            .await?
            .into_iter()
            .map(|r| r.id)
            .collect();
        crate::db::rows_in_order::<contact::Entity>(conn, ids, |c| c.id).await
    }

    /// A tag's or a channel's page, read in order from the rows that copy their contact's
    /// creation time, stage and consent (`table`, where `key` holds the tag or channel);
    /// the contacts are joined only when other filters ask about them. A contact with two
    /// identities of a channel is one contact (`distinct`).
    fn copied_page<T: EntityTrait>(
        &self,
        table: T,
        key: (T::Column, String),
        tab: &(dyn Fn(&Expr, &Expr) -> Condition + Sync),
        distinct: bool,
    ) -> SelectStatement
    where
        T::Column: sea_orm::sea_query::Iden + Copy + 'static,
    {
        let c = |name: &'static str| Expr::col((table, Alias::new(name)));
        let mut q = Query::select();
        if distinct {
            q.distinct();
        }
        q.expr_as(c("contact_id"), Alias::new("id"))
            .expr(c("contact_created_at"))
            .from(table)
            .and_where(c("organization_id").eq(self.org))
            .and_where(Expr::col((table, key.0)).eq(key.1))
            .cond_where(tab(&c("contact_stage_id"), &c("contact_consent")))
            .order_by_expr(c("contact_created_at"), Order::Desc)
            .order_by_expr(c("contact_id"), Order::Desc);
        let on_contacts = self.condition(false, false);
        if !on_contacts.is_empty() {
            q.inner_join(
                contact::Entity,
                Expr::col((contact::Entity, contact::Column::Id))
                    .equals((table, Alias::new("contact_id"))),
            )
            .cond_where(on_contacts);
        }
        q
    }
}

/// The backend's search plan for `needles` in an organisation of `org_total` contacts, given
/// how many rows the trigram index holds for them (`candidates`, SQLite only): through the
/// index when it narrows the organisation down, else a walk of the organisation's rows.
pub fn plan(
    backend: DbBackend,
    needles: &[String],
    candidates: Option<u64>,
    org_total: u64,
) -> SearchPlan {
    let searchable = needles.iter().any(|n| trigram_query(n).is_some());
    match (backend, candidates) {
        (DbBackend::Sqlite, Some(c))
            if searchable && c.saturating_mul(8) <= Ord::max(org_total, 64) =>
        {
            SearchPlan::Trigrams
        }
        _ => SearchPlan::Plain,
    }
}

/// How many rows SQLite's trigram index holds for all of `needles` (of any organisation:
/// an estimate that only chooses the plan).
pub async fn candidates(
    conn: &impl ConnectionTrait,
    needles: &[String],
) -> Result<Option<u64>, DbErr> {
    if conn.get_database_backend() != DbBackend::Sqlite {
        return Ok(None);
    }
    let parts: Vec<String> = needles.iter().filter_map(|n| trigram_query(n)).collect();
    if parts.is_empty() {
        return Ok(None);
    }
    #[derive(FromQueryResult)]
    struct N {
        n: i64,
    }
    let q = Query::select()
        .expr_as(Expr::cust("count(*)"), Alias::new("n"))
        .from(Alias::new("contacts_fts"))
        .and_where(Expr::cust_with_values(
            "contacts_fts MATCH ?",
            [parts.join(" AND ")],
        ))
        .to_owned();
    Ok(N::find_by_statement(conn.get_database_backend().build(&q))
        .one(conn)
        .await?
        .map(|r| u64::try_from(r.n).unwrap_or(0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_needle_is_looked_up_by_its_trigrams() {
        assert_eq!(trigram_query("ab"), None);
        assert_eq!(
            trigram_query("López").as_deref(),
            Some("\"lóp\" AND \"ópe\" AND \"pez\"")
        );
        assert_eq!(trigram_query("aaaa").as_deref(), Some("\"aaa\""));
        assert_eq!(
            trigram_query("a\"bc").as_deref(),
            Some("\"a\"\"b\" AND \"\"\"bc\"")
        );
    }

    #[test]
    fn the_trigram_index_serves_a_search_that_narrows_the_organisation() {
        let n = vec!["lopez".to_owned()];
        assert_eq!(
            plan(DbBackend::Sqlite, &n, Some(20_000), 1_000_000),
            SearchPlan::Trigrams
        );
        assert_eq!(
            plan(DbBackend::Sqlite, &n, Some(900_000), 1_000_000),
            SearchPlan::Plain
        );
        assert_eq!(
            plan(DbBackend::Sqlite, &["ab".to_owned()], Some(0), 1_000_000),
            SearchPlan::Plain
        );
        assert_eq!(
            plan(DbBackend::Postgres, &n, None, 1_000_000),
            SearchPlan::Plain
        );
    }
}
