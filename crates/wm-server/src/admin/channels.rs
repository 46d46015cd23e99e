//! `/admin/organizations/{orgId}/channels`: channel types active in the organisation.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use sea_orm::Order;
use wm_types::admin::{Channel, CreateChannel};
use wm_types::lookups::List;

use super::{list_in_org, org_of};
use crate::db::{self, entities::channel};
use crate::error::{ApiError, ApiResult};
use crate::extract::{NoQuery, ValidatedJson};
use crate::services::organizations as svc;
use crate::state::AppState;
use crate::views::channel_view;

/// The channel routes.
pub fn router() -> Router<AppState> {
    Router::new().route(
        "/admin/organizations/{org_id}/channels",
        get(list).post(create),
    )
}

async fn create(
    State(s): State<AppState>,
    Path(org): Path<String>,
    _: NoQuery,
    ValidatedJson(body): ValidatedJson<CreateChannel>,
) -> ApiResult<(StatusCode, Json<Channel>)> {
    let org = org_of(&s, &org).await?;
    let txn = s.db.write().await?;
    if db::lookups::active_channel(&*txn, org, body.channel_type)
        .await?
        .is_some()
    {
        return Err(ApiError::conflict(format!(
            "A {} channel is already active in this organization.",
            body.channel_type
        )));
    }
    let ch = svc::add_channel(&*txn, org, body.channel_type, s.now_ms()).await?;
    txn.commit().await?;
    crate::changes::publish(&s, crate::changes::Change::Org(org)).await;
    Ok((StatusCode::CREATED, Json(channel_view(ch))))
}

async fn list(
    State(s): State<AppState>,
    Path(org): Path<String>,
    _: NoQuery,
) -> ApiResult<Json<List<Channel>>> {
    list_in_org::<channel::Entity, _>(
        &s,
        &org,
        (channel::Column::CreatedAt, Order::Asc),
        channel_view,
    )
    .await
}
