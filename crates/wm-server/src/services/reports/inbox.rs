//! The reports about the people answering customers: each member's work (`team`) and the
//! conversations opened and resolved (`conversations`).

use std::collections::HashMap;

use sea_orm::sea_query::{Alias, Expr, ExprTrait};
use sea_orm::{ColumnTrait, PaginatorTrait, QueryFilter, QuerySelect};
use uuid::Uuid;
use wm_types::enums::ConversationStatus;
use wm_types::reports::*;

use super::query::{counts_by, ctx, day_groups};
use crate::db::entities::{contact, conversation, note, user};
use crate::db::tenant::in_org;
use crate::error::ApiResult;
use crate::state::AppState;

/// `GET /reports/team`.
pub async fn team(
    state: &AppState,
    org: Uuid,
    q: &ReportQuery,
) -> ApiResult<Report<TeamTotals, TeamDay>> {
    let conn = &state.db.conn;
    let c = ctx(state, org, q).await?;
    let mut series = c.series(|date| TeamDay {
        date,
        ..Default::default()
    });
    let users: Vec<user::Model> = crate::db::lookups::users(conn, org).await?;
    let mut members: Vec<TeamMember> = users
        .iter()
        .map(|u| TeamMember {
            user_id: u.id,
            full_name: u.full_name.clone(),
            contacts_owned: 0,
            notes_written: 0,
            conversations_assigned: 0,
            conversations_resolved: 0,
        })
        .collect();
    let owned = counts_by(
        conn,
        in_org::<contact::Entity>(org),
        contact::Column::OwnerId,
    )
    .await?;
    let written = counts_by(
        conn,
        in_org::<note::Entity>(org).filter(c.holds(note::Column::CreatedAt)),
        note::Column::AuthorId,
    )
    .await?;
    let assigned = counts_by(
        conn,
        in_org::<conversation::Entity>(org)
            .filter(conversation::Column::Status.ne(ConversationStatus::Resolved)),
        conversation::Column::AssignedToUserId,
    )
    .await?;
    let resolved = counts_by(
        conn,
        in_org::<conversation::Entity>(org).filter(c.holds(conversation::Column::ResolvedAt)),
        conversation::Column::AssignedToUserId,
    )
    .await?;
    for m in &mut members {
        let of = |counts: &HashMap<Option<Uuid>, u64>| {
            counts.get(&Some(m.user_id)).copied().unwrap_or(0)
        };
        m.contacts_owned = of(&owned);
        m.notes_written = of(&written);
        m.conversations_assigned = of(&assigned);
        m.conversations_resolved = of(&resolved);
    }
    let notes = day_groups(
        conn,
        in_org::<note::Entity>(org),
        note::Column::CreatedAt,
        &c,
    )
    .await?;
    // Resolved by the organisation's members (an assignee), per day.
    let member_ids: Vec<Uuid> = members.iter().map(|m| m.user_id).collect();
    let resolved_days = day_groups(
        conn,
        in_org::<conversation::Entity>(org)
            .filter(conversation::Column::AssignedToUserId.is_in(member_ids)),
        conversation::Column::ResolvedAt,
        &c,
    )
    .await?;
    for ((d, notes), resolved) in series.iter_mut().zip(notes).zip(resolved_days) {
        d.notes_written = notes;
        d.conversations_resolved = resolved;
    }
    let totals = TeamTotals {
        notes_written: series.iter().map(|d| d.notes_written).sum(),
        conversations_resolved: series.iter().map(|d| d.conversations_resolved).sum(),
        members,
    };
    Ok(Report {
        period: c.period(),
        totals,
        series,
    })
}

/// `GET /reports/conversations`.
pub async fn conversations(
    state: &AppState,
    org: Uuid,
    q: &ReportQuery,
) -> ApiResult<Report<ConversationTotals, ConversationDay>> {
    let conn = &state.db.conn;
    let c = ctx(state, org, q).await?;
    let mut series = c.series(|date| ConversationDay {
        date,
        ..Default::default()
    });
    let all = || in_org::<conversation::Entity>(org);
    let opened = day_groups(conn, all(), conversation::Column::CreatedAt, &c).await?;
    let resolved = day_groups(conn, all(), conversation::Column::ResolvedAt, &c).await?;
    let mut t = ConversationTotals {
        open_now: all()
            .filter(conversation::Column::Status.eq(ConversationStatus::Open))
            .count(conn)
            .await?,
        ..Default::default()
    };
    for ((d, opened), resolved) in series.iter_mut().zip(opened).zip(resolved) {
        d.opened = opened;
        d.resolved = resolved;
        t.opened += opened;
        t.resolved += resolved;
    }
    // The mean time to resolve those resolved in the period, summed by the database (as
    // BIGINT: PostgreSQL's SUM of a BIGINT is NUMERIC).
    let took = Expr::col(conversation::Column::ResolvedAt)
        .sub(Expr::col(conversation::Column::CreatedAt))
        .sum()
        .cast_as(Alias::new("BIGINT"));
    let (total_ms, n): (Option<i64>, i64) = all()
        .select_only()
        .column_as(took, "took")
        .column_as(Expr::col(conversation::Column::Id).count(), "n")
        .filter(c.holds(conversation::Column::ResolvedAt))
        .into_tuple()
        .one(conn)
        .await?
        .unwrap_or((None, 0));
    if n > 0 {
        let avg = total_ms.unwrap_or(0) / n;
        t.avg_resolution_minutes = u64::try_from(avg / 60_000).unwrap_or(0);
    }
    Ok(Report {
        period: c.period(),
        totals: t,
        series,
    })
}
