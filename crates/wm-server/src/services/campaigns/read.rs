//! A campaign as read: its row (locked when it is about to be charged), its detail with the
//! estimate of what is left to send, and how a campaign error is answered.

use crate::db::Unique;
use crate::db::entities::campaign;
use crate::db::tenant::find_in_org;
use crate::error::{ApiError, ApiResult};
use crate::services::sending;
use crate::state::AppState;
use crate::views::campaigns as campaign_views;
use axum::http::StatusCode;
use sea_orm::ConnectionTrait;
use uuid::Uuid;
use wm_core::campaigns::CampaignError;
use wm_types::campaigns::Campaign;

pub(super) const NOT_FOUND: &str = "Campaign";

/// A campaign error as the API answers it: 400, the spec's message, a code when it has one.
pub fn campaign_error(e: CampaignError) -> ApiError {
    match e.code() {
        Some(code) => ApiError::business(StatusCode::BAD_REQUEST, Some(code), e.message()),
        None => ApiError::bad_request(e.message()),
    }
}

pub(super) async fn load(
    conn: &impl ConnectionTrait,
    org: Uuid,
    id: Uuid,
) -> ApiResult<campaign::Model> {
    find_in_org::<campaign::Entity>(org, id)
        .unique(conn)
        .await?
        .ok_or_else(|| ApiError::not_found(NOT_FOUND))
}

/// The campaign, its row locked until the caller's transaction ends on PostgreSQL (SQLite
/// has one writer): an audience step cannot commit between this read and the caller's
/// commit, so what the caller priced is what it charges.
pub(super) async fn load_locked(
    conn: &impl ConnectionTrait,
    org: Uuid,
    id: Uuid,
) -> ApiResult<campaign::Model> {
    crate::db::tenant::find_locked::<campaign::Entity>(conn, org, id)
        .await?
        .ok_or_else(|| ApiError::not_found(NOT_FOUND))
}

pub(super) async fn detail(state: &AppState, c: &campaign::Model) -> ApiResult<Campaign> {
    detail_in(&state.db.conn, c, state.now_ms()).await
}

/// The detail of `c` read through `conn` (inside a transaction: what it wrote).
pub(super) async fn detail_in(
    conn: &impl ConnectionTrait,
    c: &campaign::Model,
    now: i64,
) -> ApiResult<Campaign> {
    let mut v = campaign_views::load(conn, std::slice::from_ref(c), true)
        .await?
        .pop()
        .ok_or_else(|| ApiError::not_found(NOT_FOUND))?;
    // A large batch being queued is paid already: nothing is left to estimate.
    v.estimated_cost = Some(if sending::is_open(c) {
        Some(wm_types::Money(0))
    } else {
        let p = sending::price_all(conn, c, sending::READ_STEP, now).await?;
        (p.count > 0 || v.stats.total > 0).then_some(p.total)
    });
    Ok(v)
}

/// `GET /campaigns/{id}`.
pub async fn get(state: &AppState, org: Uuid, id: Uuid) -> ApiResult<Campaign> {
    let c = load(&state.db.conn, org, id).await?;
    detail(state, &c).await
}
