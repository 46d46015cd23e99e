//! The reports about contacts: who came (`commercial`) and how they moved between lifecycle
//! stages (`lifecycle`).

use std::collections::HashMap;

use sea_orm::QueryFilter;
use uuid::Uuid;
use wm_types::enums::StageCategory;
use wm_types::reports::*;

use super::query::{counts_by, ctx, day_counts, stage_entries};
use crate::db::entities::{contact, deal, lifecycle_stage};
use crate::db::tenant::in_org;
use crate::error::ApiResult;
use crate::state::AppState;

/// `GET /reports/commercial`.
pub async fn commercial(
    state: &AppState,
    org: Uuid,
    q: &ReportQuery,
) -> ApiResult<Report<CommercialTotals, CommercialDay>> {
    let conn = &state.db.conn;
    let c = ctx(state, org, q).await?;
    let mut series = c.series(|date| CommercialDay {
        date,
        ..Default::default()
    });
    let mut t = CommercialTotals::default();
    let made = day_counts::<contact::Entity, _>(
        conn,
        (contact::Column::OrganizationId, contact::Column::CreatedAt),
        org,
        &c,
    )
    .await?;
    for (day, n) in series.iter_mut().zip(made) {
        day.new_contacts = n;
        t.new_contacts += n;
    }
    let customer_stages: Vec<String> = crate::db::lookups::stages(conn, org)
        .await?
        .into_iter()
        .filter(|s| s.category == StageCategory::Customer)
        .map(|s| s.name)
        .collect();
    for (ms, to) in stage_entries(conn, &c).await? {
        if customer_stages.contains(&to)
            && let Some(i) = c.slot(ms)
        {
            series[i].new_customers += 1;
            t.new_customers += 1;
        }
    }
    let deals = in_org::<deal::Entity>(org)
        .filter(c.holds(deal::Column::CreatedAt))
        .all(conn)
        .await?;
    for d in deals {
        if let Some(i) = c.slot(d.created_at) {
            series[i].deals_created += 1;
            series[i].deals_value.0 += d.value_micros;
            t.deals_created += 1;
            t.deals_value.0 += d.value_micros;
            if d.status == wm_types::enums::DealStatus::Won {
                t.deals_won += 1;
                t.deals_won_value.0 += d.value_micros;
            }
        }
    }
    Ok(Report {
        period: c.period(),
        totals: t,
        series,
    })
}

/// `GET /reports/lifecycle`.
pub async fn lifecycle(
    state: &AppState,
    org: Uuid,
    q: &ReportQuery,
) -> ApiResult<Report<LifecycleTotals, LifecycleDay>> {
    let conn = &state.db.conn;
    let c = ctx(state, org, q).await?;
    let mut series = c.series(|date| LifecycleDay {
        date,
        ..Default::default()
    });
    let moves = stage_entries(conn, &c).await?;
    let mut entered: HashMap<String, u64> = HashMap::new();
    for (ms, to) in &moves {
        if let Some(i) = c.slot(*ms) {
            series[i].stage_changes += 1;
            *entered.entry(to.clone()).or_default() += 1;
        }
    }
    let stages: Vec<lifecycle_stage::Model> = crate::db::lookups::stages(conn, org).await?;
    // Contacts per stage (and without one), counted by the database.
    let per = counts_by(
        conn,
        in_org::<contact::Entity>(org),
        contact::Column::LifecycleStageId,
    )
    .await?;
    let mut by_stage: Vec<StageCount> = stages
        .iter()
        .map(|s| StageCount {
            stage_id: Some(s.id),
            stage: s.name.clone(),
            category: Some(s.category.as_str().to_owned()),
            contacts: per.get(&Some(s.id)).copied().unwrap_or(0),
            entered: entered.get(&s.name).copied().unwrap_or(0),
        })
        .collect();
    by_stage.push(StageCount {
        stage_id: None,
        stage: "No stage".into(),
        category: None,
        contacts: per.get(&None).copied().unwrap_or(0),
        entered: 0,
    });
    let totals = LifecycleTotals {
        stage_changes: series.iter().map(|d| d.stage_changes).sum(),
        by_stage,
    };
    Ok(Report {
        period: c.period(),
        totals,
        series,
    })
}
