//! A campaign's audience: adding recipients (ids, tags, search, all) and listing them.

use std::collections::{HashMap, HashSet};

use crate::db::Unique;
use futures::{StreamExt, TryStreamExt};
use sea_orm::sea_query::{Alias, Expr, Query};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, DbBackend, DbErr, EntityTrait, ExprTrait,
    FromQueryResult, Order, QueryFilter, QueryOrder, QuerySelect,
};
use uuid::Uuid;
use wm_core::address::Address;
use wm_core::campaigns::{self as rules, AudienceSource, CampaignError};
use wm_core::messaging::{Ineligible, messageable};
use wm_core::pricing::RateCard;
use wm_types::Page;
use wm_types::campaigns::{Audience, AudienceResult, CampaignStatus, Recipient, RecipientsQuery};
use wm_types::common::PageMeta;
use wm_types::contacts::IdentityRef;
use wm_types::enums::RecipientStatus;

use crate::db::entities::{campaign, contact, contact_tag, organization, recipient};
use crate::db::tallies::{self, Dim};
use crate::error::{ApiError, ApiResult};
use crate::services::sending;
use crate::state::AppState;

use super::read::{campaign_error, load};
use crate::views::campaigns as campaign_views;

/// `GET /campaigns/{id}/recipients`.
pub async fn recipients(
    state: &AppState,
    org: Uuid,
    id: Uuid,
    q: &RecipientsQuery,
) -> ApiResult<Page<Recipient>> {
    let conn = &state.db.conn;
    load(conn, org, id).await?;
    let statuses = q.filter.and_then(crate::db::campaigns::filter_statuses);
    let counted = crate::db::campaigns::count(conn, id).await?;
    let total = counted.of(statuses.as_deref());
    let (page, page_size) = (q.page.unwrap_or(1), q.page_size.unwrap_or(20));
    let offset = crate::db::offset(page, page_size);
    let rows = if offset >= total {
        Vec::new()
    } else {
        let walk = Walk {
            offset,
            limit: page_size,
            of: total,
            among: counted.stats.total,
        };
        recipient_page(conn, id, statuses, walk).await?
    };
    let data = campaign_views::load_recipients(conn, rows).await?;
    Ok(Page {
        data,
        meta: PageMeta::new(page, page_size, total),
    })
}

/// Where a page of recipients lies: its offset and size among the `of` recipients of the
/// statuses asked, themselves among the campaign's `among`.
struct Walk {
    offset: u64,
    limit: u64,
    of: u64,
    among: u64,
}

impl Walk {
    /// Whether walking the audience's order and skipping the other statuses reads fewer
    /// index entries than reading the statuses' own and sorting them: yes for the statuses
    /// most recipients are in, no for a rare one (a few failures among a million).
    fn walks(&self) -> bool {
        let reach = u128::from(self.offset + self.limit) * u128::from(self.among);
        reach <= u128::from(self.of) * u128::from(self.of)
    }
}

/// A page of a campaign's recipients in the audience's order, of some statuses or all: the
/// ids are read from an index (a deep page skips index entries, never rows), then their
/// rows. Statuses are checked on the entries of the audience's order (the list index carries
/// the status) or read from the status index and sorted, whichever reads less ([`Walk`]);
/// SQLite, without statistics, is told which.
async fn recipient_page(
    conn: &impl ConnectionTrait,
    campaign: Uuid,
    statuses: Option<Vec<RecipientStatus>>,
    walk: Walk,
) -> Result<Vec<recipient::Model>, DbErr> {
    let sqlite = conn.get_database_backend() == DbBackend::Sqlite;
    // SQLite's unary `+` keeps a column out of its index choice: out of the filter to walk
    // the order index, out of the order to read the status index and sort.
    let plain = |c: recipient::Column| match sqlite {
        true => Expr::cust(format!(
            "+\"campaign_recipients\".\"{}\"",
            sea_orm::Iden::to_string(&c)
        )),
        false => Expr::col((recipient::Entity, c)),
    };
    let mut ids = recipient::Entity::find()
        .select_only()
        .column(recipient::Column::Id)
        .filter(recipient::Column::CampaignId.eq(campaign));
    let mut order = (
        Expr::col((recipient::Entity, recipient::Column::CreatedAt)),
        Expr::col((recipient::Entity, recipient::Column::Id)),
    );
    if let Some(statuses) = statuses {
        if walk.walks() {
            ids = ids.filter(plain(recipient::Column::Status).is_in(statuses));
        } else {
            ids = ids.filter(recipient::Column::Status.is_in(statuses));
            order = (
                plain(recipient::Column::CreatedAt),
                plain(recipient::Column::Id),
            );
        }
    }
    let ids: Vec<Uuid> = ids
        .order_by(order.0, Order::Asc)
        .order_by(order.1, Order::Asc)
        .offset(walk.offset)
        .limit(walk.limit)
        .into_tuple()
        .all(conn)
        .await?;
    crate::db::rows_in_order::<recipient::Entity>(conn, ids, |r| r.id).await
}

#[derive(FromQueryResult)]
pub(super) struct AudienceRow {
    id: Uuid,
    primary_phone: Option<String>,
    /// The identities of a contact without a phone (null otherwise, so a million
    /// contacts with phones bring none back): one may be the business-scoped user id of a
    /// person who hides their phone, which a campaign is sent to.
    identities: Option<String>,
    opted_out: bool,
    consent_given: bool,
    created_at: i64,
}

/// `CASE WHEN primary_phone IS NULL THEN identities END`: a contact's identities only when
/// it has no phone ([`AudienceRow::identities`]).
fn identities_without_phone() -> Expr {
    let c = |col: contact::Column| Expr::col((contact::Entity, col));
    sea_orm::sea_query::CaseStatement::new()
        .case(
            c(contact::Column::PrimaryPhone).is_null(),
            c(contact::Column::Identities),
        )
        .into()
}

impl AudienceRow {
    /// Where the contact would be sent a campaign: its phone, else a business-scoped user
    /// id it is known by.
    fn address(&self) -> Option<Address> {
        let identities: Vec<IdentityRef> = match &self.identities {
            Some(json) => crate::db::stored::json("contacts.identities", self.id, json),
            None => Vec::new(),
        };
        wm_core::messaging::whatsapp_address(
            self.primary_phone.as_deref(),
            identities
                .iter()
                .map(|i| (i.channel_type, i.external_id.as_str())),
        )
    }
}

/// The audience source's next `step` contacts after `after` (creation time, id), in that
/// order, read through the source's own index.
async fn source_step(
    conn: &impl ConnectionTrait,
    org: Uuid,
    source: &AudienceSource,
    after: Option<(i64, Uuid)>,
    step: u64,
) -> Result<Vec<AudienceRow>, DbErr> {
    let c = |col: contact::Column| Expr::col((contact::Entity, col));
    let mut q = Query::select();
    q.expr_as(c(contact::Column::Id), Alias::new("id"))
        .expr_as(
            c(contact::Column::PrimaryPhone),
            Alias::new("primary_phone"),
        )
        .expr_as(identities_without_phone(), Alias::new("identities"))
        .expr_as(c(contact::Column::OptedOut), Alias::new("opted_out"))
        .expr_as(
            c(contact::Column::ConsentGiven),
            Alias::new("consent_given"),
        )
        .expr_as(c(contact::Column::CreatedAt), Alias::new("created_at"))
        .from(contact::Entity)
        .limit(step);
    // The columns the order and the position are read from: the tag rows' copy for a tag.
    let (at, id) = match source {
        AudienceSource::Tag(tag) => {
            let t = |col: contact_tag::Column| Expr::col((contact_tag::Entity, col));
            q.inner_join(
                contact_tag::Entity,
                t(contact_tag::Column::ContactId).equals((contact::Entity, contact::Column::Id)),
            )
            .and_where(t(contact_tag::Column::OrganizationId).eq(org))
            .and_where(t(contact_tag::Column::TagKey).eq(wm_core::tags::tag_key(tag)));
            (
                t(contact_tag::Column::ContactCreatedAt),
                t(contact_tag::Column::ContactId),
            )
        }
        AudienceSource::Stage(stage) => {
            q.and_where(c(contact::Column::OrganizationId).eq(org))
                .and_where(c(contact::Column::LifecycleStageId).eq(*stage));
            (c(contact::Column::CreatedAt), c(contact::Column::Id))
        }
        AudienceSource::All | AudienceSource::Contacts(_) => {
            q.and_where(c(contact::Column::OrganizationId).eq(org));
            (c(contact::Column::CreatedAt), c(contact::Column::Id))
        }
    };
    if let Some(cursor) = after {
        q.and_where(crate::db::after_key(at.clone(), id.clone(), cursor));
    }
    q.order_by_expr(at, Order::Asc)
        .order_by_expr(id, Order::Asc);
    AudienceRow::find_by_statement(conn.get_database_backend().build(&q))
        .all(conn)
        .await
}

/// Where an audience's reading has got to.
enum Cursor {
    /// The listed contacts not read yet (sorted, without repeats).
    Listed(Vec<Uuid>),
    /// The source's (creation time, id) last read.
    After(Option<(i64, Uuid)>),
}

/// An audience's source, read a step at a time.
struct Reader<'a, C> {
    conn: &'a C,
    org: Uuid,
    source: &'a AudienceSource,
    cursor: Cursor,
    step: u64,
}

impl<C: ConnectionTrait> Reader<'_, C> {
    /// The next step of contacts and the reader past them; `None` once read whole.
    async fn next(mut self) -> ApiResult<Option<(Vec<AudienceRow>, Self)>> {
        let rows = match &mut self.cursor {
            Cursor::Listed(ids) => {
                let n = usize::try_from(Ord::min(self.step, 1000)).unwrap_or(1000);
                let chunk: Vec<Uuid> = ids.drain(..ids.len().min(n)).collect();
                if chunk.is_empty() {
                    return Ok(None);
                }
                contact::Entity::find()
                    .select_only()
                    .column(contact::Column::Id)
                    .column(contact::Column::PrimaryPhone)
                    .expr_as(identities_without_phone(), "identities")
                    .column(contact::Column::OptedOut)
                    .column(contact::Column::ConsentGiven)
                    .column(contact::Column::CreatedAt)
                    .filter(contact::Column::OrganizationId.eq(self.org))
                    .filter(contact::Column::Id.is_in(chunk))
                    .into_model::<AudienceRow>()
                    .all(self.conn)
                    .await?
            }
            Cursor::After(after) => {
                let rows = source_step(self.conn, self.org, self.source, *after, self.step).await?;
                match rows.last() {
                    Some(last) => *after = Some((last.created_at, last.id)),
                    None => return Ok(None),
                }
                rows
            }
        };
        Ok(Some((rows, self)))
    }
}

/// What an audience's steps are written to.
#[derive(Clone, Copy)]
struct Target {
    org: Uuid,
    campaign: Uuid,
    /// The organisation's `contact_deletes` when the audience began, before its first read.
    contact_deletes: i64,
}

/// Writes one step's recipients in its own transaction, if the campaign still takes an
/// audience: how many were new to it.
///
/// A contact of the step may have been deleted since it was read (the delete found it in no
/// audience yet). Recipients have no foreign key to their contact on PostgreSQL (migration
/// m0012); instead the step reads the organisation's count of contact deletes under a
/// shared lock, which a delete takes exclusively, and keeps only the contacts still there
/// when the count moved since the audience began.
async fn write_step(
    state: &AppState,
    to: Target,
    mut rows: Vec<recipient::ActiveModel>,
) -> ApiResult<u64> {
    // In contact order: steps written side by side (of this call or another on the same
    // campaign) then wait on each other's audience rows in one order, never in a cycle.
    rows.sort_unstable_by_key(|r| r.contact_id.try_as_ref().copied());
    let txn = state.db.write().await?;
    if contact_deletes(&*txn, to.org).await? != Some(to.contact_deletes) {
        let live = live_contacts(&*txn, &rows).await?;
        rows.retain(|r| r.contact_id.try_as_ref().is_some_and(|c| live.contains(c)));
    }
    // The market of each new recipient: what the tallies count them by.
    let mut by_market: HashMap<String, i64> = HashMap::new();
    let mut added = 0;
    let mut rows = rows.into_iter().peekable();
    while rows.peek().is_some() {
        let batch: Vec<recipient::ActiveModel> = rows.by_ref().take(1000).collect();
        let (ids, markets): (Vec<Uuid>, Vec<String>) = batch
            .iter()
            .filter_map(|r| {
                let market = r.market.try_as_ref()?.clone().unwrap_or_default();
                Some((*r.id.try_as_ref()?, market))
            })
            .unzip();
        // Rows already in the audience are skipped by the unique index.
        let inserted = recipient::Entity::insert_many(batch)
            .on_conflict_do_nothing_on([
                recipient::Column::CampaignId,
                recipient::Column::ContactId,
            ])
            .exec_without_returning(&*txn)
            .await?;
        let sea_orm::TryInsertResult::Inserted(n) = inserted else {
            continue;
        };
        added += n;
        if n == ids.len() as u64 {
            for m in markets {
                *by_market.entry(m).or_default() += 1;
            }
        } else {
            // Some were in the audience already: count the markets of those written.
            // (`RETURNING` would send every new row back across sqlx's channel: a
            // million-recipient audience took a fifth longer.)
            let written = sea_orm::Condition::all().add(recipient::Column::Id.is_in(ids));
            for (m, n) in crate::db::campaigns::recipients_by_market(&*txn, written).await? {
                *by_market.entry(m).or_default() += n;
            }
        }
    }
    // Recipients are added here only, all pending and not charged yet: their tallies are
    // added with them (`db::tallies`; the triggers keep every later change).
    let tally = |dim, key: String, n| tallies::Added {
        scope: to.campaign,
        dim,
        key,
        n,
        amount: 0,
    };
    let n = i64::try_from(added).unwrap_or(i64::MAX);
    let mut added_tallies = vec![tally(
        Dim::RecipientStatus,
        RecipientStatus::Pending.as_str().to_owned(),
        n,
    )];
    added_tallies.extend(
        by_market
            .into_iter()
            .map(|(market, n)| tally(Dim::RecipientUnqueued, market, n)),
    );
    if added > 0 {
        tallies::add(&*txn, added_tallies).await?;
    }
    // Last, just before the commit: still a draft or scheduled, and its audience revision
    // moves, so a send priced before this step sees the audience changed. On PostgreSQL the
    // bump locks the campaign row until the commit; taken last, it is held for a moment,
    // so steps write side by side, and a send that commits first makes this update find
    // no row and the step roll back whole.
    let open = campaign::Entity::update_many()
        .col_expr(
            campaign::Column::AudienceRev,
            Expr::col(campaign::Column::AudienceRev).add(1),
        )
        .filter(campaign::Column::Id.eq(to.campaign))
        .filter(campaign::Column::Status.is_in([CampaignStatus::Draft, CampaignStatus::Scheduled]))
        .exec(&*txn)
        .await?;
    if open.rows_affected == 0 {
        return Err(campaign_error(CampaignError::InvalidState));
    }
    txn.commit().await?;
    Ok(added)
}

/// The organisation's count of contact deletes, shared-locked (on PostgreSQL) until `conn`'s
/// transaction ends, so no contact of it is deleted meanwhile.
async fn contact_deletes(conn: &impl ConnectionTrait, org: Uuid) -> Result<Option<i64>, DbErr> {
    crate::db::for_share(
        conn.get_database_backend(),
        organization::Entity::find_by_id(org)
            .select_only()
            .column(organization::Column::ContactDeletes),
    )
    .into_tuple()
    .one(conn)
    .await
}

/// The contacts of `rows` that still exist.
async fn live_contacts(
    conn: &impl ConnectionTrait,
    rows: &[recipient::ActiveModel],
) -> Result<HashSet<Uuid>, DbErr> {
    let ids: Vec<Uuid> = rows
        .iter()
        .filter_map(|r| r.contact_id.try_as_ref().copied())
        .collect();
    let mut live = HashSet::with_capacity(ids.len());
    for chunk in ids.chunks(1000) {
        let found: Vec<Uuid> = contact::Entity::find()
            .select_only()
            .column(contact::Column::Id)
            .filter(contact::Column::Id.is_in(chunk.iter().copied()))
            .into_tuple()
            .all(conn)
            .await?;
        live.extend(found);
    }
    Ok(live)
}

/// `POST /campaigns/{id}/recipients`: adds the eligible contacts of one source (consent
/// given, not opted out, with a phone); unpriceable ones are added and will fail uncharged.
///
/// The source is read and written a step at a time, each step in its own transaction that
/// last checks (and on PostgreSQL locks) the campaign is still a draft or scheduled, so a
/// concurrent send either sees a step whole or makes it roll back. A send that wins half
/// way leaves the steps committed before it in the audience, charged with the rest, and this call
/// answers 400 (the campaign is no longer in a state that takes an audience).
pub async fn add_audience(
    state: &AppState,
    org: Uuid,
    id: Uuid,
    body: Audience,
) -> ApiResult<AudienceResult> {
    let source = rules::audience_source(&body).map_err(ApiError::invalid)?;
    let conn = &state.db.conn;
    let c = load(conn, org, id).await?;
    open_for_audience(&c)?;
    if let AudienceSource::Stage(stage) = source
        && crate::db::lookups::stage(conn, org, stage).await?.is_none()
    {
        return Err(ApiError::invalid(
            "lifecycleStageId must be a lifecycle stage of this organization",
        ));
    }
    let (card, contact_deletes) = match organization::Entity::find_by_id(org).unique(conn).await? {
        Some(o) => (sending::rate_card(&o), o.contact_deletes),
        None => (RateCard::shipped().clone(), 0),
    };
    let to = Target {
        org,
        campaign: id,
        contact_deletes,
    };
    let mut result = AudienceResult::default();
    let cursor = match &source {
        AudienceSource::Contacts(ids) => {
            let mut ids = ids.clone();
            ids.sort_unstable();
            ids.dedup();
            Cursor::Listed(ids)
        }
        _ => Cursor::After(None),
    };
    let step = Ord::max(state.settings.audience_step, 1);
    // Steps are read in order (each read starts past the last) and written as they come, a
    // read running beside the writes: one write at a time where the database has one
    // writer, several on PostgreSQL, where each step's index inserts then use a backend of
    // their own.
    let writes = if state.db.single_writer() {
        1
    } else {
        Ord::max(state.settings.audience_writes, 1)
    };
    let reader = Reader {
        conn,
        org,
        source: &source,
        cursor,
        step,
    };
    // Boxed: the compiler cannot otherwise prove the handler's future `Send` through the
    // stream's borrowed reader (rust-lang/rust#64552).
    let steps = futures::stream::try_unfold(reader, Reader::next).boxed();
    let now = state.now_ms();
    let added = steps
        .map_ok(|contacts| {
            result.total += contacts.len() as u64;
            let rows = recipients_of(&mut result, contacts, &card, c.id, org, now);
            result.eligible += rows.len() as u64;
            write_step(state, to, rows)
        })
        // One slot more than the writes: the next step is read while they run.
        .try_buffer_unordered(writes + 1)
        .try_fold(0, |sum, added| async move { Ok(sum + added) })
        .await?;
    result.added = added;
    result.total_recipients = crate::db::campaigns::count(conn, id).await?.stats.total;
    result.already_in = result.eligible - result.added;
    Ok(result)
}

fn open_for_audience(c: &campaign::Model) -> ApiResult<()> {
    match c.status {
        CampaignStatus::Draft | CampaignStatus::Scheduled => Ok(()),
        _ => Err(campaign_error(CampaignError::InvalidState)),
    }
}

/// The recipients one step of contacts gives (the eligible ones, with their market), and
/// why the others were left out, counted into `result`.
fn recipients_of(
    result: &mut AudienceResult,
    step: Vec<AudienceRow>,
    card: &RateCard,
    campaign: Uuid,
    org: Uuid,
    now: i64,
) -> Vec<recipient::ActiveModel> {
    let mut rows = Vec::with_capacity(step.len());
    for m in step {
        let address = match messageable(m.opted_out, m.consent_given, m.address()) {
            Ok(address) => address,
            Err(Ineligible::NoPhone) => {
                result.without_phone += 1;
                continue;
            }
            Err(Ineligible::OptedOut | Ineligible::NoConsent) => {
                result.opted_out += 1;
                continue;
            }
        };
        let market = card.market_for_address(&address).map(|r| r.market.clone());
        if market.is_none() {
            result.unpriceable += 1;
        }
        rows.push(recipient::ActiveModel {
            id: Set(Uuid::now_v7()),
            organization_id: Set(org),
            campaign_id: Set(campaign),
            contact_id: Set(m.id),
            // The address it is sent to: a phone, or a business-scoped user id.
            phone: Set(address.stored().to_owned()),
            market: Set(market),
            status: Set(RecipientStatus::Pending),
            cost_micros: Set(0),
            covered_by_allowance: Set(false),
            created_at: Set(now),
            // Null or defaulted until the recipient is charged and sent: left out of the
            // insert, which halves what a million-recipient audience binds.
            ..Default::default()
        });
    }
    rows
}
