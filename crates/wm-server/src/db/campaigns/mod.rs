//! Campaign and recipient queries shared by the API and the sending worker; the list's
//! filters, tabs and page are in [`list`].

pub mod list;

use std::collections::HashMap;

use sea_orm::sea_query::SelectStatement;
use sea_orm::{ConnectionTrait, DbErr};
use uuid::Uuid;
use wm_types::campaigns::{CampaignStats, RecipientFilter};
use wm_types::enums::RecipientStatus;

use super::tallies::{self, Dim, Tally};

/// A campaign's stored variables (an error logged and counted, and empty, when corrupt).
pub fn variables_of(
    c: &crate::db::entities::campaign::Model,
) -> serde_json::Map<String, serde_json::Value> {
    crate::db::stored::json("campaigns.variables", c.id, &c.variables)
}

/// A campaign's recipients by status, and what they cost, from the maintained tallies.
#[derive(Debug, Default, Clone)]
pub struct Counted {
    /// The funnel.
    pub stats: CampaignStats,
    /// Recipients by status.
    pub by_status: HashMap<RecipientStatus, u64>,
    /// What its recipients were charged, net of refunds (micro-units).
    pub cost_micros: i64,
}

impl Counted {
    /// Recipients in any of `statuses` (all of them for `None`).
    pub fn of(&self, statuses: Option<&[RecipientStatus]>) -> u64 {
        match statuses {
            None => self.stats.total,
            Some(s) => s.iter().filter_map(|s| self.by_status.get(s)).sum(),
        }
    }
}

/// Adds status tallies into a campaign's funnel: sent, delivered and read count recipients
/// that reached at least that step.
fn add(c: &mut Counted, status: RecipientStatus, n: u64, amount: i64) {
    *c.by_status.entry(status).or_default() += n;
    c.cost_micros += amount;
    let s = &mut c.stats;
    s.total += n;
    match status {
        RecipientStatus::Pending => s.pending += n,
        RecipientStatus::Failed => s.failed += n,
        RecipientStatus::Unknown => {}
        status => {
            s.sent += n;
            if matches!(
                status,
                RecipientStatus::Delivered | RecipientStatus::Read | RecipientStatus::Replied
            ) {
                s.delivered += n;
            }
            if matches!(status, RecipientStatus::Read | RecipientStatus::Replied) {
                s.read += n;
            }
            if status == RecipientStatus::Replied {
                s.replied += n;
            }
        }
    }
}

fn counted(rows: Vec<Tally>) -> HashMap<Uuid, Counted> {
    let mut out: HashMap<Uuid, Counted> = HashMap::new();
    for t in rows {
        let status = RecipientStatus::parse(&t.key).unwrap_or(RecipientStatus::Unknown);
        add(
            out.entry(t.scope).or_default(),
            status,
            u64::try_from(t.n).unwrap_or(0),
            t.amount,
        );
    }
    for c in out.values_mut() {
        let s = &mut c.stats;
        s.progress_pct = if s.total == 0 {
            0.0
        } else {
            ((s.total - s.pending) as f64 * 1000.0 / s.total as f64).round() / 10.0
        };
    }
    out
}

/// The recipients of several campaigns by status, with the funnel and the cost of each.
pub async fn counts(
    conn: &impl ConnectionTrait,
    campaigns: &[Uuid],
) -> Result<HashMap<Uuid, Counted>, DbErr> {
    Ok(counted(
        tallies::read(conn, Dim::RecipientStatus, campaigns).await?,
    ))
}

/// One campaign's recipients by status (all zero for a campaign without any).
pub async fn count(conn: &impl ConnectionTrait, campaign: Uuid) -> Result<Counted, DbErr> {
    Ok(counts(conn, &[campaign])
        .await?
        .remove(&campaign)
        .unwrap_or_default())
}

/// The recipients of every campaign `campaigns` selects (a query of campaign ids), added
/// up: a campaign summary's funnel and spend.
pub async fn count_over(
    conn: &impl ConnectionTrait,
    campaigns: SelectStatement,
) -> Result<Counted, DbErr> {
    Ok(
        counted(tallies::read_over(conn, Dim::RecipientStatus, campaigns).await?)
            .remove(&Uuid::nil())
            .unwrap_or_default(),
    )
}

/// The funnel of several campaigns.
pub async fn stats(
    conn: &impl ConnectionTrait,
    campaigns: Vec<Uuid>,
) -> Result<HashMap<Uuid, CampaignStats>, DbErr> {
    Ok(counts(conn, &campaigns)
        .await?
        .into_iter()
        .map(|(id, c)| (id, c.stats))
        .collect())
}

/// The filter of the recipients list (and of `stats`' meaning).
pub fn filter_statuses(filter: RecipientFilter) -> Option<Vec<RecipientStatus>> {
    let s = |v: &[RecipientStatus]| Some(v.to_vec());
    use RecipientFilter as F;
    use RecipientStatus as R;
    match filter {
        F::Delivered => s(&[R::Delivered, R::Read, R::Replied]),
        F::Read => s(&[R::Read, R::Replied]),
        F::Replied => s(&[R::Replied]),
        F::Failed => s(&[R::Failed]),
        F::Pending => s(&[R::Pending]),
        F::All => None,
    }
}

/// How many recipients matching `condition` each market (`""`: none) has: one grouped read
/// for the few rows an index narrows `condition` to (an audience step's conflicting batch,
/// a campaign's blocked recipients).
pub async fn recipients_by_market(
    conn: &impl ConnectionTrait,
    condition: sea_orm::Condition,
) -> Result<Vec<(String, i64)>, DbErr> {
    use super::entities::recipient;
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QuerySelect};
    let rows: Vec<(Option<String>, i64)> = recipient::Entity::find()
        .select_only()
        .column(recipient::Column::Market)
        .column_as(recipient::Column::Id.count(), "n")
        .filter(condition)
        .group_by(recipient::Column::Market)
        .into_tuple()
        .all(conn)
        .await?;
    Ok(rows
        .into_iter()
        .map(|(m, n)| (m.unwrap_or_default(), n))
        .collect())
}
