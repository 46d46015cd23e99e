//! Campaign and recipient queries shared by the API and the sending worker.

use std::collections::HashMap;

use sea_orm::sea_query::{Expr, Func, SimpleExpr};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DbErr, EntityTrait, FromQueryResult, QueryFilter, QuerySelect,
};
use uuid::Uuid;
use wm_types::campaigns::{CampaignStats, RecipientFilter};
use wm_types::enums::RecipientStatus;

use super::entities::recipient;

#[derive(Debug, FromQueryResult)]
struct StatusCount {
    campaign_id: Uuid,
    status: RecipientStatus,
    n: i64,
}

/// The funnel of several campaigns: sent, delivered and read count recipients that
/// reached at least that step.
pub async fn stats(
    conn: &impl ConnectionTrait,
    campaigns: Vec<Uuid>,
) -> Result<HashMap<Uuid, CampaignStats>, DbErr> {
    let mut out: HashMap<Uuid, CampaignStats> = HashMap::new();
    if campaigns.is_empty() {
        return Ok(out);
    }
    let rows = recipient::Entity::find()
        .select_only()
        .column(recipient::Column::CampaignId)
        .column(recipient::Column::Status)
        .column_as(
            SimpleExpr::from(Func::count(Expr::col(recipient::Column::Id))),
            "n",
        )
        .filter(recipient::Column::CampaignId.is_in(campaigns))
        .group_by(recipient::Column::CampaignId)
        .group_by(recipient::Column::Status)
        .into_model::<StatusCount>()
        .all(conn)
        .await?;
    for r in rows {
        let s = out.entry(r.campaign_id).or_default();
        let n = u64::try_from(r.n).unwrap_or(0);
        s.total += n;
        match r.status {
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
    for s in out.values_mut() {
        s.progress_pct = if s.total == 0 {
            0.0
        } else {
            ((s.total - s.pending) as f64 * 1000.0 / s.total as f64).round() / 10.0
        };
    }
    Ok(out)
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
