//! The counting every report shares: its context (organisation, period, time zone), counts
//! between two instants, per day and per id, and stage entries read from the timeline.

use crate::db::Unique;
use crate::db::entities::{organization, timeline_entry};
use crate::db::tenant::in_org;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use chrono::{Duration, NaiveDate};
use sea_orm::sea_query::{Alias, Expr, ExprTrait};
use sea_orm::{
    ColumnTrait, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter, QuerySelect, Select,
};
use std::collections::HashMap;
use uuid::Uuid;
use wm_core::time::{date_start, local_date};
use wm_types::reports::*;

/// Every local midnight lies a whole number of these from the period's start: zone offsets
/// and their daylight-saving shifts are multiples of 15 minutes.
const QUARTER_HOUR_MS: i64 = 15 * 60 * 1000;

/// A report's period and how to place an instant in it.
pub(super) struct Ctx {
    pub(super) org: Uuid,
    pub(super) tz: String,
    pub(super) days: Vec<NaiveDate>,
    pub(super) start: i64,
    pub(super) end: i64,
}

impl Ctx {
    pub(super) fn slot(&self, ms: i64) -> Option<usize> {
        if ms < self.start || ms >= self.end {
            return None;
        }
        let d = local_date(&self.tz, ms);
        self.days.iter().position(|x| *x == d)
    }

    pub(super) fn period(&self) -> Period {
        Period {
            from: self.days.first().map(|d| d.to_string()).unwrap_or_default(),
            to: self.days.last().map(|d| d.to_string()).unwrap_or_default(),
            timezone: self.tz.clone(),
        }
    }

    /// `col` falls in the period.
    pub(super) fn holds(&self, col: impl ColumnTrait) -> Expr {
        col.gte(self.start).and(col.lt(self.end))
    }

    pub(super) fn series<D>(&self, make: impl Fn(String) -> D) -> Vec<D> {
        self.days.iter().map(|d| make(d.to_string())).collect()
    }
}

pub(super) async fn ctx(state: &AppState, org: Uuid, q: &ReportQuery) -> ApiResult<Ctx> {
    let o = organization::Entity::find_by_id(org)
        .unique(&state.db.conn)
        .await?
        .ok_or_else(|| ApiError::not_found("Organization"))?;
    let today = local_date(&o.timezone, state.now_ms());
    let (from, to) = wm_core::reports::period(q, today).map_err(ApiError::invalid)?;
    Ok(Ctx {
        org,
        start: date_start(&o.timezone, from),
        end: date_start(&o.timezone, to + Duration::days(1)),
        days: wm_core::reports::days(from, to),
        tz: o.timezone,
    })
}

pub(super) fn stage_moves(rows: &[timeline_entry::Model]) -> Vec<(i64, String)> {
    rows.iter()
        .filter_map(|r| {
            let v: serde_json::Value = serde_json::from_str(&r.data).ok()?;
            Some((r.at, v.get("to")?.as_str()?.to_owned()))
        })
        .collect()
}

pub(super) async fn stage_entries(
    conn: &impl ConnectionTrait,
    c: &Ctx,
) -> ApiResult<Vec<(i64, String)>> {
    let rows = in_org::<timeline_entry::Entity>(c.org)
        .filter(timeline_entry::Column::EntryType.eq("stage"))
        .filter(c.holds(timeline_entry::Column::At))
        .all(conn)
        .await?;
    Ok(stage_moves(&rows))
}

/// How many rows of `E` in `org` have `col` in `[from, to)`: one `COUNT`, an index range
/// when (organisation, `col`) is indexed.
pub(super) async fn count_between<E, C>(
    conn: &impl ConnectionTrait,
    (org_col, col): (C, C),
    org: Uuid,
    from: i64,
    to: i64,
) -> ApiResult<u64>
where
    E: EntityTrait<Column = C>,
    E::Model: Sync,
    C: ColumnTrait,
{
    Ok(E::find()
        .filter(org_col.eq(org))
        .filter(col.gte(from))
        .filter(col.lt(to))
        .count(conn)
        .await?)
}

/// How many rows of `E` fall on each day of the period (by `col`, in the organisation's
/// time zone): one [`count_between`] per day, instead of every row's time brought back and
/// placed by hand (a million contacts made in the period took over a second that way).
pub(super) async fn day_counts<E, C>(
    conn: &impl ConnectionTrait,
    cols: (C, C),
    org: Uuid,
    c: &Ctx,
) -> ApiResult<Vec<u64>>
where
    E: EntityTrait<Column = C>,
    E::Model: Sync,
    C: ColumnTrait,
{
    let mut bounds: Vec<i64> = c.days.iter().map(|d| date_start(&c.tz, *d)).collect();
    bounds.push(c.end);
    let mut counts = Vec::with_capacity(c.days.len());
    for day in bounds.windows(2) {
        counts.push(count_between::<E, C>(conn, cols, org, day[0], day[1]).await?);
    }
    Ok(counts)
}

/// How many of `rows` (already narrowed to the organisation, and to more when asked) have
/// `col` on each day of the period, counted by the database in one pass: rows are grouped by
/// the quarter hour since the period's start (an integer division; a year is 35,040 groups
/// at most), and each quarter hour is placed on its local day here — so a day of 23 or 25
/// hours is right, and only the groups come back, not the time of every row (a campaign to
/// a million people sent a million of them per status).
pub(super) async fn day_groups<E: EntityTrait>(
    conn: &impl ConnectionTrait,
    rows: Select<E>,
    col: E::Column,
    c: &Ctx,
) -> ApiResult<Vec<u64>> {
    let quarter = Expr::col(col).sub(c.start).div(QUARTER_HOUR_MS);
    let groups: Vec<(i64, i64)> = rows
        .select_only()
        .column_as(quarter, "quarter")
        .column_as(Expr::col(col).count(), "n")
        .filter(c.holds(col))
        // By its name: PostgreSQL would not see `(col - $1) / $2` and `(col - $5) / $6` as
        // one expression.
        .group_by(Expr::col(Alias::new("quarter")))
        .into_tuple()
        .all(conn)
        .await?;
    let mut counts = vec![0u64; c.days.len()];
    for (quarter, n) in groups {
        let at = c
            .start
            .saturating_add(quarter.saturating_mul(QUARTER_HOUR_MS));
        if let Some(day) = c.slot(at) {
            counts[day] += u64::try_from(n).unwrap_or(0);
        }
    }
    Ok(counts)
}

/// How many of `rows` have each value of `col` (an id; `None` counts the rows without one):
/// one grouped `COUNT`.
pub(super) async fn counts_by<E: EntityTrait>(
    conn: &impl ConnectionTrait,
    rows: Select<E>,
    col: E::Column,
) -> ApiResult<HashMap<Option<Uuid>, u64>> {
    let groups: Vec<(Option<Uuid>, i64)> = rows
        .select_only()
        .column(col)
        .column_as(Expr::val(1).count(), "n")
        .group_by(col)
        .into_tuple()
        .all(conn)
        .await?;
    Ok(groups
        .into_iter()
        .map(|(id, n)| (id, u64::try_from(n).unwrap_or(0)))
        .collect())
}
